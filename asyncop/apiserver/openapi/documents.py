"""The OpenAPI documents kube-apiserver serves, built from the served types and kubespec.

- `v3_document(types, group, version, ...)` is `GET /openapi/v3/apis/<g>/<v>` (`api/v1`
  for core): the group/version's paths (`routes`) and, in `components.schemas`, every
  definition they reference, transitively (kinds, their lists, ObjectMeta and the other
  meta types, Scale...), in builder3's form (`schemas.v3_definitions`);
- `v2_document(types, ...)` is the JSON of `GET /openapi/v2`: every served group/version's
  paths and definitions in swagger form (`schemas.v2_definitions`); its protobuf is
  `gnostic.encode_document` of it.

Built-in kinds are kube's own definitions of the minor the server reports (`kube_minor`);
a built-in kind that minor has no definition for is left out of the documents (with its
paths, so every `$ref` resolves). Custom resources are their CRD version's schema as kube's
CRD builder publishes it (`crds`). Every kind's definition carries
`x-kubernetes-group-version-kind` (`kubectl explain` finds kinds by it) and every PATCH
operation the `fieldValidation` parameter (kubectl then leaves validation to the server:
docs/apiserver.md, "OpenAPI for kubectl").

Invariants: pure; documents share the per-minor definition tables (`schemas`) and must not
be mutated; the same inputs always give the same document (sorted, so hashes are stable).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from asyncop import kubespec
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.openapi import crds
from asyncop.apiserver.openapi.params import Param
from asyncop.apiserver.openapi.routes import (
    Operation,
    PathItem,
    builtin_routes,
    crd_routes,
    group_root,
)
from asyncop.apiserver.openapi.schemas import (
    REF_V2,
    REF_V3,
    closure,
    custom_name,
    to_v2,
    v2_definitions,
    v3_definitions,
)

__all__ = [
    "group_versions",
    "gv_key",
    "kube_minor",
    "v2_document",
    "v3_document",
]

_TITLE = "Kubernetes"
_BEARER = {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication",
                           "name": "authorization", "in": "header"}}

Schema = dict[str, Any]


def gv_key(group: str, version: str) -> str:
    """The /openapi/v3 path key of a group/version (`api/v1`, `apis/apps/v1`)."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def kube_minor(minor: str) -> int:
    """The kubespec minor for the minor version the server reports (`"33"`, `"33+"`): the
    same one when its definitions are installed, else the nearest installed one."""
    digits = "".join(ch for ch in minor if ch.isdigit())
    wanted = int(digits) if digits else kubespec.DEFAULT_MINOR
    have = kubespec.minors()
    return min(have, key=lambda m: (abs(m - wanted), -m))


@dataclass(frozen=True, slots=True)
class _Kind:
    """A served resource with the definition names of its kind and list."""

    rt: ResourceType
    kind: str
    list: str


def _kinds(types: Iterable[ResourceType], defs: kubespec.Definitions) -> list[_Kind]:
    out = []
    for rt in sorted(types, key=lambda t: (t.group, t.version, t.plural)):
        if rt.is_custom:
            kind = custom_name(rt.group, rt.version, rt.kind)
            out.append(_Kind(rt, kind, custom_name(rt.group, rt.version, rt.list_kind_name)))
            continue
        kind_name = defs.for_kind(rt.group, rt.version, rt.kind)
        if kind_name is None:
            continue  # this minor has no such kind
        list_name = defs.for_kind(rt.group, rt.version, rt.list_kind_name) or ""
        out.append(_Kind(rt, kind_name, list_name))
    return out


def group_versions(types: Iterable[ResourceType], minor: int) -> list[tuple[str, str]]:
    """The group/versions that have a document (at least one documented kind)."""
    defs = kubespec.definitions(minor)
    return sorted({(k.rt.group, k.rt.version) for k in _kinds(types, defs)})


def _items_and_schemas(kinds: Sequence[_Kind], minor: int, defs: kubespec.Definitions, *,
                       v2: bool) -> tuple[list[PathItem], dict[str, Schema]]:
    items: list[PathItem] = []
    custom: dict[str, Schema] = {}
    gvs_with_builtins = sorted({(k.rt.group, k.rt.version) for k in kinds
                                if not k.rt.is_custom})
    items += [group_root(g, v) for g, v in gvs_with_builtins]
    for k in kinds:
        if k.rt.is_custom:
            custom[k.kind] = crds.kind_schema(k.rt, defs, v2=v2)
            custom[k.list] = crds.list_schema(k.rt, k.kind, defs, v2=v2)
            items += crd_routes(k.rt, k.kind, k.list, minor=minor, defs=defs)
        else:
            items += builtin_routes(k.rt, k.kind, k.list, minor=minor, defs=defs)
    return items, custom


def _referenced(items: Iterable[PathItem]) -> set[str]:
    names: set[str] = set()
    for item in items:
        for op in item.operations:
            if op.body:
                names.add(op.body)
            names.update(r.ref for r in op.responses if r.ref)
    return names


