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
that have none. A body the fast decoding walk found canonical already skips the walk
(`decoded_canonical`, for the kinds whose defaults keep it so). Invariant: a value that is
not a valid Quantity is left as it is (validation has refused it already, or it is a dry
run of an invalid object); never raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asyncop.apiserver.builtin import gotypes
from asyncop.apiserver.builtin.fields import values_of
from asyncop.apiserver.builtin.quantity import QUANTITY_JSON, QuantityError, canonical
from asyncop.apiserver.core.resources import ResourceType

__all__ = ["KEEP_CANONICAL", "canonicalize", "quantity_tree"]

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


KEEP_CANONICAL = frozenset({
    ("", "pods"), ("apps", "deployments"), ("apps", "replicasets"), ("apps", "daemonsets"),
    ("apps", "statefulsets"), ("batch", "jobs"), ("batch", "cronjobs")})
"""Kinds whose defaulters write no Quantity but copies of decoded ones (a pod's requests
from its limits) and `poddefaults.resource_list`'s rounded values, in canonical form: a
body of these decoded with every Quantity canonical is canonical once defaulted."""


def canonicalize(rt: ResourceType, obj: dict[str, Any], minor: int, *,
                 decoded_canonical: bool = False) -> None:
    """Rewrite every Quantity of a built-in object into its canonical form, in place.
    `decoded_canonical`: the object is the body the fast decoding walk found canonical,
    defaulted and nothing else (`KEEP_CANONICAL` kinds then need no walk)."""
    if rt.is_custom or (decoded_canonical and rt.gr in KEEP_CANONICAL):
        return
    node = gotypes.compiled(minor, rt.group, rt.version, rt.kind)
    if node is None:
        return
    key = id(node)
    if key in _WALKS:
        walk = _WALKS[key]
    else:
        tree = quantity_tree(node)
        walk = _WALKS[key] = None if tree is None else _compile(tree)
    if walk is not None:
        walk(obj)


# --- the walk, compiled once per kind from its tree ------------------------------------------
# A container value (struct, list, map) gets a function that rewrites the quantities inside
# it in place; a Quantity itself is rewritten by its container (`_leaf`). A list or map of
# structs looks up its items' fields inline rather than calling a function per item, so a
# container's forty env vars cost forty dict lookups ("valueFrom") on the way to a divisor.

Walk = Callable[[Any], None]
Fields = tuple[tuple[str, Walk | None], ...]  # None: the field is a Quantity
_WALKS: dict[int, Walk | None] = {}


def _leaf(value: Any) -> Any:
    if isinstance(value, QUANTITY_JSON) and not isinstance(value, bool):
        try:
            return canonical(value)
        except QuantityError:
            return value
    return value


def _fields_into(obj: dict[str, Any], fields: Fields) -> None:
    for name, walk in fields:
        item = obj.get(name)
        if item is not None:
            if walk is None:
                obj[name] = _leaf(item)
            else:
                walk(item)


def _compile(tree: Tree) -> Walk:
    kind, sub = tree
    if kind == "s":
        fields: Fields = tuple((name, None if child[0] == "q" else _compile(child))
                               for name, child in sub.items())

        def walk_struct(value: Any) -> None:
            if isinstance(value, dict):
                _fields_into(value, fields)
        return walk_struct
    if sub[0] == "q":
        if kind == "l":
            def walk_quantities(value: Any) -> None:
                if isinstance(value, list):
                    for i, item in enumerate(value):
                        value[i] = _leaf(item)
            return walk_quantities

        def walk_quantity_map(value: Any) -> None:  # (resource lists: the hot one)
            if isinstance(value, dict):
                for name, item in value.items():
                    if type(item) is str:  # `_leaf`, inline for the common case
                        try:
                            value[name] = canonical(item)
                        except QuantityError:
                            pass
                    else:
                        value[name] = _leaf(item)
        return walk_quantity_map
    if sub[0] == "s":
        item_fields: Fields = tuple((name, None if child[0] == "q" else _compile(child))
                                    for name, child in sub[1].items())

        def walk_structs(value: Any) -> None:
            items = value if isinstance(value, list) else value.values() \
                if kind == "m" and isinstance(value, dict) else ()
            for item in items:
                if isinstance(item, dict):
                    for name, walk in item_fields:  # `_fields_into`, inline: a hot loop
                        field = item.get(name)
                        if field is not None:
                            if walk is None:
                                item[name] = _leaf(field)
                            else:
                                walk(field)
        if len(item_fields) == 1 and item_fields[0][1] is not None:
            only, only_walk = item_fields[0]
            assert only_walk is not None

            def walk_structs_one(value: Any) -> None:  # (env vars: only `valueFrom`)
                items = value if isinstance(value, list) else list(value.values()) \
                    if kind == "m" and isinstance(value, dict) else []
                for field in filter(None, values_of(items, only)):  # (nothing in an empty one)
                    only_walk(field)
            return walk_structs_one
        return walk_structs
    child = _compile(sub)

    def walk_items(value: Any) -> None:
        items = value if isinstance(value, list) else value.values() \
            if kind == "m" and isinstance(value, dict) else ()
        for item in items:
            child(item)
    return walk_items
