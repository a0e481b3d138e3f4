"""PolicyRule: one RBAC rule a controller needs, declared next to the controller's code.

Each controller module exports `RBAC_RULES: tuple[PolicyRule, ...]`; the Helm chart and its
test derive the ClusterRole (or Roles) from them, so the code is the single source of truth.
Invariant: rules are immutable values; `merge_rules` is deterministic (sorted output).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from asyncop.runtime import recorder

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete")


@dataclass(frozen=True, slots=True)
class PolicyRule:
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]

    @classmethod
    def from_dict(cls, rule: dict[str, list[str]]) -> PolicyRule:
        return cls(
            tuple(rule["apiGroups"]), tuple(rule["resources"]), tuple(rule["verbs"])
        )

    def to_dict(self) -> dict[str, Any]:
        """The rule as it appears in a Role or ClusterRole."""
        return {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }


#: What the EventRecorder needs (core/v1 Events, create + patch to aggregate repeats),
#: taken from the recorder itself so that the two never disagree.
EVENTS_RULES: tuple[PolicyRule, ...] = tuple(
    PolicyRule.from_dict(r) for r in recorder.RBAC_RULES
)


def merge_rules(rules: Iterable[PolicyRule]) -> list[PolicyRule]:
    """Union of rules, one rule per (group, resource) with the union of verbs, sorted."""
    verbs: dict[tuple[str, str], set[str]] = {}
    for rule in rules:
        for group in rule.api_groups:
            for resource in rule.resources:
                verbs.setdefault((group, resource), set()).update(rule.verbs)
    return [
        PolicyRule((group,), (resource,), tuple(sorted(v)))
        for (group, resource), v in sorted(verbs.items())
    ]
