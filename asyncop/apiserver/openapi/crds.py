"""Custom resources' definitions in the OpenAPI documents, as kube's CRD builder publishes them.

kube (apiextensions' openapi/builder, buildKubeNative and buildListSchema) publishes a CRD
version's `openAPIV3Schema` as its structural schema with:

- `x-kubernetes-int-or-string` unfolded into `anyOf: [integer, string]` (kube: Unfold);
- `metadata` a reference to ObjectMeta, `apiVersion` and `kind` TypeMeta's properties, and
  the same three on every `x-kubernetes-embedded-resource` object;
- `x-kubernetes-group-version-kind`; and a `<Kind>List` definition beside it.

For v2 (kube: ToStructuralOpenAPIV2, then PruneDefaults) junctors (`allOf`, `anyOf`,
`oneOf`, `not`) and defaults are dropped, a nullable value loses its type, items and
properties, `x-kubernetes-preserve-unknown-fields` drops items and properties (and the type
of an object), an array without items loses its type, and a kind whose root preserves
unknown fields is just `type: object` — all so kubectl's v2 parser accepts it.

Invariants: pure; the CRD's own schema is never mutated (everything here builds copies);
references use the v3 prefix (the v2 document converts them with `schemas.to_v2`).
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.openapi.schemas import REF_V3, wrap_refs
from asyncop.kubespec import Definitions

__all__ = ["kind_schema", "list_schema"]

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_TYPE_META_SOURCE = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
_CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
_METADATA_DOC = f"Standard object's metadata. More info: {_CONVENTIONS}#metadata"
_LIST_METADATA_DOC = f"Standard list metadata. More info: {_CONVENTIONS}#metadata"
_EMBEDDED_API_VERSION = (
    "apiVersion defines the versioned schema of this representation of an object. More info: "
    f"{_CONVENTIONS}#resources")
_EMBEDDED_KIND = (
    "kind is a string value representing the type of this object. In CamelCase. More info: "
    f"{_CONVENTIONS}#types-kinds")

_GENERIC = ("description", "type", "title", "default", "nullable")
_VALUE_VALIDATION = (
    "format", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
    "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "enum",
    "maxProperties", "minProperties", "required")
_JUNCTORS = ("allOf", "oneOf", "anyOf")
_EXTENSIONS = (
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
    "x-kubernetes-map-type", "x-kubernetes-validations")
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]

Schema = dict[str, Any]


def _nested(value: Any) -> Any:
    """A value validation inside a junctor: only value validations and junctors survive."""
    if not isinstance(value, dict):
        return {}
    out: Schema = {k: value[k] for k in _VALUE_VALIDATION if k in value}
    for key in _JUNCTORS:
        if isinstance(value.get(key), list):
            out[key] = [_nested(v) for v in value[key]]
    if "not" in value:
        out["not"] = _nested(value["not"])
    if isinstance(value.get("properties"), dict):
        out["properties"] = {k: _nested(v) for k, v in value["properties"].items()}
    if isinstance(value.get("items"), dict):
        out["items"] = _nested(value["items"])
    return out


def _structural(schema: Any) -> Schema:
    """What kube's structural schema keeps of a CRD schema (kube: NewStructural and
    ToKubeOpenAPI), with int-or-string unfolded (kube: Unfold)."""
    if not isinstance(schema, dict):
        return {}
    out: Schema = {}
    for key in (*_GENERIC, *_VALUE_VALIDATION, *_EXTENSIONS):
        if key in schema and not (key in ("nullable", "x-kubernetes-preserve-unknown-fields",
                                          "x-kubernetes-embedded-resource",
                                          "x-kubernetes-int-or-string")
                                  and schema[key] is not True):
            out[key] = schema[key]
    for key in _JUNCTORS:
        if isinstance(schema.get(key), list):
            out[key] = [_nested(v) for v in schema[key]]
    if "not" in schema:
        out["not"] = _nested(schema["not"])
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _structural(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("items"), dict):
        out["items"] = _structural(schema["items"])
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _structural(extra)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    if out.get("x-kubernetes-int-or-string") is True:
        _unfold(out)
    return out


def _unfold(schema: Schema) -> None:
    any_of = schema.get("anyOf")
    all_of = schema.get("allOf")
    if any_of == _INT_OR_STRING or (isinstance(all_of, list) and all_of
                                    and all_of[0] == {"anyOf": _INT_OR_STRING}):
        return
    if any_of is None:
        schema["anyOf"] = [dict(t) for t in _INT_OR_STRING]
    else:
        schema["allOf"] = [{"anyOf": [dict(t) for t in _INT_OR_STRING]}, *(all_of or [])]


def _to_v2(schema: Schema) -> None:
    """kube's ToStructuralOpenAPIV2 and PruneDefaults, in place on a structural copy."""
    for key in (*_JUNCTORS, "not", "default"):
        schema.pop(key, None)
    if schema.pop("nullable", False):
        for key in ("type", "items", "properties"):
            schema.pop(key, None)
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    if preserve:
        schema.pop("items", None)
        schema.pop("properties", None)
    if "items" not in schema and schema.get("type") == "array":
        del schema["type"]
    if preserve and schema.get("type") == "object":
        del schema["type"]
    props = schema.get("properties") or {}
    required = schema.get("required")
    if isinstance(required, list):
        kept = [r for r in required if not (isinstance(r, str) and isinstance(props.get(r), dict)
                                             and props[r].get("nullable") is True)]
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra.get("nullable") is True:
            kept = []
        if kept:
            schema["required"] = kept
        else:
            del schema["required"]
    for child in props.values():
        _to_v2(child)
    if isinstance(schema.get("items"), dict):
        _to_v2(schema["items"])
    if isinstance(schema.get("additionalProperties"), dict):
        _to_v2(schema["additionalProperties"])