def _v3_param(q: Param) -> Schema:
    out: Schema = {"description": q.description, "in": q.location, "name": q.name}
    if q.required:
        out["required"] = True
    out["schema"] = {"type": q.kind, "uniqueItems": True}
    return out


def _gvk(op: Operation) -> dict[str, str] | None:
    if op.gvk is None or op.action is None:
        return None
    return {"group": op.gvk[0], "kind": op.gvk[2], "version": op.gvk[1]}


def _v3_operation(op: Operation) -> Schema:
    out: Schema = {"description": op.description, "operationId": op.operation_id}
    if op.params:
        out["parameters"] = [_v3_param(q) for q in op.params]
    if op.body:
        content = {ct: {"schema": {"$ref": REF_V3 + op.body}} for ct in op.consumes}
        body: Schema = {"content": content}
        if op.body_required:
            body["required"] = True
        out["requestBody"] = body
    responses: Schema = {}
    for r in op.responses:
        response: Schema = {"description": r.description}
        if r.ref:
            response["content"] = {ct: {"schema": {"$ref": REF_V3 + r.ref}}
                                   for ct in op.produces}
        responses[str(r.code)] = response
    out["responses"] = responses
    out["tags"] = [op.tag]
    return _with_extensions(out, op)


def _with_extensions(out: Schema, op: Operation) -> Schema:
    """An operation's kube extensions (the action and the group/version/kind), v2 and v3."""
    if op.action:
        out["x-kubernetes-action"] = op.action
    gvk = _gvk(op)
    if gvk:
        out["x-kubernetes-group-version-kind"] = gvk
    return out


def _v3_path(item: PathItem) -> Schema:
    out: Schema = {op.method: _v3_operation(op) for op in item.operations}
    if item.params:
        out["parameters"] = [_v3_param(q) for q in item.params]
    return out


def _info(server_version: str) -> dict[str, str]:
    return {"title": _TITLE, "version": server_version}


def v3_document(types: Iterable[ResourceType], group: str, version: str, *, minor: int,
                server_version: str) -> Schema:
    """The OpenAPI 3 document of one group/version (no paths when nothing is served)."""
    defs = kubespec.definitions(minor)
    kinds = [k for k in _kinds(types, defs) if (k.rt.group, k.rt.version) == (group, version)]
    items, custom = _items_and_schemas(kinds, minor, defs, v2=False)
    roots = _referenced(items) | {k.kind for k in kinds} | set(custom)
    builtin = v3_definitions(minor)
    schemas = {name: custom[name] if name in custom else builtin[name]
               for name in sorted(closure(minor, roots, custom))}
    return {
        "openapi": "3.0.0",
        "info": _info(server_version),
        "paths": {item.path: _v3_path(item) for item in sorted(items, key=lambda i: i.path)},
        "components": {"schemas": schemas, "securitySchemes": _BEARER},
    }


def _v2_param(q: Param) -> Schema:
    out: Schema = {"uniqueItems": True, "type": q.kind, "description": q.description,
                   "name": q.name, "in": q.location}
    if q.required:
        out["required"] = True
    return out


def _v2_operation(op: Operation) -> Schema:
    params = [(q.name, _v2_param(q)) for q in op.params]
    if op.body:
        body: Schema = {"name": "body", "in": "body", "schema": {"$ref": REF_V2 + op.body}}
        if op.body_required:
            body["required"] = True
        params.append(("body", body))
    out: Schema = {
        "description": op.description,
        "consumes": list(op.consumes),
        "produces": list(op.produces),
        "schemes": ["https"],
        "tags": [op.tag],
        "operationId": op.operation_id,
    }
    if params:
        out["parameters"] = [p for _, p in sorted(params, key=lambda np: np[0])]
    responses: Schema = {}
    for r in op.responses:
        response: Schema = {"description": r.description}
        if r.ref:
            response["schema"] = {"$ref": REF_V2 + r.ref}
        responses[str(r.code)] = response
    out["responses"] = responses
    return _with_extensions(out, op)


def _v2_path(item: PathItem) -> Schema:
    out: Schema = {op.method: _v2_operation(op) for op in item.operations}
    if item.params:
        out["parameters"] = [_v2_param(q) for q in item.params]
    return out


def v2_document(types: Iterable[ResourceType], *, minor: int, server_version: str) -> Schema:
    """`GET /openapi/v2` as JSON (swagger 2.0): every documented kind, its paths and the
    definitions they reference."""
    defs = kubespec.definitions(minor)
    kinds = _kinds(types, defs)
    items, custom = _items_and_schemas(kinds, minor, defs, v2=True)
    roots = _referenced(items) | {k.kind for k in kinds} | set(custom)
    builtin = v2_definitions(minor)
    definitions = {name: to_v2(custom[name]) if name in custom else builtin[name]
                   for name in sorted(closure(minor, roots, custom))}
    return {
        "swagger": "2.0",
        "info": _info(server_version),
        "paths": {item.path: _v2_path(item) for item in sorted(items, key=lambda i: i.path)},
        "definitions": definitions,
        "securityDefinitions": _BEARER,
        "security": [{"BearerToken": []}],
    }
