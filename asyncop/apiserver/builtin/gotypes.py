"""kube's OpenAPI definitions compiled into Go-type decoders: one compact tree per kind.

kube-apiserver decodes a built-in object into its Go struct; what that decode accepts, and
how its errors are worded (`…into Go struct field PodSpec.spec.containers of type
[]v1.Container`), follows from the Go types. `compiled(minor, group, version, kind)` builds,
once per (minor, kind), a tree of `Node`s from `asyncop.kubespec.definitions(minor)` that the
decoder (`decode.py`) walks in a tight loop — the raw schema is never read per request.

A `Node` is a tuple `(tag, go_type, a, b, c)`:

- `STRUCT`: `a` = {json field name: Node}, `b` = the Go struct's name (`PodSpec`), `c` =
  {json field name: Python type} for its plain fields (`str`, `bool`, `int`; `list` and
  `dict` for lists and maps of strings), which the fast walk checks without descending;
- `LIST`: `a` = the item Node, `b` = the list-map keys (a tuple), True for a set, else None
  (server-side apply names list items by them); `MAP`: `a` = the value Node (keys are strings);
- scalars `STRING`, `BOOL`, `INT32`, `INT64`, `INT` (`type: integer` without a format),
  `FLOAT`, `BYTES` (`format: byte`, Go `[]byte`, base64 text);
- types with their own `UnmarshalJSON`: `TIME` (metav1.Time) and `MICROTIME`, with `a` = the
  Go time layout their UnmarshalJSON parses with (`goerrors.time_error`'s), `QUANTITY`,
  `INT_OR_STRING`; `ANY` takes any JSON (RawExtension, FieldsV1, apiextensions JSON and the
  JSONSchemaProps-or-X unions, whose own decoders are not strict).

`go_type` is the text Go's `reflect.Type.String()` gives for the field: named types come from
`gonames.FIELD_TYPES` (kube's Go declarations, e.g. `v1.Protocol` for a `protocol` string);
other types are derived from the schema (`[]v1.Container`, `map[string]string`, `int32`).
`INT32_LIMIT` and `INT64_LIMIT` bound Go's int32 and int64 (`-limit <= n < limit`).

Invariants: a compiled tree is immutable and shared by every request; cycles (JSONSchemaProps
refers to itself) share nodes instead of recursing; compiling never raises on the data.
"""

from __future__ import annotations

import functools
from typing import Any

from asyncop import kubespec
from asyncop.apiserver.builtin import gonames
from asyncop.apiserver.builtin.goerrors import MICRO_LAYOUT, RFC3339_LAYOUT

__all__ = [
    "ANY", "BOOL", "BYTES", "FLOAT", "INT", "INT32", "INT32_LIMIT", "INT64", "INT64_LIMIT",
    "INT_OR_STRING", "LIST", "MAP", "MICROTIME", "QUANTITY", "STRING", "STRUCT", "TIME", "Node",
    "compiled",
]

Node = tuple[int, str, Any, Any, Any]

STRUCT, LIST, MAP, STRING, BOOL, INT32, INT64, INT, FLOAT, BYTES = range(10)
TIME, MICROTIME, QUANTITY, INT_OR_STRING, ANY = range(10, 15)
INT32_LIMIT = 1 << 31
INT64_LIMIT = 1 << 63

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_APIEXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
_SPECIAL: dict[str, Node] = {
    _META + "Time": (TIME, "v1.Time", RFC3339_LAYOUT, None, None),
    _META + "MicroTime": (MICROTIME, "v1.MicroTime", MICRO_LAYOUT, None, None),
    _META + "FieldsV1": (ANY, "v1.FieldsV1", None, None, None),
    "io.k8s.apimachinery.pkg.runtime.RawExtension": (ANY, "runtime.RawExtension", None, None, None),
    kubespec.QUANTITY: (QUANTITY, "resource.Quantity", None, None, None),
    kubespec.INT_OR_STRING: (INT_OR_STRING, "intstr.IntOrString", None, None, None),
    _APIEXT + "JSON": (ANY, "v1.JSON", None, None, None),
    _APIEXT + "JSONSchemaPropsOrArray": (ANY, "v1.JSONSchemaPropsOrArray", None, None, None),
    _APIEXT + "JSONSchemaPropsOrBool": (ANY, "v1.JSONSchemaPropsOrBool", None, None, None),
    _APIEXT + "JSONSchemaPropsOrStringArray":
        (ANY, "v1.JSONSchemaPropsOrStringArray", None, None, None),
}
_SCALARS: dict[tuple[Any, Any], Node] = {
    ("string", None): (STRING, "string", None, None, None),
    ("string", "byte"): (BYTES, "[]uint8", None, None, None),
    ("string", "date-time"): (TIME, "v1.Time", RFC3339_LAYOUT, None, None),
    ("boolean", None): (BOOL, "bool", None, None, None),
    ("integer", "int32"): (INT32, "int32", None, None, None),
    ("integer", "int64"): (INT64, "int64", None, None, None),
    ("integer", None): (INT, "int", None, None, None),
    ("number", "double"): (FLOAT, "float64", None, None, None),
    ("number", None): (FLOAT, "float64", None, None, None),
}
_ANY: Node = (ANY, "interface {}", None, None, None)
# Python types of the fields the fast walk checks with one lookup (ints: within int32 there)
_PLAIN: dict[int, type] = {STRING: str, BOOL: bool, INT32: int, INT64: int, INT: int}


