"""The JSON Patch (RFC 6902) that turns one JSON document into another.

Objects are diffed key by key (add / remove / recurse); lists and scalars that differ are
replaced whole (list diffs by index are fragile when a webhook and the API server disagree on
order). Keys are escaped per RFC 6901 (`~` → `~0`, `/` → `~1`). Invariant: applying
`diff(a, b)` to `a` gives `b`; equal documents give an empty patch.
"""

from __future__ import annotations

from typing import Any


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def diff(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in new.items():
            where = f"{path}/{_escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": where, "value": value})
            else:
                ops.extend(diff(old[key], value, where))
        return ops
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": path, "value": new}]


__all__ = ["diff"]
