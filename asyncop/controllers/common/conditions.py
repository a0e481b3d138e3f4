"""Status conditions (metav1.Condition): build one, and set it in a list.

Invariant: `lastTransitionTime` changes only when a condition's `status` changes, so
re-running a reconcile with the same outcome writes an identical status (and no write).
"""

from __future__ import annotations

from typing import Any

Condition = dict[str, Any]


def condition(
    type_: str, status: bool, *, reason: str, message: str, generation: int, now: str
) -> Condition:
    return {
        "type": type_,
        "status": "True" if status else "False",
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": now,
    }


def set_condition(conditions: list[Condition] | None, new: Condition) -> list[Condition]:
    """A new list with `new` replacing the condition of the same type.

    The old `lastTransitionTime` is kept when the status did not change.
    """
    out: list[Condition] = []
    replaced = False
    for old in conditions or []:
        if old.get("type") != new["type"]:
            out.append(old)
            continue
        replaced = True
        merged = dict(new)
        if old.get("status") == new["status"] and old.get("lastTransitionTime"):
            merged["lastTransitionTime"] = old["lastTransitionTime"]
        out.append(merged)
    if not replaced:
        out.append(new)
    return out