def _type_meta(defs: Definitions) -> tuple[Schema, Schema]:
    props = defs[_TYPE_META_SOURCE]["properties"]
    return dict(props["apiVersion"]), dict(props["kind"])


def _metadata(description: str) -> Schema:
    return {"$ref": REF_V3 + OBJECT_META, "description": description}


def _embedded(schema: Schema, *, v2: bool) -> None:
    """kube's addEmbeddedProperties: TypeMeta and ObjectMeta on embedded resources."""
    for child in (schema.get("properties") or {}).values():
        _embedded(child, v2=v2)
    if isinstance(schema.get("items"), dict):
        _embedded(schema["items"], v2=v2)
    if isinstance(schema.get("additionalProperties"), dict):
        _embedded(schema["additionalProperties"], v2=v2)
    if v2 and schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return
    if schema.get("x-kubernetes-embedded-resource") is not True:
        return
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": _EMBEDDED_API_VERSION}
    props["kind"] = {"type": "string", "description": _EMBEDDED_KIND}
    props["metadata"] = _metadata(_METADATA_DOC)
    required = list(schema.get("required") or [])
    for key in ("kind", "apiVersion"):
        if key not in required:
            required.append(key)
    schema["required"] = required


def kind_schema(rt: ResourceType, defs: Definitions, *, v2: bool) -> Schema:
    """The definition of a custom resource kind (v3-form references; v3 also has its
    `$ref` siblings wrapped in `allOf`)."""
    gvk = [{"group": rt.group, "version": rt.version, "kind": rt.kind}]
    root = rt.schema
    if not isinstance(root, dict) or (
            v2 and root.get("x-kubernetes-preserve-unknown-fields") is True):
        return {"type": "object", "x-kubernetes-group-version-kind": gvk}
    out = _structural(root)
    if v2:
        _to_v2(out)
    props = out.setdefault("properties", {})
    props["metadata"] = _metadata(_METADATA_DOC)
    props["apiVersion"], props["kind"] = _type_meta(defs)
    _embedded(out, v2=v2)
    out["x-kubernetes-group-version-kind"] = gvk
    return out if v2 else wrap_refs(out)


def list_schema(rt: ResourceType, kind_name: str, defs: Definitions, *, v2: bool) -> Schema:
    """The `<Kind>List` definition kube publishes beside a custom resource kind."""
    api_version, kind = _type_meta(defs)
    out: Schema = {
        "description": f"{rt.list_kind_name} is a list of {rt.kind}",
        "required": ["items"],
        "properties": {
            "items": {"type": "array", "items": {"$ref": REF_V3 + kind_name},
                      "description": f"List of {rt.plural}. More info: {_CONVENTIONS}"},
            "metadata": {"$ref": REF_V3 + LIST_META, "description": _LIST_METADATA_DOC},
            "apiVersion": api_version,
            "kind": kind,
        },
        "x-kubernetes-group-version-kind": [
            {"group": rt.group, "version": rt.version, "kind": rt.list_kind_name}],
    }
    return out if v2 else wrap_refs(out)
