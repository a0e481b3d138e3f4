"""PolicyRule: one RBAC rule a controller needs, declared next to the controller's code.

Each controller module exports `RBAC_RULES: tuple[PolicyRule, ...]`; the Helm chart and its
test derive the ClusterRole (or Roles) from them, so the code is the single source of truth.
Invariant: rules are immutable values; `merge_rules` is deterministic (sorted output).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete")


@dataclass(frozen=True, slots=True)
class PolicyRule:
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The rule as it appears in a Role or ClusterRole."""
        return {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }


#: The EventRecorder posts core/v1 Events and patches them to aggregate repeats.
EVENTS_RULE = PolicyRule(("",), ("events",), ("create", "patch"))


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
