"""Bridge to the pure helper modules written alongside the server (schema, crds, tables,
openapi, patch, apply, protobuf), with small local fallbacks while one is missing.

The helpers are looked up at call time through `importlib`, so the server works whatever
subset has landed, and switches to the real implementation as soon as it exists. Invariant:
every function here is pure (no I/O, no store access) and raises only ApiError subclasses
or the helper's documented exception, translated by the caller.
"""

from __future__ import annotations

import importlib
from datetime import datetime
from types import ModuleType
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.resources import ResourceType, ScaleSpec


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"asyncop.apiserver.{name}")
    except ImportError:
        return None


class _Lookup:
    """Caches helper functions once found (a missing one is looked up again next time)."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], Any] = {}

    def __call__(self, module: str, name: str) -> Any:
        key = (module, name)
        fn = self.found.get(key)
        if fn is None:
            mod = _module(module)
            fn = getattr(mod, name, None) if mod is not None else None
            if fn is not None:
                self.found[key] = fn
        return fn


_fn = _Lookup()


class PatchFailed(Exception):
    """A patch document could not be applied (message is the server's text)."""


class ApplyConflicts(Exception):
    def __init__(self, conflicts: list[str], *, message: str = "",
                 causes: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message or f"{len(conflicts)} conflicts")
        self.conflicts = conflicts
        self.message = message
        self.causes = causes or []


class ProtobufUnsupported(Exception):
    pass


# --- CRDs and schemas -------------------------------------------------------------------------

def validate_crd(crd: dict[str, Any]) -> list[StatusCause]:
    fn = _fn("crds", "validate_crd")
    if fn is not None:
        return list(fn(crd))
    causes: list[StatusCause] = []
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    name = (crd.get("metadata") or {}).get("name", "")
    if name != f"{names.get('plural', '')}.{group}":
        causes.append({"reason": "FieldValueInvalid", "field": "metadata.name",
                       "message": f'Invalid value: "{name}": must be '
                                  'spec.names.plural+"."+spec.group'})
    if "." not in group:
        causes.append({"reason": "FieldValueInvalid", "field": "spec.group",
                       "message": f'Invalid value: "{group}": should be a domain with at '
                                  'least one dot'})
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append({"reason": "FieldValueNotSupported", "field": "spec.scope",
                       "message": f'Unsupported value: "{spec.get("scope")}": supported values: '
                                  f'"Cluster", "Namespaced"'})
    if not names.get("kind"):
        causes.append({"reason": "FieldValueRequired", "field": "spec.names.kind",
                       "message": "Required value"})
    versions = spec.get("versions") or []
    if sum(1 for v in versions if v.get("storage")) != 1:
        causes.append({"reason": "FieldValueInvalid", "field": "spec.versions",
                       "message": "Invalid value: ...: must have exactly one version marked as "
                                  "storage version"})
    return causes


def _path(jsonpath: str | None) -> str | None:
    return jsonpath.lstrip(".") if jsonpath else None


def resource_types(crd: dict[str, Any]) -> list[ResourceType]:
    fn = _fn("crds", "resource_types")
    if fn is not None:
        return list(fn(crd))
    spec = crd["spec"]
    names = spec["names"]
    storage = next((v["name"] for v in spec["versions"] if v.get("storage")), "")
    out: list[ResourceType] = []
    for v in spec["versions"]:
        if not v.get("served", True):
            continue
        sub = v.get("subresources") or {}
        scale = None
        if "scale" in sub:
            s = sub["scale"] or {}
            scale = ScaleSpec(spec_replicas_path=_path(s.get("specReplicasPath"))
                              or "spec.replicas",
                              status_replicas_path=_path(s.get("statusReplicasPath"))
                              or "status.replicas",
                              label_selector_path=_path(s.get("labelSelectorPath")))
        out.append(ResourceType(
            group=spec["group"], version=v["name"], plural=names["plural"], kind=names["kind"],
            namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            singular=names.get("singular") or names["kind"].lower(),
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            has_status="status" in sub, scale=scale,
            schema=(v.get("schema") or {}).get("openAPIV3Schema"),
            printer_columns=tuple(v.get("additionalPrinterColumns") or ()),
            crd_name=crd["metadata"]["name"], storage_version=storage,
            list_kind=names.get("listKind") or "",
        ))
    return out


def schema_validate(obj: dict[str, Any], schema: dict[str, Any]) -> list[StatusCause]:
    fn = _fn("schema", "validate")
    return list(fn(obj, schema)) if fn is not None else []


def schema_defaults(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    fn = _fn("schema", "apply_defaults")
    if fn is not None:
        fn(obj, schema)


def schema_prune(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    fn = _fn("schema", "prune")
    if fn is not None:
        fn(obj, schema)


# --- tables and openapi -----------------------------------------------------------------------

def to_table(rt: ResourceType, objs: list[dict[str, Any]], *,
             include_object: str = "Metadata", now: datetime | None = None,
             include_columns: bool = True) -> dict[str, Any]:
    fn = _fn("tables", "to_table")
    if fn is not None:
        result: dict[str, Any] = fn(rt, objs, include_object=include_object, now=now,
                                    include_columns=include_columns)
        return result
    rows = []
    for obj in objs:
        row: dict[str, Any] = {"cells": [obj["metadata"]["name"],
                                         obj["metadata"].get("creationTimestamp")]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "Metadata":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": obj["metadata"]}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
            "columnDefinitions": [
                {"name": "Name", "type": "string", "format": "name", "description": "",
                 "priority": 0},
                {"name": "Created At", "type": "date", "format": "", "description": "",
                 "priority": 0}],
            "rows": rows}


def openapi_v3_index(types: list[ResourceType], *, server_version: str) -> dict[str, Any]:
    fn = _fn("openapi", "openapi_v3_index")
    if fn is not None:
        result: dict[str, Any] = fn(types, server_version=server_version)
        return result
    paths: dict[str, Any] = {}
    for rt in types:
        key = f"apis/{rt.group}/{rt.version}" if rt.group else f"api/{rt.version}"
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash=0"}
    return {"paths": paths}


def openapi_v3_doc(types: list[ResourceType], group: str, version: str, *,
                   server_version: str) -> dict[str, Any] | None:
    fn = _fn("openapi", "openapi_v3_doc")
    selected = [t for t in types if t.group == group and t.version == version]
    if not selected:
        return None
    if fn is not None:
        result: dict[str, Any] = fn(types, group, version, server_version=server_version)
        return result
    paths: dict[str, Any] = {}
    for rt in selected:
        base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
        ns = "/namespaces/{namespace}" if rt.namespaced else ""
        gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        paths[f"{base}{ns}/{rt.plural}/{{name}}"] = {"patch": {
            "x-kubernetes-group-version-kind": gvk,
            "parameters": [{"name": "fieldValidation", "in": "query",
                            "schema": {"type": "string"}}]}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1"},
            "paths": paths, "components": {"schemas": {}}}


def openapi_v2_json(types: list[ResourceType], *, server_version: str) -> dict[str, Any]:
    fn = _fn("openapi", "openapi_v2")
    if fn is not None:
        result: dict[str, Any] = fn(types, server_version=server_version)
        return result
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1"},
            "paths": {}, "definitions": {}}


def openapi_v2_proto(git_version: str) -> bytes:
    """The minimal gnostic openapi_v2.Document: swagger="2.0", info{title, version}."""
    fn = _fn("openapi", "openapi_v2_proto")
    if fn is not None:
        proto: bytes = fn(server_version=git_version)
        return proto
    title = b"Kubernetes"
    version = git_version.encode()
    info = b"\x0a" + bytes([len(title)]) + title + b"\x12" + bytes([len(version)]) + version
    return b"\x0a\x032.0\x12" + bytes([len(info)]) + info


# --- patches ----------------------------------------------------------------------------------

def _patch_call(name: str, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
    mod = _module("patch")
    fn = getattr(mod, name, None) if mod is not None else None
    if fn is None:
        return None
    error = getattr(mod, "PatchError", None)
    try:
        result: dict[str, Any] = fn(*args, **kwargs)
    except Exception as exc:
        if error is not None and isinstance(exc, error):
            raise PatchFailed(str(exc)) from exc
        raise
    return result


def merge_patch(doc: Any, patch: Any) -> Any:
    result = _patch_call("merge_patch", doc, patch)
    if result is not None:
        return result
    if not isinstance(patch, dict):
        return patch
    out = dict(doc) if isinstance(doc, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def strategic_merge_patch(doc: dict[str, Any], patch: dict[str, Any], *, kind: str) -> Any:
    result = _patch_call("strategic_merge_patch", doc, patch, kind=kind)
    if result is not None:
        return result
    return merge_patch(doc, _strip_directives(patch))


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    return value


def json_patch(doc: dict[str, Any], ops: list[Any]) -> dict[str, Any]:
    result = _patch_call("json_patch", doc, ops)
    if result is not None:
        return result
    import orjson

    out: Any = orjson.loads(orjson.dumps(doc))
    for op in ops:
        if not isinstance(op, dict) or "path" not in op:
            raise PatchFailed("invalid JSON patch operation")
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent: Any = out
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent.get(part)
            if parent is None:
                raise PatchFailed(f"doc is missing path: {op['path']}")
        last = parts[-1] if parts else ""
        kind = op.get("op")
        if kind in ("add", "replace"):
            if isinstance(parent, list):
                idx = len(parent) if last == "-" else int(last)
                if kind == "add":
                    parent.insert(idx, op.get("value"))
                else:
                    parent[idx] = op.get("value")
            else:
                if kind == "replace" and last not in parent:
                    raise PatchFailed(f"replace operation does not apply: doc is missing key: "
                                      f"{op['path']}")
                parent[last] = op.get("value")
        elif kind == "remove":
            if isinstance(parent, list):
                parent.pop(int(last))
            elif last in parent:
                del parent[last]
            else:
                raise PatchFailed(f"remove operation does not apply: doc is missing path: "
                                  f"{op['path']}")
        elif kind == "test":
            actual = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if actual != op.get("value"):
                raise PatchFailed(f"testing value {op['path']} failed: test failed")
        else:
            raise PatchFailed(f"Unexpected kind: {kind}")
    result_doc: dict[str, Any] = out
    return result_doc


def server_side_apply(live: dict[str, Any] | None, applied: dict[str, Any], *, manager: str,
                      force: bool, now: str, subresource: str = "") -> dict[str, Any]:
    mod = _module("apply")
    fn = getattr(mod, "server_side_apply", None) if mod is not None else None
    if fn is None:
        merged: dict[str, Any] = merge_patch(live or {}, applied)
        return merged
    conflict_cls = getattr(mod, "ApplyConflict", None)
    patch_error = getattr(_module("patch"), "PatchError", None)
    try:
        result: dict[str, Any] = fn(live, applied, manager=manager, force=force, now=now,
                                    operation_subresource=subresource)
    except Exception as exc:
        if conflict_cls is not None and isinstance(exc, conflict_cls):
            raise ApplyConflicts(list(getattr(exc, "conflicts", [])),
                                 message=str(getattr(exc, "message", "")),
                                 causes=list(getattr(exc, "causes", []))) from exc
        if patch_error is not None and isinstance(exc, patch_error):
            raise PatchFailed(str(exc)) from exc
        raise
    return result


def record_update(old: dict[str, Any] | None, new: dict[str, Any], *, manager: str, now: str,
                  subresource: str = "") -> None:
    """Record `manager` as the owner of the fields this non-apply write changed."""
    fn = _fn("apply", "record_update")
    if fn is not None:
        fn(old, new, manager=manager, now=now, subresource=subresource)


def default_crd(crd: dict[str, Any]) -> None:
    fn = _fn("crds", "default_crd")
    if fn is not None:
        fn(crd)
        return
    spec = crd.setdefault("spec", {})
    names = spec.get("names")
    if isinstance(names, dict) and names.get("kind"):
        names.setdefault("singular", str(names["kind"]).lower())
        names.setdefault("listKind", f"{names['kind']}List")
    spec.setdefault("conversion", {"strategy": "None"})
    status = crd.setdefault("status", {})
    stored = status.setdefault("storedVersions", [])
    for v in spec.get("versions") or []:
        if isinstance(v, dict) and v.get("storage") and v.get("name") not in stored:
            stored.append(v.get("name"))
    status.setdefault("conditions", [])
    status.setdefault("acceptedNames", {"plural": "", "kind": ""})


def protobuf_decode(body: bytes) -> dict[str, Any]:
    mod = _module("protobuf")
    fn = getattr(mod, "decode", None) if mod is not None else None
    if fn is None:
        raise ProtobufUnsupported("protobuf request bodies are not supported")
    error = getattr(mod, "ProtobufError", None)
    try:
        result: dict[str, Any] = fn(body)
    except Exception as exc:
        if error is not None and isinstance(exc, error):
            raise ProtobufUnsupported(str(exc)) from exc
        raise
    return result

