"""Quantities in their canonical form, as kube stores them (`1024Mi` → `1Gi`, `0.5` → `500m`).

kube parses every resource.Quantity when it decodes a built-in object, validates the parsed
value, and writes it back in canonical form; so a GET returns `1Gi` for a `1024Mi` that was
sent, and a controller comparing its desired `1024Mi` with the stored object sees the
difference a real cluster shows. Validation must see the value as sent (its messages print
the parsed Go struct, which differs for `-1000` and `-1k`), so canonicalisation runs last,
after validation and just before the commit: `canonicalize(rt, obj, minor)` rewrites, in
place, every Quantity of a built-in object.

Only the paths where a kind can hold a Quantity are walked: `quantity_tree(node)` prunes the
compiled Go-type tree (`gotypes`) to them once per node (a Pod: containers' resources, its
overhead, its status' allocated resources …), so the walk costs a few dict lookups for kinds
that have none. Invariant: a value that is not a valid Quantity is left as it is (validation
has refused it already, or it is a dry run of an invalid object); never raises.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin import gotypes
from asyncop.apiserver.builtin.quantity import QuantityError, canonical
from asyncop.apiserver.core.resources import ResourceType

__all__ = ["canonicalize", "quantity_tree"]

Tree = tuple[str, Any]
"""("q", None) a Quantity; ("s", {field: Tree}) a struct; ("l", Tree) a list; ("m", Tree) a map."""

_QUANTITY: Tree = ("q", None)
_TREES: dict[int, Tree | None] = {}
_BUSY = object()


def quantity_tree(node: gotypes.Node) -> Tree | None:
    """The part of `node`'s type tree that leads to Quantities (None: there are none)."""
    key = id(node)
    if key in _TREES:
        return _TREES[key]
    _TREES[key] = None  # a cycle (JSONSchemaProps) leads to nothing while being computed
    tag = node[0]
    tree: Tree | None = None
    if tag == gotypes.QUANTITY:
        tree = _QUANTITY
    elif tag == gotypes.STRUCT:
        fields = {name: sub for name, child in node[2].items()
                  if (sub := quantity_tree(child)) is not None}
        tree = ("s", fields) if fields else None
    elif tag in (gotypes.LIST, gotypes.MAP):
        sub = quantity_tree(node[2])
        tree = None if sub is None else ("l" if tag == gotypes.LIST else "m", sub)
    _TREES[key] = tree
    return tree


def canonicalize(rt: ResourceType, obj: dict[str, Any], minor: int) -> None:
    """Rewrite every Quantity of a built-in object into its canonical form, in place."""
    if rt.is_custom:
        return
    node = gotypes.compiled(minor, rt.group, rt.version, rt.kind)
    if node is None:
        return
    tree = quantity_tree(node)
    if tree is not None:
        _walk(obj, tree)


def _walk(value: Any, tree: Tree) -> Any:
    kind, sub = tree
    if kind == "q":
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            try:
                return canonical(value)
            except QuantityError:
                return value
        return value
    if kind == "s":
        if isinstance(value, dict):
            for name, child in sub.items():
                if name in value:
                    value[name] = _walk(value[name], child)
        return value
    if kind == "l":
        if isinstance(value, list):
            for i, item in enumerate(value):
                value[i] = _walk(item, sub)
        return value
    if isinstance(value, dict):
        for name in value:
            value[name] = _walk(value[name], sub)
    return value
