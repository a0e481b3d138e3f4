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
mutated and its result shares no structure with them (`record_update` writes into `new` and
may share untouched managedFields entries with `old`); identity fields (apiVersion, kind,
metadata name/namespace/uid/resourceVersion/generation/creationTimestamp/managedFields…) are
never owned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from asyncop.apiserver.merge import fieldset
from asyncop.apiserver.merge.fieldset import MISSING, PRESENT, Path
from asyncop.apiserver.merge.mergeschema import schema_for
from asyncop.apiserver.merge.patch import PatchError, apply_merge

__all__ = ["ApplyConflict", "FieldConflict", "record_update", "server_side_apply"]


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


# ---------------------------------------------------------------- managedFields entries


@dataclass(slots=True)
class _Entry:
    """One managedFields entry; `dirty` once its paths changed (else `raw` is kept as is)."""

    raw: dict[str, Any]
    paths: set[Path]
    dirty: bool = field(default=False)

    @property
    def ident(self) -> tuple[str, str, str]:
        r = self.raw
        return (r.get("manager", ""), r.get("operation", ""), r.get("subresource", ""))


def _entries(obj: dict[str, Any] | None) -> list[_Entry]:
    if not obj:
        return []
    raw = (obj.get("metadata") or {}).get("managedFields") or []
    if not isinstance(raw, list):
        return []
    return [
        _Entry(dict(e), fieldset.paths_of(e.get("fieldsV1")))
        for e in raw
        if isinstance(e, dict)
    ]


