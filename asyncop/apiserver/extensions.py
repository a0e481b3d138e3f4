"""Adapters over the pure helper modules (schema, crds, tables, openapi, patch, apply,
protobuf): the one place where the server calls them and translates their exceptions.

The helpers are written and tested on their own; the server sees only these functions and
three exception types (`PatchFailed`, `ApplyConflicts`, `ProtobufUnsupported`). Invariant:
every function here is pure (no I/O, no store access).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver import apply, crds, openapi, patch, protobuf, schema, tables
from asyncop.apiserver.resources import ResourceType


class PatchFailed(Exception):
    """A patch document could not be applied (message is the server's text)."""


class ApplyConflicts(Exception):
    """Server-side apply conflicts: readable lines, the Status message and its causes."""

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
    return crds.validate_crd(crd)


def validate_crd_update(new: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
    """`validate_crd(new)` plus kube's update rules (immutable group/scope, stored versions)."""
    return crds.validate_crd_update(new, old)


def resource_types(crd: dict[str, Any]) -> list[ResourceType]:
    return crds.resource_types(crd)


def default_crd(crd: dict[str, Any]) -> None:
    crds.default_crd(crd)


def schema_validate(obj: dict[str, Any], openapi_schema: dict[str, Any]) -> list[StatusCause]:
    return schema.validate(obj, openapi_schema)


def schema_defaults(obj: dict[str, Any], openapi_schema: dict[str, Any]) -> None:
    schema.apply_defaults(obj, openapi_schema)


def schema_prune(obj: dict[str, Any], openapi_schema: dict[str, Any]) -> list[str]:
    """Drop unknown fields in place; returns their paths (e.g. `spec.foo`)."""
    return schema.prune(obj, openapi_schema)


# --- tables and openapi -----------------------------------------------------------------------

def to_table(rt: ResourceType, objs: list[dict[str, Any]], *,
             include_object: str = "Metadata", now: datetime | None = None,
             include_columns: bool = True) -> dict[str, Any]:
    return tables.to_table(rt, objs, include_object=include_object, now=now,
                           include_columns=include_columns)


def openapi_v3_index(types: list[ResourceType], *, server_version: str) -> dict[str, Any]:
    return openapi.openapi_v3_index(types, server_version=server_version)


def openapi_v3_doc(types: list[ResourceType], group: str, version: str, *,
                   server_version: str) -> dict[str, Any] | None:
    """The group/version document, or None when nothing is served there (404)."""
    if not any(t.group == group and t.version == version for t in types):
        return None
    return openapi.openapi_v3_doc(types, group, version, server_version=server_version)


def openapi_v2_json(types: list[ResourceType], *, server_version: str) -> dict[str, Any]:
    return openapi.openapi_v2(types, server_version=server_version)


def openapi_v2_proto(git_version: str) -> bytes:
    """The minimal gnostic openapi_v2.Document: swagger="2.0", info{title, version}."""
    return openapi.openapi_v2_proto(server_version=git_version)


# --- patches ----------------------------------------------------------------------------------

def merge_patch(doc: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    try:
        return patch.merge_patch(doc, body)
    except patch.PatchError as exc:
        raise PatchFailed(str(exc)) from exc


def strategic_merge_patch(doc: dict[str, Any], body: dict[str, Any], *,
                          kind: str) -> dict[str, Any]:
    try:
        return patch.strategic_merge_patch(doc, body, kind=kind)
    except patch.PatchError as exc:
        raise PatchFailed(str(exc)) from exc


def json_patch(doc: dict[str, Any], ops: list[Any]) -> dict[str, Any]:
    try:
        return patch.json_patch(doc, ops)
    except patch.PatchError as exc:
        raise PatchFailed(str(exc)) from exc


def server_side_apply(live: dict[str, Any] | None, applied: dict[str, Any], *, manager: str,
                      force: bool, now: str, subresource: str = "",
                      ignore_fields: tuple[str, ...] = (),
                      schema: dict[str, Any] | None = None) -> dict[str, Any]:
    try:
        return apply.server_side_apply(live, applied, manager=manager, force=force, now=now,
                                       operation_subresource=subresource,
                                       ignore_fields=ignore_fields, schema=schema)
    except apply.ApplyConflict as exc:
        raise ApplyConflicts(list(exc.conflicts), message=exc.message,
                             causes=[dict(c) for c in exc.causes]) from exc
    except patch.PatchError as exc:
        raise PatchFailed(str(exc)) from exc


def record_update(old: dict[str, Any] | None, new: dict[str, Any], *, manager: str, now: str,
                  subresource: str = "", schema: dict[str, Any] | None = None) -> None:
    """Record `manager` as the owner of the fields this non-apply write changed (`schema`:
    a custom resource version's openAPIV3Schema, for its list types)."""
    apply.record_update(old, new, manager=manager, now=now, subresource=subresource,
                        schema=schema)


def protobuf_decode(body: bytes) -> dict[str, Any]:
    try:
        return protobuf.decode(body)
    except protobuf.ProtobufError as exc:
        raise ProtobufUnsupported(str(exc)) from exc
