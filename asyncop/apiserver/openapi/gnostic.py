"""Protobuf encoding of an OpenAPI v2 document: gnostic's `openapi.v2.Document`.

kube-apiserver answers `/openapi/v2` in protobuf (kube-openapi's ToProtoBinary: the JSON
swagger parsed by gnostic, then marshalled) and kubectl 1.27/1.28 and Helm read it that way
(docs/apiserver.md, "OpenAPI for kubectl"). `encode_document(doc)` turns the JSON swagger
(as a dict) into the same message. Field numbers are those of gnostic-models'
`openapiv2/OpenAPIv2.proto` (Document, Info, Paths, PathItem, Operation, ParametersItem,
Parameter, BodyParameter, NonBodyParameter with its query/path/header/form sub-schemas,
Responses, Response, Schema, Definitions, NamedSchema, Properties, ItemsItem, TypeItem,
AdditionalPropertiesItem, SecurityDefinitions, SecurityRequirement, Tag, NamedAny, Any).

Invariants (proto3 wire format, as Go's marshaller writes it): fields in field-number order;
empty strings, false and zero scalars omitted, except a boolean chosen in a oneof; maps
(`definitions`, `properties`, `paths`, responses, vendor extensions) as repeated named
entries sorted by name, as kube's JSON has them; every `x-…` key becomes a vendor extension
whose `Any.yaml` holds the value as JSON text (JSON is YAML, which is how kube and kubectl
read it back). Keys the message has no field for are left out. Pure.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any

import orjson

__all__ = ["encode_document"]

Encoder = Callable[[Any], bytes]


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tag(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _bytes(field: int, payload: bytes) -> bytes:
    return _tag(field, 2) + _varint(len(payload)) + payload


def _string(field: int, value: Any) -> bytes:
    if isinstance(value, str) and value:
        return _bytes(field, value.encode())
    return b""


def _strings(field: int, value: Any) -> bytes:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return b""
    return b"".join(_bytes(field, v.encode()) for v in value if isinstance(v, str))


def _bool(field: int, value: Any, *, oneof: bool = False) -> bytes:
    if value is True or (oneof and value is False):
        return _tag(field, 0) + (b"\x01" if value else b"\x00")
    return b""


def _int(field: int, value: Any) -> bytes:
    if isinstance(value, int) and not isinstance(value, bool) and value:
        return _tag(field, 0) + _varint(value)
    return b""


def _double(field: int, value: Any) -> bytes:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value:
        try:
            number = float(value)
        except OverflowError:  # an integer beyond a double, as Go's decoder rounds it
            number = float("inf") if value > 0 else float("-inf")
        return _tag(field, 1) + struct.pack("<d", number)
    return b""


def _any(value: Any) -> bytes:
    """gnostic's Any: field 2 holds the value as YAML (here JSON text, a YAML subset)."""
    return _string(2, orjson.dumps(value).decode())


def _any_field(field: int, value: Any) -> bytes:
    return _bytes(field, _any(value))


def _extensions(field: int, node: Mapping[str, Any]) -> bytes:
    out = b""
    for name in sorted(k for k in node if k.startswith("x-")):
        out += _bytes(field, _string(1, name) + _bytes(2, _any(node[name])))
    return out


def _named(field: int, entries: Any, encode: Encoder) -> bytes:
    """A JSON map as repeated {name = 1, value = 2} entries, sorted by name."""
    if not isinstance(entries, dict):
        return b""
    return b"".join(_bytes(field, _string(1, name) + _bytes(2, encode(entries[name])))
                    for name in sorted(entries))


