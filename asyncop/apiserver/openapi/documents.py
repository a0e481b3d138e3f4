"""OpenAPI documents that make kubectl 1.27-1.33 and Helm validate against our server.

`openapi_v3_index(types)` is `GET /openapi/v3`; `openapi_v3_doc(types, group, version)` is
`GET /openapi/v3/apis/<g>/<v>` (`api/v1` for core); `openapi_v2(types)` is the JSON swagger
of `GET /openapi/v2`, and `openapi_v2_proto(...)` the protobuf body kubectl and Helm ask for
(`Content-Type: application/com.github.proto-openapi.spec.v2.v1.0+protobuf`).

Invariants (docs/apiserver.md, "OpenAPI for kubectl"):
- every served kind has an item path whose `patch` operation carries
  `x-kubernetes-group-version-kind` and a `fieldValidation` query parameter, so kubectl
  leaves validation to the server (and sends `fieldValidation=Strict`);
- every kind has a schema in `components.schemas` tagged with a list-valued
  `x-kubernetes-group-version-kind` (for `kubectl explain`): custom resources use their
  CRD schema, built-ins an open object (`x-kubernetes-preserve-unknown-fields`) so valid
  manifests always pass;
- the v2 protobuf carries only `swagger` and `info` (no definitions: client-side schema
  validation has nothing to reject); the index hashes change whenever a GV document does.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import orjson

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.openapi.schemas import (
    OBJECT_META,
    OBJECT_META_NAME,
    builtin_schema,
    definition_name,
)

__all__ = [
    "PROTO_CONTENT_TYPE",
    "definition_name",
    "gv_key",
    "openapi_v2",
    "openapi_v2_proto",
    "openapi_v3_doc",
    "openapi_v3_index",
]

PROTO_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")


def gv_key(group: str, version: str) -> str:
    """The /openapi/v3 path key of a group/version (`api/v1`, `apis/apps/v1`)."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _gvk(rt: ResourceType) -> dict[str, str]:
    return {"group": rt.group, "version": rt.version, "kind": rt.kind}


def _base_path(rt: ResourceType) -> str:
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    if rt.namespaced:
        return f"{prefix}/namespaces/{{namespace}}/{rt.plural}"
    return f"{prefix}/{rt.plural}"


def _schema(rt: ResourceType) -> dict[str, Any]:
    """The definition of one kind, with `$ref`s into `#/components/schemas/`."""
    if rt.schema is not None:
        doc = copy.deepcopy(rt.schema)
        props = doc.setdefault("properties", {})
        props["apiVersion"] = {"type": "string", "description": "APIVersion of the object."}
        props["kind"] = {"type": "string", "description": "Kind of the object."}
        props["metadata"] = {"$ref": f"#/components/schemas/{OBJECT_META_NAME}"}
        doc.setdefault("type", "object")
    else:
        doc = builtin_schema(rt.kind, "#/components/schemas/")
    doc["x-kubernetes-group-version-kind"] = [_gvk(rt)]
    return doc


def _param(name: str, *, v3: bool, location: str = "query") -> dict[str, Any]:
    if v3:
        return {"name": name, "in": location, "schema": {"type": "string", "uniqueItems": True}}
    return {"name": name, "in": location, "type": "string", "uniqueItems": True}


def _operations(rt: ResourceType, ref: str, *, v3: bool, subresource: str = "") -> dict[str, Any]:
    gvk = _gvk(rt)
    body_ref = {"$ref": ref}
    suffix = f"{rt.kind}{subresource.title()}"

    def op(action: str, verb: str, params: tuple[str, ...]) -> dict[str, Any]:
        operation: dict[str, Any] = {
            "operationId": f"{verb}{suffix}",
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "parameters": [_param(p, v3=v3) for p in params],
        }
        if v3:
            content = {"application/json": {"schema": body_ref}}
            operation["responses"] = {"200": {"description": "OK", "content": content}}
        else:
            operation["responses"] = {"200": {"description": "OK", "schema": body_ref}}
        return operation

    patch_params = (*_WRITE_PARAMS, "force")
    item = {
        "get": op("get", "read", ()),
        "put": op("put", "replace", _WRITE_PARAMS),
        "patch": op("patch", "patch", patch_params),
    }
    if not subresource:
        item["delete"] = op("delete", "delete", ("dryRun",))
    return item


