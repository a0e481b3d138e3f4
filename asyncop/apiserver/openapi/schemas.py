"""Static OpenAPI pieces: definition names, ObjectMeta, and open schemas for built-in kinds.

Invariants: definition names follow kube (`io.k8s.api.core.v1.ConfigMap`,
`io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition`,
`com.example.v1.Widget` for custom groups); built-in schemas list their well-known top-level
fields for `kubectl explain` but preserve unknown fields, so they never reject a manifest.
"""

from __future__ import annotations

from typing import Any

OBJECT_META_NAME = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

_STR: dict[str, Any] = {"type": "string"}
_STR_MAP: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
_OPEN: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

OBJECT_META: dict[str, Any] = {
    "type": "object",
    "description": "ObjectMeta is metadata that all persisted resources must have.",
    "properties": {
        "name": {**_STR, "description": "Name must be unique within a namespace."},
        "generateName": {**_STR, "description": "Optional prefix for a server-generated name."},
        "namespace": {**_STR, "description": "Namespace defines the space for the name."},
        "uid": _STR,
        "resourceVersion": _STR,
        "generation": {"type": "integer", "format": "int64"},
        "creationTimestamp": {"type": "string", "format": "date-time"},
        "deletionTimestamp": {"type": "string", "format": "date-time"},
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
        "labels": {**_STR_MAP, "description": "Map of string keys and values for selection."},
        "annotations": {**_STR_MAP, "description": "Unstructured key value map."},
        "finalizers": {"type": "array", "items": _STR},
        "ownerReferences": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["apiVersion", "kind", "name", "uid"],
                "properties": {
                    "apiVersion": _STR,
                    "kind": _STR,
                    "name": _STR,
                    "uid": _STR,
                    "controller": {"type": "boolean"},
                    "blockOwnerDeletion": {"type": "boolean"},
                },
            },
        },
        "managedFields": {"type": "array", "items": _OPEN},
    },
}

#: top-level fields (besides apiVersion/kind/metadata) that `kubectl explain` should show.
_TOP_LEVEL: dict[str, tuple[str, ...]] = {
    "ConfigMap": ("data", "binaryData", "immutable"),
    "Secret": ("data", "stringData", "type", "immutable"),
    "ServiceAccount": ("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    "Role": ("rules",),
    "ClusterRole": ("rules", "aggregationRule"),
    "RoleBinding": ("roleRef", "subjects"),
    "ClusterRoleBinding": ("roleRef", "subjects"),
    "Event": (
        "involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp",
        "count", "type", "eventTime", "series", "action", "related", "reportingComponent",
        "reportingInstance", "regarding", "note", "reportingController",
    ),
}
_FIELD_TYPES: dict[str, dict[str, Any]] = {
    "data": _STR_MAP,
    "binaryData": _STR_MAP,
    "stringData": _STR_MAP,
    "immutable": {"type": "boolean"},
    "automountServiceAccountToken": {"type": "boolean"},
    "type": _STR,
    "reason": _STR,
    "message": _STR,
    "note": _STR,
    "action": _STR,
    "count": {"type": "integer", "format": "int32"},
    "rules": {"type": "array", "items": _OPEN},
    "subjects": {"type": "array", "items": _OPEN},
    "secrets": {"type": "array", "items": _OPEN},
    "imagePullSecrets": {"type": "array", "items": _OPEN},
}


def definition_name(group: str, version: str, kind: str) -> str:
    """kube's OpenAPI definition name of a kind."""
    if group == "apiextensions.k8s.io":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"
    if not group:
        return f"io.k8s.api.core.{version}.{kind}"
    if group.endswith(".k8s.io") or "." not in group:
        return f"io.k8s.api.{group.split('.')[0]}.{version}.{kind}"
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


def builtin_schema(kind: str, ref_prefix: str) -> dict[str, Any]:
    """An open schema for a built-in kind, listing its common top-level fields."""
    props: dict[str, Any] = {
        "apiVersion": {**_STR, "description": "APIVersion of the object."},
        "kind": {**_STR, "description": "Kind of the object."},
        "metadata": {"$ref": f"{ref_prefix}{OBJECT_META_NAME}"},
    }
    fields = _TOP_LEVEL.get(kind)
    if fields is None:
        props["spec"] = dict(_OPEN)
        props["status"] = dict(_OPEN)
    else:
        for f in fields:
            props[f] = dict(_FIELD_TYPES.get(f, _OPEN))
    return {
        "type": "object",
        "description": f"{kind} (served by the asyncop embedded API server).",
        "properties": props,
        "x-kubernetes-preserve-unknown-fields": True,
    }
