"""Views: a stored object as served through one resource version.

Objects are stored once, in their storage version. Reading through another served version of
a custom resource follows the conversion strategy "None": the apiVersion is rewritten, the
object is pruned with the read version's schema (fields that version does not declare are
not shown) and that version's defaults are applied. Reads through the storage version only
apply defaults (a default added to the schema later shows up on read, as in kube).
Invariant: the stored object is never mutated; a view that differs from it is a deep copy
(or, for a plain apiVersion rewrite of a built-in, a shallow one sharing nested dicts).
"""

from __future__ import annotations

from typing import Any

import orjson

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.schema.checks import apply_defaults, prune
from asyncop.apiserver.storage.objects import as_version, copy_obj


class Views:
    """Turns stored objects into served ones; caches, per schema, whether it has defaults."""

    __slots__ = ("_defaults",)

    def __init__(self) -> None:
        self._defaults: dict[int, tuple[dict[str, Any], bool]] = {}

    def view(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        out = as_version(obj, rt)
        schema = rt.schema
        if not rt.is_custom or not schema:
            return out
        converted = out is not obj
        defaults = self._has_defaults(schema)
        if not converted and not defaults:
            return out
        out = copy_obj(out)
        if converted:
            prune(out, schema)
        if defaults:
            apply_defaults(out, schema)
        return out

    def _has_defaults(self, schema: dict[str, Any]) -> bool:
        key = id(schema)
        found = self._defaults.get(key)
        if found is None or found[0] is not schema:
            found = (schema, b'"default"' in orjson.dumps(schema))
            self._defaults[key] = found
        return found[1]


__all__ = ["Views"]
