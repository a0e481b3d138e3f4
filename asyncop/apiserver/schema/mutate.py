"""The two in-place steps that run before validation: pruning and defaulting (kube order).

`prune(obj, schema)` drops every field the structural schema does not specify and returns the
dropped field paths (for `fieldValidation` Warn/Strict). `apply_defaults(obj, schema)` fills
`default` values of absent properties, recursively (object properties, additionalProperties
values and array items), and replaces non-nullable `null`s by their default or drops them.

Invariants:
- at the root `apiVersion`, `kind` and `metadata` are never pruned nor defaulted (inside
  `metadata` only keys that are not ObjectMeta fields are dropped);
- `x-kubernetes-preserve-unknown-fields: true` keeps unknown keys at that node (specified
  properties below it are still pruned recursively); `additionalProperties: true` keeps
  everything; an `additionalProperties` schema is applied to every value;
- `x-kubernetes-embedded-resource` objects keep `apiVersion`, `kind` and `metadata`;
- defaults are deep-copied and then defaulted themselves (so `default: {}` cascades); a default
  applies only inside objects that exist.
"""

from __future__ import annotations

import copy
from typing import Any

from asyncop.apiserver.schema.text import child, index

Schema = dict[str, Any]
_ROOT_KEEP = ("apiVersion", "kind", "metadata")
#: the fields of ObjectMeta; anything else under a (root or embedded) `metadata` is unknown.
OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields",
})


def prune(obj: dict[str, Any], schema: Schema) -> list[str]:
    """Drop unknown fields in place; returns the dropped field paths (e.g. `spec.foo`)."""
    dropped: list[str] = []
    if isinstance(obj, dict):
        _prune_object(obj, schema, "", dropped, root=True)
    return dropped


def _prune_value(value: Any, schema: Schema, path: str, dropped: list[str]) -> None:
    if isinstance(value, dict):
        _prune_object(value, schema, path, dropped, root=False)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _prune_value(item, items, index(path, i), dropped)


def _prune_object(
    obj: dict[str, Any], schema: Schema, path: str, dropped: list[str], *, root: bool
) -> None:
    props: dict[str, Schema] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    for key in list(obj):
        if (root or embedded) and key in _ROOT_KEEP:
            if key == "metadata":
                _prune_meta(obj[key], child(path, key), dropped)
            elif key in props:
                _prune_value(obj[key], props[key], child(path, key), dropped)
            continue
        if key in props:
            _prune_value(obj[key], props[key], child(path, key), dropped)
        elif isinstance(additional, dict):
            _prune_value(obj[key], additional, child(path, key), dropped)
        elif additional is True or preserve:
            continue
        else:
            del obj[key]
            dropped.append(child(path, key))


def _prune_meta(meta: Any, path: str, dropped: list[str]) -> None:
    if not isinstance(meta, dict):
        return
    for key in list(meta):
        if key not in OBJECT_META_FIELDS:
            del meta[key]
            dropped.append(child(path, key))


def apply_defaults(obj: dict[str, Any], schema: Schema) -> None:
    """Apply `default`s in place (kube's structural defaulting, including null handling)."""
    if isinstance(obj, dict):
        _default_object(obj, schema, root=True)


def _default_value(value: Any, schema: Schema) -> None:
    if isinstance(value, dict):
        _default_object(value, schema, root=False)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                if item is None and not items.get("nullable") and "default" in items:
                    value[i] = copy.deepcopy(items["default"])
                _default_value(value[i], items)


def _default_object(obj: dict[str, Any], schema: Schema, *, root: bool) -> None:
    props: dict[str, Schema] = schema.get("properties") or {}
    for key, sub in props.items():
        if root and key == "metadata":
            continue
        if not isinstance(sub, dict):
            continue
        if key in obj and obj[key] is None and not sub.get("nullable"):
            if "default" in sub:
                obj[key] = copy.deepcopy(sub["default"])
            else:
                del obj[key]
        elif key not in obj and "default" in sub:
            obj[key] = copy.deepcopy(sub["default"])
        if key in obj:
            _default_value(obj[key], sub)
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        for key in list(obj):
            if key in props or (root and key in _ROOT_KEEP):
                continue
            if obj[key] is None and not additional.get("nullable") and "default" in additional:
                obj[key] = copy.deepcopy(additional["default"])
            _default_value(obj[key], additional)
