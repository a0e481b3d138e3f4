"""A small reader of gnostic's `openapi.v2.Document` protobuf, back to the swagger JSON.

Written for the tests from gnostic-models' `openapiv2/OpenAPIv2.proto` (field numbers
listed per message below), independently of the server's encoder, so a round trip
(JSON → asyncop's encoder → this reader → JSON) proves the encoding. Vendor extensions and
other `Any` values are read back by parsing their YAML text (kube and kubectl do the same).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

import yaml

Fields = list[tuple[int, Any]]


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf: bytes) -> Iterator[tuple[int, Any]]:
    """(field number, raw value): ints for varints, floats for 64-bit, bytes otherwise."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            if value >= 1 << 63:
                value -= 1 << 64
            yield number, value
        elif wire == 1:
            yield number, struct.unpack("<d", buf[pos:pos + 8])[0]
            pos += 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            yield number, buf[pos:pos + size]
            pos += size
        else:
            raise ValueError(f"unexpected wire type {wire}")


def _text(raw: bytes) -> str:
    return raw.decode()


def _any(raw: bytes) -> Any:
    """Any: value = 1 (google.protobuf.Any), yaml = 2."""
    for number, value in fields(raw):
        if number == 2:
            return yaml.safe_load(value.decode())
    return None


def _named(raw: bytes, decode: Callable[[bytes], Any]) -> tuple[str, Any]:
    """Named*: name = 1, value = 2."""
    name, value = "", None
    for number, item in fields(raw):
        if number == 1:
            name = item.decode()
        elif number == 2:
            value = decode(item)
    return name, value


def _extension(out: dict[str, Any], raw: bytes) -> None:
    name, value = _named(raw, _any)
    out[name] = value


# Schema: _ref 1, format 2, title 3, description 4, default 5, multiple_of 6, maximum 7,
# exclusive_maximum 8, minimum 9, exclusive_minimum 10, max_length 11, min_length 12,
# pattern 13, max_items 14, min_items 15, unique_items 16, max_properties 17,
# min_properties 18, required 19, enum 20, additional_properties 21, type 22, items 23,
# all_of 24, properties 25, discriminator 26, read_only 27, xml 28, external_docs 29,
# example 30, vendor_extension 31
_SCHEMA_SCALARS: dict[int, tuple[str, Callable[[Any], Any]]] = {
    1: ("$ref", _text), 2: ("format", _text), 3: ("title", _text), 4: ("description", _text),
    5: ("default", _any), 6: ("multipleOf", float), 7: ("maximum", float),
    8: ("exclusiveMaximum", bool), 9: ("minimum", float), 10: ("exclusiveMinimum", bool),
    11: ("maxLength", int), 12: ("minLength", int), 13: ("pattern", _text),
    14: ("maxItems", int), 15: ("minItems", int), 16: ("uniqueItems", bool),
    17: ("maxProperties", int), 18: ("minProperties", int), 26: ("discriminator", _text),
    27: ("readOnly", bool), 30: ("example", _any),
}