def _render(entries: list[_Entry]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        if not entry.paths:
            continue
        if not entry.dirty:
            out.append(entry.raw)
            continue
        raw = dict(entry.raw)
        raw["fieldsType"] = "FieldsV1"
        raw["fieldsV1"] = fieldset.tree_of(entry.paths)
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
    return _Entry(raw, set(), dirty=True)


# ---------------------------------------------------------------- apply


def _overlaps(entry: _Entry, path: Path, value: Any, live_leaves: dict[Path, Any]) -> bool:
    """Whether changing `path` to `value` changes something `entry` owns: the path itself, an
    atomic value above it, or (for a non-map value, which replaces what is there) a field
    below it."""
    if path in entry.paths:
        return True
    for i in range(1, len(path)):
        above = live_leaves.get(path[:i], MISSING)
        if path[:i] in entry.paths and above is not PRESENT and above is not MISSING \
                and not isinstance(above, dict):
            return True
    if not isinstance(value, dict):
        size = len(path)
        return any(len(q) > size and q[:size] == path for q in entry.paths)
    return False


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
    ignore_fields: Iterable[str] = (),
    schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Merge the applied configuration into `live` (None: create) and return the new object.

    `operation_subresource="status"` applies only `.status` (the rest of the configuration is
    ignored, as the real server resets it). `ignore_fields` are top-level fields the endpoint
    resets and that are therefore neither merged nor owned: pass `("status",)` for the main
    resource of a kind with a status subresource. `schema` is the openAPIV3Schema of a custom
    resource's version: its `x-kubernetes-list-type: map|set` lists merge item by item (without
    it, custom resource lists are atomic).

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
    if operation_subresource == "status":
        identity = {k: v for k, v in config["metadata"].items() if k in ("name", "namespace")}
        config = {k: v for k, v in config.items() if k in ("apiVersion", "kind", "status")}
        config["metadata"] = identity
    for name in ignore_fields:
        if name not in ("apiVersion", "kind", "metadata"):
            config.pop(name, None)
    kind, api_version = str(applied["kind"]), str(applied["apiVersion"])
    root = schema_for(kind, schema)
    ident = (manager, "Apply", operation_subresource)

    entries = _entries(live)
    own = next((e for e in entries if e.ident == ident), None)
    others = [e for e in entries if e is not own]
    new_leaves = fieldset.leaves(config, root)
    # only managers owning something under the applied top-level fields can conflict
    tops = {p[0] for p in new_leaves}
    rivals = [e for e in others if any(p and p[0] in tops for p in e.paths)]
    live_leaves = fieldset.leaves(live, root) if rivals else {}

    conflicts: list[tuple[_Entry, Path]] = []
    for path, value in new_leaves.items() if rivals else ():
        if value is PRESENT or fieldset.equal(live_leaves.get(path, MISSING), value):
            continue
        conflicts += [(e, path) for e in rivals if _overlaps(e, path, value, live_leaves)]
    if conflicts and not force:
        raise ApplyConflict([
            FieldConflict(e.raw.get("manager", ""), e.raw.get("apiVersion", ""),
                          fieldset.readable(p))
            for e, p in sorted(conflicts, key=lambda c: (c[0].ident, c[1]))
        ])
    for entry, path in conflicts:
        entry.paths = {q for q in entry.paths
                       if q[: len(path)] != path and path[: len(q)] != q}
        entry.dirty = True

    base: dict[str, Any] = _without_managed(live) if live is not None else {}
    base = orjson.loads(orjson.dumps(base))
    if own is not None:
        kept = set(new_leaves).union(*(e.paths for e in others))
        for path in sorted(own.paths - set(new_leaves), key=len):
            if not fieldset.covers(path, kept):
                fieldset.remove_path(base, path, root)
    result = apply_merge(base, config, root=root) if live is not None else config

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
    own.dirty = True
    managed = _render(entries)
    if managed:  # copied: untouched entries would otherwise share structure with `live`
        result.setdefault("metadata", {})["managedFields"] = orjson.loads(orjson.dumps(managed))
    return result


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    now: str,
    operation: str = "Update",
    subresource: str = "",
    schema: Mapping[str, Any] | None = None,
) -> None:
    """Record in `new` (in place) that `manager` wrote the fields that differ from `old`.

    Managed fields are carried over from `old` (or taken from `new` when the client sent
    different ones through the main resource, as the real server does); other managers lose
    the fields this write changed or removed. A write that changes nothing leaves
    managedFields as they were.
    """
    kind = str(new.get("kind") or (old or {}).get("kind") or "")
    meta = new.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return  # malformed metadata: validation rejects the write, nothing to record
    if old is not None and not isinstance(old.get("metadata", {}), dict):
        old = None
    # a write through the main resource that carries managedFields different from the stored
    # ones sets them (kubectl's client-side-apply migration does this); none, or a
    # subresource write, keeps the stored ones
    sent = meta.get("managedFields")
    stored = ((old or {}).get("metadata") or {}).get("managedFields")
    base = new if sent and isinstance(sent, list) and not subresource and sent != stored else old
    changed, removed = fieldset.diff(old, new, schema_for(kind, schema))
    if not changed and not removed:
        previous = ((base or {}).get("metadata") or {}).get("managedFields")
        if previous:
            meta["managedFields"] = previous
        else:
            meta.pop("managedFields", None)
        return
    entries = _entries(base)
    ident = (manager, operation, subresource)
    for entry in entries:
        before = len(entry.paths)
        if entry.ident != ident:
            entry.paths.difference_update(changed)
        if removed:
            entry.paths = {p for p in entry.paths if not _under_any(p, removed)}
        entry.dirty = entry.dirty or len(entry.paths) != before
    if changed:
        own = next((e for e in entries if e.ident == ident), None)
        if own is None:
            own = _new_entry(manager=manager, operation=operation,
                             api_version=str(new.get("apiVersion", "")), now=now,
                             subresource=subresource)
            entries.append(own)
        own.raw["time"] = now
        own.raw["apiVersion"] = str(new.get("apiVersion", own.raw.get("apiVersion", "")))
        own.paths.update(changed)
        own.dirty = True
    managed = _render(entries)
    if managed:
        meta["managedFields"] = managed
    else:
        meta.pop("managedFields", None)


def _under_any(path: Path, roots: set[Path]) -> bool:
    return any(path[:i] in roots for i in range(1, len(path) + 1))