def _schema(s: Any) -> bytes:
    if not isinstance(s, dict):
        return b""
    out = _string(1, s.get("$ref")) + _string(2, s.get("format")) + _string(3, s.get("title"))
    out += _string(4, s.get("description"))
    if "default" in s:
        out += _any_field(5, s["default"])
    out += _double(6, s.get("multipleOf")) + _double(7, s.get("maximum"))
    out += _bool(8, s.get("exclusiveMaximum")) + _double(9, s.get("minimum"))
    out += _bool(10, s.get("exclusiveMinimum"))
    out += _int(11, s.get("maxLength")) + _int(12, s.get("minLength"))
    out += _string(13, s.get("pattern"))
    out += _int(14, s.get("maxItems")) + _int(15, s.get("minItems"))
    out += _bool(16, s.get("uniqueItems"))
    out += _int(17, s.get("maxProperties")) + _int(18, s.get("minProperties"))
    out += _strings(19, s.get("required"))
    if isinstance(s.get("enum"), list):
        out += b"".join(_any_field(20, v) for v in s["enum"])
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        out += _bytes(21, _bytes(1, _schema(extra)))
    elif isinstance(extra, bool):
        out += _bytes(21, _bool(2, extra, oneof=True))
    if "type" in s:
        out += _bytes(22, _strings(1, s["type"]))
    items = s.get("items")
    if isinstance(items, (dict, list)):
        listed = items if isinstance(items, list) else [items]
        out += _bytes(23, b"".join(_bytes(1, _schema(i)) for i in listed))
    if isinstance(s.get("allOf"), list):
        out += b"".join(_bytes(24, _schema(i)) for i in s["allOf"])
    if isinstance(s.get("properties"), dict):
        out += _bytes(25, _named(1, s["properties"], _schema))
    out += _string(26, s.get("discriminator")) + _bool(27, s.get("readOnly"))
    if "example" in s:
        out += _any_field(30, s["example"])
    return out + _extensions(31, s)


def _simple_parameter(p: Mapping[str, Any], *, query: bool) -> bytes:
    """Query/form-data (query=True) or path/header sub-schemas: the same fields, the query
    ones one number later from `allow_empty_value` (5) on."""
    shift = 1 if query else 0
    out = _bool(1, p.get("required")) + _string(2, p.get("in"))
    out += _string(3, p.get("description")) + _string(4, p.get("name"))
    if query:
        out += _bool(5, p.get("allowEmptyValue"))
    out += _string(5 + shift, p.get("type")) + _string(6 + shift, p.get("format"))
    out += _string(8 + shift, p.get("collectionFormat"))
    if "default" in p:
        out += _any_field(9 + shift, p["default"])
    out += _double(10 + shift, p.get("maximum")) + _bool(11 + shift, p.get("exclusiveMaximum"))
    out += _double(12 + shift, p.get("minimum")) + _bool(13 + shift, p.get("exclusiveMinimum"))
    out += _int(14 + shift, p.get("maxLength")) + _int(15 + shift, p.get("minLength"))
    out += _string(16 + shift, p.get("pattern"))
    out += _int(17 + shift, p.get("maxItems")) + _int(18 + shift, p.get("minItems"))
    out += _bool(19 + shift, p.get("uniqueItems"))
    if isinstance(p.get("enum"), list):
        out += b"".join(_any_field(20 + shift, v) for v in p["enum"])
    out += _double(21 + shift, p.get("multipleOf"))
    return out + _extensions(22 + shift, p)


_NON_BODY = {"header": (1, False), "formData": (2, True), "query": (3, True), "path": (4, False)}


def _parameter(p: Any) -> bytes:
    """A ParametersItem: a $ref (json_reference = 2) or a parameter (1)."""
    if not isinstance(p, dict):
        return b""
    if isinstance(p.get("$ref"), str):
        return _bytes(2, _string(1, p["$ref"]) + _string(2, p.get("description")))
    where = p.get("in")
    if where == "body":
        body = _string(1, p.get("description")) + _string(2, p.get("name"))
        body += _string(3, where) + _bool(4, p.get("required"))
        if isinstance(p.get("schema"), dict):
            body += _bytes(5, _schema(p["schema"]))
        parameter = _bytes(1, body + _extensions(6, p))
    elif where in _NON_BODY:
        field, query = _NON_BODY[where]
        parameter = _bytes(2, _bytes(field, _simple_parameter(p, query=query)))
    else:
        return b""
    return _bytes(1, parameter)


