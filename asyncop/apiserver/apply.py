"""Server-side apply and field ownership (metadata.managedFields).

Every write records which manager owns which fields, in the real `FieldsV1` format:
`{"f:spec": {"f:replicas": {}, "f:containers": {"k:{\\"name\\":\\"a\\"}": {".": {}, ...}}}}`
(`f:` a struct or map field, `k:` an item of a list merged by key, `v:` a member of a set
list, `.` the item itself). Lists merge by the keys in `mergeschema`; other lists are atomic.

- `server_side_apply` merges an applied configuration into the live object: a field set to a
  different value than live that another manager owns is a conflict (`ApplyConflict`) unless
  `force`, which moves ownership; fields the manager applied before and no longer applies are
  removed when nobody else owns them; re-applying the same configuration returns the live
  object unchanged (same managedFields, so callers can detect the no-op by equality).
- `record_update` records a non-apply write (create/update/patch): the writer becomes the
  owner of every field it changed, and those fields are taken away from other managers (so a
  later apply of a different value by them conflicts, as in Kubernetes).

Invariants: pure functions over JSON dicts; the inputs of `server_side_apply` are never
mutated; identity fields (apiVersion, kind, metadata name/namespace/uid/resourceVersion/
generation/creationTimestamp/managedFields…) are never owned.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from asyncop.apiserver.mergeschema import Node, schema_for
from asyncop.apiserver.patch import PatchError, strategic_merge_patch

__all__ = ["ApplyConflict", "FieldConflict", "record_update", "server_side_apply"]

Path = tuple[str, ...]

_PRESENT: Final = object()  # value of a list item / set member path: presence only
_MISSING: Final = object()
_UNOWNED_META: Final = frozenset({
    "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
    "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
})


@dataclass(frozen=True, slots=True)
class FieldConflict:
    manager: str
    api_version: str
    field: str  # e.g. ".spec.replicas"

    @property
    def message(self) -> str:
        return f'conflict with "{self.manager}" using {self.api_version}'


class ApplyConflict(Exception):
    """An apply would change fields owned by other managers (HTTP 409 when force=false).

    `.conflicts` are readable lines such as `conflict with "helm" using apps/v1: .spec.replicas`;
    `.details` the structured form; `.causes` are metav1 StatusCauses
    (`reason: FieldManagerConflict`); `.message` is the whole Status message.
    """

    def __init__(self, details: list[FieldConflict]) -> None:
        self.details = details
        self.conflicts = [f"{d.message}: {d.field}" for d in details]
        self.causes = [
            {"reason": "FieldManagerConflict", "message": d.message, "field": d.field}
            for d in details
        ]
        if len(details) == 1:
            self.message = f"Apply failed with 1 conflict: {self.conflicts[0]}"
        else:
            lines = [f"Apply failed with {len(details)} conflicts:"]
            lines += [f"- {c}" for c in self.conflicts]
            self.message = "\n".join(lines)
        super().__init__(self.message)


# ---------------------------------------------------------------- field sets


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _walk(value: Any, node: Node | None, prefix: Path, out: dict[Path, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            _walk(child, node.child(key) if node else None, (*prefix, f"f:{key}"), out)
        return
    if isinstance(value, list) and value and node is not None:
        key = node.key
        if key is not None and all(isinstance(i, dict) and key in i for i in value):
            for item in value:
                item_path = (*prefix, "k:" + _json({key: item[key]}))
                out[item_path] = _PRESENT
                for name, child in item.items():
                    _walk(child, node.child(name), (*item_path, f"f:{name}"), out)
            return
        if node.set_list:
            for item in value:
                out[(*prefix, "v:" + _json(item))] = _PRESENT
            return
    out[prefix] = value


def _leaves(obj: dict[str, Any] | None, kind: str) -> dict[Path, Any]:
    """Every owned-able path of `obj` with its value (`_PRESENT` for list items)."""
    out: dict[Path, Any] = {}
    if not obj:
        return out
    schema = schema_for(kind)
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        if key == "metadata" and isinstance(value, dict):
            meta = {k: v for k, v in value.items() if k not in _UNOWNED_META}
            if meta:
                _walk(meta, schema.child("metadata"), ("f:metadata",), out)
            continue
        _walk(value, schema.child(key), (f"f:{key}",), out)
    return out


def _paths_of(tree: Any, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    for key, sub in tree.items():
        if key == ".":
            out.add(prefix)
        elif isinstance(sub, dict) and sub:
            out |= _paths_of(sub, (*prefix, key))
        else:
            out.add((*prefix, key))
    return out


def _tree_of(paths: Iterable[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    wanted = set(paths)
    for path in sorted(wanted):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    for path in wanted:
        node = tree
        for element in path:
            node = node[element]
        if node:
            node["."] = {}
    return _sorted_tree(tree)


def _sorted_tree(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted_tree(tree[k]) for k in sorted(tree)}


def _readable(path: Path) -> str:
    out = []
    for element in path:
        prefix, rest = element[:2], element[2:]
        if prefix == "f:":
            out.append(f".{rest}")
        elif prefix == "k:":
            fields = orjson.loads(rest)
            out.append("[" + ",".join(f"{k}={_json(v)}" for k, v in fields.items()) + "]")
        else:
            out.append(f"[={rest}]")
    return "".join(out)


def _equal(a: Any, b: Any) -> bool:
    if a is _PRESENT or b is _PRESENT or a is _MISSING or b is _MISSING:
        return a is b
    return _json(a) == _json(b)


# ---------------------------------------------------------------- managedFields entries


@dataclass(slots=True)
class _Entry:
    raw: dict[str, Any]
    paths: set[Path]

    @property
    def ident(self) -> tuple[str, str, str]:
        r = self.raw
        return (r.get("manager", ""), r.get("operation", ""), r.get("subresource", ""))


def _entries(obj: dict[str, Any] | None) -> list[_Entry]:
    if not obj:
        return []
    raw = (obj.get("metadata") or {}).get("managedFields") or []
    return [
        _Entry(dict(e), _paths_of(e.get("fieldsV1")))
        for e in raw
        if isinstance(e, dict)
    ]


def _render(entries: list[_Entry]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        if not entry.paths:
            continue
        raw = dict(entry.raw)
        raw["fieldsType"] = "FieldsV1"
        raw["fieldsV1"] = _tree_of(entry.paths)
        out.append(raw)
    return out


def _new_entry(
    *, manager: str, operation: str, api_version: str, now: str, subresource: str
) -> _Entry:
    raw: dict[str, Any] = {
        "manager": manager, "operation": operation, "apiVersion": api_version, "time": now,
        "fieldsType": "FieldsV1", "fieldsV1": {},
    }
    if subresource:
        raw["subresource"] = subresource
    return _Entry(raw, set())


# ---------------------------------------------------------------- removal


def _remove_path(obj: Any, path: Path) -> None:
    parents: list[tuple[Any, Any]] = []
    node = obj
    for element in path:
        prefix, rest = element[:2], element[2:]
        if prefix == "f:" and isinstance(node, dict) and rest in node:
            parents.append((node, rest))
            node = node[rest]
        elif prefix == "k:" and isinstance(node, list):
            fields = orjson.loads(rest)
            idx = next((i for i, item in enumerate(node) if isinstance(item, dict)
                        and all(_equal(item.get(k), v) for k, v in fields.items())), None)
            if idx is None:
                return
            parents.append((node, idx))
            node = node[idx]
        elif prefix == "v:" and isinstance(node, list):
            member = orjson.loads(rest)
            idx = next((i for i, item in enumerate(node) if _equal(item, member)), None)
            if idx is None:
                return
            parents.append((node, idx))
            node = node[idx]
        else:
            return
    if not parents:
        return
    container, key = parents.pop()
    del container[key]
    # prune containers this removal emptied (never the object's top-level fields)
    while len(parents) > 1 and not container:
        container, key = parents.pop()
        del container[key]


def _strip_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_nulls(v) for v in value]
    return value


def _without_managed(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


# ---------------------------------------------------------------- public API


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    now: str,
    operation_subresource: str = "",
) -> dict[str, Any]:
    """Merge the applied configuration into `live` (None: create) and return the new object.

    Raises `ApplyConflict` (force=False and another manager owns a field being changed) or
    `PatchError` (malformed configuration: not an object, no apiVersion/kind/metadata.name).
    """
    if not isinstance(applied, dict):
        raise PatchError("the applied configuration must be an object")
    for required in ("apiVersion", "kind"):
        if not applied.get(required):
            raise PatchError(f"{required} must be set in the applied configuration")
    meta = applied.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise PatchError("metadata.name must be set in the applied configuration")
    if not manager:
        raise PatchError("fieldManager: Required value: is required for apply patch")
    config: dict[str, Any] = _strip_nulls(applied)
    config["metadata"].pop("managedFields", None)
    kind, api_version = str(applied["kind"]), str(applied["apiVersion"])
    ident = (manager, "Apply", operation_subresource)

    entries = _entries(live)
    own = next((e for e in entries if e.ident == ident), None)
    others = [e for e in entries if e is not own]
    new_leaves = _leaves(config, kind)
    live_leaves = _leaves(live, kind)

    conflicts: list[tuple[_Entry, Path]] = []
    for path, value in new_leaves.items():
        if value is _PRESENT or _equal(live_leaves.get(path, _MISSING), value):
            continue
        conflicts += [(e, path) for e in others if path in e.paths]
    if conflicts and not force:
        raise ApplyConflict([
            FieldConflict(e.raw.get("manager", ""), e.raw.get("apiVersion", ""), _readable(p))
            for e, p in sorted(conflicts, key=lambda c: (c[0].ident, c[1]))
        ])
    for entry, path in conflicts:
        entry.paths.discard(path)

    base: dict[str, Any] = _without_managed(live) if live is not None else {}
    base = orjson.loads(orjson.dumps(base))
    if own is not None:
        kept = set(new_leaves).union(*(e.paths for e in others))
        for path in sorted(own.paths - set(new_leaves), key=len):
            if not any(k[: len(path)] == path for k in kept):
                _remove_path(base, path)
    result = strategic_merge_patch(base, config, kind=kind) if live is not None else config

    new_paths = set(new_leaves)
    unchanged = (
        live is not None
        and own is not None
        and own.paths == new_paths
        and not conflicts
        and result == _without_managed(live)
    )
    if unchanged:
        assert live is not None
        same: dict[str, Any] = orjson.loads(orjson.dumps(live))
        return same

    if own is None:
        own = _new_entry(manager=manager, operation="Apply", api_version=api_version,
                         now=now, subresource=operation_subresource)
        entries.append(own)
    own.raw["time"] = now
    own.raw["apiVersion"] = api_version
    own.paths = new_paths
    managed = _render(entries)
    if managed:
        result.setdefault("metadata", {})["managedFields"] = managed
    return result


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    now: str,
    operation: str = "Update",
    subresource: str = "",
) -> None:
    """Record in `new` (in place) that `manager` wrote the fields that differ from `old`.

    Managed fields are carried over from `old`; other managers lose the fields this write
    changed or removed. A write that changes nothing leaves managedFields as they were.
    """
    kind = str(new.get("kind") or (old or {}).get("kind") or "")
    entries = _entries(old)
    old_leaves = _leaves(old, kind)
    new_leaves = _leaves(new, kind)
    changed = {p for p, v in new_leaves.items() if not _equal(old_leaves.get(p, _MISSING), v)}
    removed = set(old_leaves) - set(new_leaves)
    ident = (manager, operation, subresource)
    for entry in entries:
        if entry.ident != ident:
            entry.paths -= changed
        entry.paths = {
            p for p in entry.paths if not any(p[: len(r)] == r for r in removed)
        }
    if changed:
        own = next((e for e in entries if e.ident == ident), None)
        if own is None:
            own = _new_entry(manager=manager, operation=operation,
                             api_version=str(new.get("apiVersion", "")), now=now,
                             subresource=subresource)
            entries.append(own)
        own.raw["time"] = now
        own.raw["apiVersion"] = str(new.get("apiVersion", own.raw.get("apiVersion", "")))
        own.paths |= changed
    meta = new.setdefault("metadata", {})
    managed = _render(entries)
    if managed:
        meta["managedFields"] = managed
    else:
        meta.pop("managedFields", None)