def schema(raw: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, value in fields(raw):
        if number in _SCHEMA_SCALARS:
            name, convert = _SCHEMA_SCALARS[number]
            out[name] = convert(value)
        elif number == 19:
            out.setdefault("required", []).append(value.decode())
        elif number == 20:
            out.setdefault("enum", []).append(_any(value))
        elif number == 21:  # AdditionalPropertiesItem: schema 1 | boolean 2
            for inner, item in fields(value):
                out["additionalProperties"] = schema(item) if inner == 1 else bool(item)
        elif number == 22:  # TypeItem: value 1 (repeated)
            types = [item.decode() for _, item in fields(value)]
            out["type"] = types[0] if len(types) == 1 else types
        elif number == 23:  # ItemsItem: schema 1 (repeated)
            items = [schema(item) for _, item in fields(value)]
            out["items"] = items[0] if len(items) == 1 else items
        elif number == 24:
            out.setdefault("allOf", []).append(schema(value))
        elif number == 25:  # Properties: additional_properties 1 (NamedSchema)
            out["properties"] = dict(_named(item, schema) for _, item in fields(value))
        elif number == 31:
            _extension(out, value)
    return out


# Query sub-schema: required 1, in 2, description 3, name 4, allow_empty_value 5, type 6,
# format 7, ..., unique_items 20; path sub-schema: required 1, in 2, description 3, name 4,
# type 5, format 6, ..., unique_items 19. BodyParameter: description 1, name 2, in 3,
# required 4, schema 5.
def _simple(raw: bytes, *, query: bool) -> dict[str, Any]:
    shift = 1 if query else 0
    names = {1: "required", 2: "in", 3: "description", 4: "name", 5 + shift: "type",
             6 + shift: "format", 19 + shift: "uniqueItems"}
    out: dict[str, Any] = {}
    for number, value in fields(raw):
        name = names.get(number)
        if name in ("required", "uniqueItems"):
            out[name] = bool(value)
        elif name:
            out[name] = value.decode()
    return out


def parameter(raw: bytes) -> dict[str, Any]:
    """ParametersItem: parameter 1 (Parameter: body 1 | non_body 2), json_reference 2."""
    out: dict[str, Any] = {}
    for number, value in fields(raw):
        if number == 2:
            out["$ref"] = dict(fields(value))[1].decode()
            continue
        for kind, param in fields(value):
            if kind == 1:
                for inner, item in fields(param):
                    if inner == 5:
                        out["schema"] = schema(item)
                    elif inner == 4:
                        out["required"] = bool(item)
                    else:
                        out[{1: "description", 2: "name", 3: "in"}[inner]] = item.decode()
            else:  # NonBodyParameter: header 1, form_data 2, query 3, path 4
                for sub, item in fields(param):
                    out.update(_simple(item, query=sub in (2, 3)))
    return out


def _response(raw: bytes) -> dict[str, Any]:
    """ResponseValue: response 1 (Response: description 1, schema 2 (SchemaItem: schema 1))."""
    out: dict[str, Any] = {}
    for _, response in fields(raw):
        for number, value in fields(response):
            if number == 1:
                out["description"] = value.decode()
            elif number == 2:
                out["schema"] = schema(dict(fields(value))[1])
            elif number == 5:
                _extension(out, value)
    return out


def operation(raw: bytes) -> dict[str, Any]:
    """Operation: tags 1, summary 2, description 3, operation_id 5, produces 6, consumes 7,
    parameters 8, responses 9, schemes 10, deprecated 11, vendor_extension 13."""
    out: dict[str, Any] = {}
    lists = {1: "tags", 6: "produces", 7: "consumes", 10: "schemes"}
    for number, value in fields(raw):
        if number in lists:
            out.setdefault(lists[number], []).append(value.decode())
        elif number in (2, 3, 5):
            out[{2: "summary", 3: "description", 5: "operationId"}[number]] = value.decode()
        elif number == 8:
            out.setdefault("parameters", []).append(parameter(value))
        elif number == 9:  # Responses: response_code 1 (NamedResponseValue)
            out["responses"] = dict(_named(item, _response)
                                    for inner, item in fields(value) if inner == 1)
        elif number == 11:
            out["deprecated"] = bool(value)
        elif number == 13:
            _extension(out, value)
    return out


_METHODS = {2: "get", 3: "put", 4: "post", 5: "delete", 6: "options", 7: "head", 8: "patch"}


def path_item(raw: bytes) -> dict[str, Any]:
    """PathItem: _ref 1, get 2 ... patch 8, parameters 9, vendor_extension 10."""
    out: dict[str, Any] = {}
    for number, value in fields(raw):
        if number in _METHODS:
            out[_METHODS[number]] = operation(value)
        elif number == 9:
            out.setdefault("parameters", []).append(parameter(value))
        elif number == 10:
            _extension(out, value)
    return out


def document(raw: bytes) -> dict[str, Any]:
    """Document: swagger 1, info 2 (title 1, version 2), paths 8 (path 2), definitions 9
    (additional_properties 1), security 12, security_definitions 13."""
    out: dict[str, Any] = {}
    for number, value in fields(raw):
        if number == 1:
            out["swagger"] = value.decode()
        elif number == 2:
            info = dict(fields(value))
            out["info"] = {"title": info[1].decode(), "version": info[2].decode()}
        elif number == 8:
            out["paths"] = dict(_named(item, path_item)
                                for inner, item in fields(value) if inner == 2)
        elif number == 9:
            out["definitions"] = dict(_named(item, schema) for _, item in fields(value))
        elif number == 12:  # SecurityRequirement: NamedStringArray (StringArray: value 1)
            requirement = dict(_named(item, lambda v: [s.decode() for _, s in fields(v)])
                               for _, item in fields(value))
            out.setdefault("security", []).append(requirement)
        elif number == 13:  # NamedSecurityDefinitionsItem → api_key_security 2
            def scheme(v: bytes) -> dict[str, Any]:
                key = dict(fields(dict(fields(v))[2]))
                return {"type": key[1].decode(), "name": key[2].decode(),
                        "in": key[3].decode(), "description": key[4].decode()}
            out["securityDefinitions"] = dict(_named(item, scheme) for _, item in fields(value))
    return out
