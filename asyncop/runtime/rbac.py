"""PolicyRule: one RBAC rule, declared next to the code that needs it.

A Controller carries the rules its reconciler needs (`Controller(..., rbac=...)`) and adds,
by itself, read rules (get, list, watch) for every kind it watches; the EventRecorder and the
LeaderElector declare theirs as `RBAC_RULES`. `asyncop generate` and the Helm charts render
Roles from these declarations, so the code is the single source of truth for permissions.

Invariants: rules are immutable values; `merge_rules` is deterministic (one rule per
(group, resource), verbs sorted, rules sorted), so generated files are stable.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from asyncop.api import Kind, KindSource, kind_of

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete")


@dataclass(frozen=True, slots=True)
class PolicyRule:
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]

    @classmethod
    def for_(
        cls, kind: Kind | KindSource, *verbs: str, subresource: str = ""
    ) -> PolicyRule:
        """The rule granting `verbs` on `kind` (or on its `subresource`, e.g. "status")."""
        k = kind_of(kind)
        resource = f"{k.plural}/{subresource}" if subresource else k.plural
        return cls((k.group,), (resource,), tuple(verbs))

    @classmethod
    def from_dict(cls, rule: dict[str, list[str]]) -> PolicyRule:
        return cls(tuple(rule["apiGroups"]), tuple(rule["resources"]), tuple(rule["verbs"]))

    def to_dict(self) -> dict[str, Any]:
        """The rule as it appears in a Role or ClusterRole."""
        return {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }


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