def _path_params(rt: ResourceType, *, v3: bool) -> list[dict[str, Any]]:
    params = [_param("name", v3=v3, location="path")]
    if rt.namespaced:
        params.append(_param("namespace", v3=v3, location="path"))
    for p in params:
        p["required"] = True
    return params


def _paths(rt: ResourceType, ref: str, *, v3: bool) -> dict[str, Any]:
    base = _base_path(rt)
    gvk = _gvk(rt)
    item = _operations(rt, ref, v3=v3)
    item["parameters"] = _path_params(rt, v3=v3)
    collection: dict[str, Any] = {
        "get": {
            "operationId": f"list{rt.kind}",
            "x-kubernetes-action": "list",
            "x-kubernetes-group-version-kind": gvk,
            "responses": {"200": {"description": "OK"}},
        },
        "post": {
            "operationId": f"create{rt.kind}",
            "x-kubernetes-action": "post",
            "x-kubernetes-group-version-kind": gvk,
            "parameters": [_param(p, v3=v3) for p in _WRITE_PARAMS],
            "responses": {"201": {"description": "Created"}},
        },
    }
    if rt.namespaced:
        collection["parameters"] = [_param("namespace", v3=v3, location="path")]
        collection["parameters"][0]["required"] = True
    paths: dict[str, Any] = {base: collection, f"{base}/{{name}}": item}
    if rt.has_status:
        status = _operations(rt, ref, v3=v3, subresource="status")
        status["parameters"] = _path_params(rt, v3=v3)
        paths[f"{base}/{{name}}/status"] = status
    return paths


def _info(version: str) -> dict[str, str]:
    return {"title": "Kubernetes", "version": version}


def openapi_v3_doc(
    types: list[ResourceType], group: str, version: str, *, server_version: str = "v1.33.0"
) -> dict[str, Any]:
    """The OpenAPI 3 document of one group/version (empty `paths` when nothing is served)."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for rt in sorted(types, key=lambda t: t.plural):
        if rt.group != group or rt.version != version:
            continue
        name = definition_name(rt.group, rt.version, rt.kind)
        schemas[name] = _schema(rt)
        paths.update(_paths(rt, f"#/components/schemas/{name}", v3=True))
    if schemas:
        schemas[OBJECT_META_NAME] = copy.deepcopy(OBJECT_META)
    return {
        "openapi": "3.0.0",
        "info": _info(server_version),
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _hash(doc: dict[str, Any]) -> str:
    raw = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha512(raw).hexdigest().upper()


def openapi_v3_index(
    types: list[ResourceType], *, server_version: str = "v1.33.0"
) -> dict[str, Any]:
    """`GET /openapi/v3`: one entry per served group/version, hashed by content."""
    gvs = sorted({(rt.group, rt.version) for rt in types})
    paths: dict[str, Any] = {}
    for group, version in gvs:
        key = gv_key(group, version)
        digest = _hash(openapi_v3_doc(types, group, version, server_version=server_version))
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def openapi_v2(types: list[ResourceType], *, server_version: str = "v1.33.0") -> dict[str, Any]:
    """`GET /openapi/v2` as JSON (swagger 2.0) for clients that accept JSON."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {OBJECT_META_NAME: copy.deepcopy(OBJECT_META)}
    for rt in sorted(types, key=lambda t: (t.group, t.version, t.plural)):
        name = definition_name(rt.group, rt.version, rt.kind)
        schema = _schema(rt)
        definitions[name] = _to_v2_refs(schema)
        paths.update(_paths(rt, f"#/definitions/{name}", v3=False))
    return {"swagger": "2.0", "info": _info(server_version), "paths": paths,
            "definitions": definitions}


def _to_v2_refs(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _to_v2_refs(v) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str):
            out["$ref"] = ref.replace("#/components/schemas/", "#/definitions/")
        return out
    if isinstance(node, list):
        return [_to_v2_refs(v) for v in node]
    return node


def _pb_string(field: int, value: bytes) -> bytes:
    return bytes([(field << 3) | 2]) + _varint(len(value)) + value


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def openapi_v2_proto(*, server_version: str = "v1.33.0") -> bytes:
    """The gnostic `openapi_v2.Document` protobuf with only `swagger` and `info`."""
    info = _pb_string(1, b"Kubernetes") + _pb_string(2, server_version.encode())
    return _pb_string(1, b"2.0") + _pb_string(2, info)
