"""RBAC for the bundled controllers: the runtime's PolicyRule, and what Events need.

`PolicyRule` and `merge_rules` live in `asyncop.runtime.rbac` (every operator uses them);
they are re-exported here for the bundled controllers. Invariant: `EVENTS_RULES` is the
EventRecorder's own declaration, so the two never disagree.
"""

from __future__ import annotations

from asyncop.runtime import recorder
from asyncop.runtime.rbac import READ, WRITE, PolicyRule, merge_rules

#: What the EventRecorder needs (core/v1 Events, create + patch to aggregate repeats).
EVENTS_RULES: tuple[PolicyRule, ...] = recorder.RBAC_RULES

__all__ = ["EVENTS_RULES", "READ", "WRITE", "PolicyRule", "merge_rules"]
