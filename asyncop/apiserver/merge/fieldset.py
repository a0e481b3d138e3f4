"""Field sets: the paths of an object that managers own, in the real FieldsV1 vocabulary.

A path is a tuple of elements: `f:<field>` (a struct or map field), `k:<json>` (the item of a
list merged by key, e.g. `k:{"name":"main"}`), `v:<json>` (a member of a set list, e.g.
`v:"finalizer.example.com"`). A FieldsV1 tree nests these elements; `.` marks that the node
itself (a list item) is owned as well as its children. Which lists are keyed or sets comes
from `mergeschema`; other lists, scalars and empty maps are leaves.

`root` is the merge schema of the object's kind (`mergeschema.schema_for`).

Invariants: pure functions; identity fields (apiVersion, kind, metadata name/namespace/uid/
resourceVersion/generation/creationTimestamp/managedFields/deletion*) are never in a set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import orjson

from asyncop.apiserver.merge.mergeschema import Node

Path = tuple[str, ...]

PRESENT: Final = object()  # the value of a list item / set member path: presence only
MISSING: Final = object()
UNOWNED_META: Final = frozenset({
    "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
    "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
})
_SCALARS: Final = (str, int, float, bool, type(None))


def to_json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def equal(a: Any, b: Any) -> bool:
    """JSON equality (1 != true, 1 == 1.0); PRESENT/MISSING only equal themselves."""
    if a is PRESENT or b is PRESENT or a is MISSING or b is MISSING:
        return a is b
    if type(a) is type(b) and isinstance(a, _SCALARS):
        return bool(a == b)
    return to_json(a) == to_json(b)


def _item_key(node: Node | None, value: Any) -> str | None:
    """The merge key field when `value` is a non-empty keyed list whose items all carry it."""
    if node is None or node.key is None or not isinstance(value, list) or not value:
        return None
    key = node.key
    return key if all(isinstance(i, dict) and key in i for i in value) else None


def _is_set(node: Node | None, value: Any) -> bool:
    return node is not None and node.set_list and isinstance(value, list) and bool(value)


def walk(value: Any, node: Node | None, prefix: Path, out: dict[Path, Any]) -> None:
    """Add every leaf path under `prefix` with its value to `out`."""
    if isinstance(value, dict) and value:
        for name, child in value.items():
            walk(child, node.child(name) if node else None, (*prefix, f"f:{name}"), out)
        return
    key = _item_key(node, value)
    if key is not None:
        assert node is not None
        for item in value:
            item_path = (*prefix, "k:" + to_json(node.identity(item, full=True)))
            out[item_path] = PRESENT
            for name, child in item.items():
                walk(child, node.child(name) if node else None, (*item_path, f"f:{name}"), out)
        return
    if _is_set(node, value):
        for member in value:
            out[(*prefix, "v:" + to_json(member))] = PRESENT
        return
    if prefix:  # the object itself is never a leaf
        out[prefix] = value


def _owned_fields(obj: dict[str, Any]) -> dict[str, Any]:
    fields = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    meta = fields.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in UNOWNED_META}
        if meta:
            fields["metadata"] = meta
        else:
            del fields["metadata"]
    return fields


def leaves(obj: dict[str, Any] | None, root: Node) -> dict[Path, Any]:
    """Every ownable leaf path of `obj` with its value (`PRESENT` for list items)."""
    out: dict[Path, Any] = {}
    if obj:
        walk(_owned_fields(obj), root, (), out)
    return out


def diff(old: dict[str, Any] | None, new: dict[str, Any], root: Node
         ) -> tuple[dict[Path, Any], set[Path]]:
    """(changed or added leaves of `new`, paths of `old` that are gone).

    Identical subtrees are skipped with one comparison, so a small change to a big object
    costs little. A removed path covers everything below it.
    """
    changed: dict[Path, Any] = {}
    removed: set[Path] = set()
    _diff(_owned_fields(old) if old else {}, _owned_fields(new), root, (),
          changed, removed)
    return changed, removed


def _diff(old: Any, new: Any, node: Node | None, prefix: Path,
          changed: dict[Path, Any], removed: set[Path]) -> None:
    if type(old) is type(new) and old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and ((old and new) or not prefix):
        for name, value in new.items():
            child = node.child(name) if node else None
            path = (*prefix, f"f:{name}")
            if name in old:
                _diff(old[name], value, child, path, changed, removed)
            else:
                walk(value, child, path, changed)
        removed.update((*prefix, f"f:{name}") for name in old if name not in new)
        return
    key = _item_key(node, new)
    if key is not None and _item_key(node, old) == key:
        assert node is not None
        before = {to_json(node.identity(i, full=True)): i for i in old}
        after = {to_json(node.identity(i, full=True)): i for i in new}
        for ident, item in after.items():
            item_path = (*prefix, f"k:{ident}")
            if ident in before:
                _diff(before[ident], item, node, item_path, changed, removed)
            else:
                walk([item], node, prefix, changed)
        removed.update((*prefix, f"k:{ident}") for ident in before if ident not in after)
        return
    if _is_set(node, new) and _is_set(node, old):
        before_members = {to_json(m) for m in old}
        after_members = {to_json(m) for m in new}
        for member in after_members - before_members:
            changed[(*prefix, f"v:{member}")] = PRESENT
        removed.update((*prefix, f"v:{m}") for m in before_members - after_members)
        return
    # the shape changed (or an atomic value did): the old subtree goes, the new one arrives
    old_paths: dict[Path, Any] = {}
    new_paths: dict[Path, Any] = {}
    walk(old, node, prefix, old_paths)
    walk(new, node, prefix, new_paths)
    if prefix and not set(old_paths) == set(new_paths) == {prefix}:
        removed.add(prefix)
    changed.update(new_paths)


def paths_of(tree: Any, prefix: Path = ()) -> set[Path]:
    """The paths of a FieldsV1 tree."""
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    for element, sub in tree.items():
        if element == ".":
            out.add(prefix)
        elif isinstance(sub, dict) and sub:
            out |= paths_of(sub, (*prefix, element))
        else:
            out.add((*prefix, element))
    return out


def tree_of(paths: Iterable[Path]) -> dict[str, Any]:
    """The FieldsV1 tree of a set of paths (keys sorted, `.` for owned inner nodes)."""
    tree: dict[str, Any] = {}
    owned_inner: list[dict[str, Any]] = []
    for path in paths:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
        owned_inner.append(node)
    for node in owned_inner:
        if node:
            node["."] = {}
    return _sorted(tree)


def _sorted(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted(tree[k]) for k in sorted(tree)}


def covers(path: Path, others: Iterable[Path]) -> bool:
    """Whether any of `others` is `path` or lies below it."""
    size = len(path)
    return any(other[:size] == path for other in others)


def readable(path: Path) -> str:
    """`.spec.template.spec.containers[name="main"].image`, as kubectl prints conflicts."""
    out = []
    for element in path:
        prefix, rest = element[:2], element[2:]
        if prefix == "f:":
            out.append(f".{rest}")
        elif prefix == "k:":
            fields = orjson.loads(rest)
            out.append("[" + ",".join(f"{k}={to_json(v)}" for k, v in fields.items()) + "]")
        else:
            out.append(f"[={rest}]")
    return "".join(out)


def remove_path(obj: Any, path: Path, root: Node) -> None:
    """Delete the field/item/member at `path` from `obj` in place (no-op when absent), then
    drop the containers this emptied, never a top-level field."""
    parents: list[tuple[Any, Any]] = []
    node: Node | None = root
    value = obj
    for element in path:
        prefix, rest = element[:2], element[2:]
        index: Any = None
        if prefix == "f:" and isinstance(value, dict) and rest in value:
            index = rest
            node = node.child(rest) if node else None
        elif prefix == "k:" and isinstance(value, list):
            fields = orjson.loads(rest)
            index = next((i for i, item in enumerate(value)
                          if isinstance(item, dict) and _matches(node, item, fields)), None)
        elif prefix == "v:" and isinstance(value, list):
            member = orjson.loads(rest)
            index = next((i for i, item in enumerate(value) if equal(item, member)), None)
        if index is None:
            return
        parents.append((value, index))
        value = value[index]
    if not parents:
        return
    container, index = parents.pop()
    del container[index]
    while len(parents) > 1 and not container:
        container, index = parents.pop()
        del container[index]


def _matches(node: Node | None, item: dict[str, Any], fields: dict[str, Any]) -> bool:
    if node is not None and node.key is not None and node.key in item:
        return to_json(node.identity(item, full=True)) == to_json(fields)
    return all(equal(item.get(k), v) for k, v in fields.items())