def _go_name(definition: str) -> str:
    """`io.k8s.api.core.v1.PodSpec` → `v1.PodSpec` (Go's package name, then the type)."""
    parts = definition.rsplit(".", 2)
    return f"{parts[-2]}.{parts[-1]}" if len(parts) == 3 else definition


class _Compiler:
    def __init__(self, defs: kubespec.Definitions) -> None:
        self.defs = defs
        self.structs: dict[str, Node] = {}

    def definition(self, name: str) -> Node:
        special = _SPECIAL.get(name)
        if special is not None:
            return special
        node = self.structs.get(name)
        if node is not None:
            return node
        schema = self.defs.schemas.get(name)
        if not isinstance(schema, dict):
            return _ANY
        if schema.get("type") != "object" or "properties" not in schema:
            node = self.schema(schema, name)
            self.structs[name] = node
            return node
        fields: dict[str, Node] = {}
        simple: dict[str, type] = {}
        short = name.rsplit(".", 1)[-1]
        node = (STRUCT, _go_name(name), fields, short, simple)
        self.structs[name] = node  # before the fields: recursive types share this node
        named = gonames.FIELD_TYPES.get(name, {})
        for key, prop in (schema.get("properties") or {}).items():
            if isinstance(prop, dict):
                fields[key] = _renamed(self.schema(prop, ""), named.get(key))
        for key, child in fields.items():
            plain = _PLAIN.get(child[0])
            if plain is not None:
                simple[key] = plain
            elif child[0] in (LIST, MAP) and child[2][0] == STRING:
                simple[key] = list if child[0] == LIST else dict
        return node

    def schema(self, schema: dict[str, Any], owner: str) -> Node:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.definition(kubespec.ref_name(ref))
        kind = schema.get("type")
        if kind == "array":
            items = schema.get("items")
            item = self.schema(items, "") if isinstance(items, dict) else _ANY
            list_type = schema.get("x-kubernetes-list-type")
            keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
            return (LIST, "[]" + item[1], item,
                    keys if list_type == "map" and keys else list_type == "set" or None, None)
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                value = self.schema(extra, "")
                return (MAP, "map[string]" + value[1], value, None, None)
            if owner and "properties" not in schema:
                return (STRUCT, _go_name(owner), {}, owner.rsplit(".", 1)[-1], {})
            return _ANY
        scalar = _SCALARS.get((kind, schema.get("format")))
        return scalar if scalar is not None else _ANY


def _renamed(node: Node, go_type: str | None) -> Node:
    """`node` under the Go type its field declares (a named type such as `v1.Protocol`);
    element types of named lists and maps follow (`[]v1.PersistentVolumeAccessMode`)."""
    if not go_type or go_type == node[1]:
        return node
    tag = node[0]
    underlying = gonames.UNDERLYING.get(go_type, go_type)
    if tag == LIST and underlying.startswith("[]"):
        return (LIST, go_type, _renamed(node[2], underlying[2:]), node[3], None)
    if tag == MAP and underlying.startswith("map["):
        value = underlying[underlying.index("]") + 1:]
        return (MAP, go_type, _renamed(node[2], value), None, None)
    if tag == STRUCT:
        return node
    return (tag, go_type, node[2], node[3], node[4])


@functools.cache
def _compiler(minor: int) -> _Compiler:
    return _Compiler(kubespec.definitions(minor))


@functools.cache
def compiled(minor: int, group: str, version: str, kind: str) -> Node | None:
    """The decoder tree of one top-level kind of kube 1.<minor> (None: kube has no such
    kind in that minor, so nothing is decoded). Kinds of one minor share their subtrees."""
    compiler = _compiler(minor)
    name = compiler.defs.for_kind(group, version, kind)
    return compiler.definition(name) if name is not None else None