def _response(r: Any) -> bytes:
    """A ResponseValue: a $ref (json_reference = 2) or a response (1)."""
    if not isinstance(r, dict):
        return b""
    if isinstance(r.get("$ref"), str):
        return _bytes(2, _string(1, r["$ref"]))
    out = _string(1, r.get("description"))
    if isinstance(r.get("schema"), dict):
        out += _bytes(2, _bytes(1, _schema(r["schema"])))
    return _bytes(1, out + _extensions(5, r))


def _operation(op: Any) -> bytes:
    if not isinstance(op, dict):
        return b""
    out = _strings(1, op.get("tags")) + _string(2, op.get("summary"))
    out += _string(3, op.get("description")) + _string(5, op.get("operationId"))
    out += _strings(6, op.get("produces")) + _strings(7, op.get("consumes"))
    out += b"".join(_bytes(8, _parameter(p)) for p in op.get("parameters") or ())
    responses = op.get("responses")
    if isinstance(responses, dict):
        codes = {k: v for k, v in responses.items() if not k.startswith("x-")}
        out += _bytes(9, _named(1, codes, _response) + _extensions(2, responses))
    out += _strings(10, op.get("schemes")) + _bool(11, op.get("deprecated"))
    out += _security(12, op.get("security"))
    return out + _extensions(13, op)


_METHODS = (("get", 2), ("put", 3), ("post", 4), ("delete", 5), ("options", 6),
            ("head", 7), ("patch", 8))


def _path_item(item: Any) -> bytes:
    if not isinstance(item, dict):
        return b""
    out = _string(1, item.get("$ref"))
    for method, field in _METHODS:
        if isinstance(item.get(method), dict):
            out += _bytes(field, _operation(item[method]))
    out += b"".join(_bytes(9, _parameter(p)) for p in item.get("parameters") or ())
    return out + _extensions(10, item)


def _security(field: int, requirements: Any) -> bytes:
    if not isinstance(requirements, list):
        return b""
    out = b""
    for req in requirements:
        if isinstance(req, dict):
            out += _bytes(field, _named(1, req, lambda scopes: _strings(1, scopes)))
    return out


def _security_scheme(s: Any) -> bytes:
    if not isinstance(s, dict):
        return b""
    if s.get("type") == "apiKey":
        key = _string(1, s["type"]) + _string(2, s.get("name")) + _string(3, s.get("in"))
        return _bytes(2, key + _string(4, s.get("description")) + _extensions(5, s))
    if s.get("type") == "basic":
        basic = _string(1, s["type"]) + _string(2, s.get("description"))
        return _bytes(1, basic + _extensions(3, s))
    return b""


def _tag_entry(t: Any) -> bytes:
    if not isinstance(t, dict):
        return b""
    return _string(1, t.get("name")) + _string(2, t.get("description")) + _extensions(4, t)


def encode_document(doc: Mapping[str, Any]) -> bytes:
    """The gnostic `openapi.v2.Document` protobuf of a swagger 2.0 document."""
    out = _string(1, doc.get("swagger"))
    info = doc.get("info")
    if isinstance(info, dict):
        body = _string(1, info.get("title")) + _string(2, info.get("version"))
        out += _bytes(2, body + _string(3, info.get("description")) + _extensions(7, info))
    out += _string(3, doc.get("host")) + _string(4, doc.get("basePath"))
    out += _strings(5, doc.get("schemes")) + _strings(6, doc.get("consumes"))
    out += _strings(7, doc.get("produces"))
    paths = doc.get("paths")
    if isinstance(paths, dict):
        routes = {k: v for k, v in paths.items() if not k.startswith("x-")}
        out += _bytes(8, _extensions(1, paths) + _named(2, routes, _path_item))
    if isinstance(doc.get("definitions"), dict):
        out += _bytes(9, _named(1, doc["definitions"], _schema))
    out += _security(12, doc.get("security"))
    if isinstance(doc.get("securityDefinitions"), dict):
        out += _bytes(13, _named(1, doc["securityDefinitions"], _security_scheme))
    out += b"".join(_bytes(14, _tag_entry(t)) for t in doc.get("tags") or ())
    return out + _extensions(16, doc)
