"""Structural-schema validation of custom resources, as kube-apiserver does it.

`validate(obj, schema)` checks a decoded object against a CRD version's `openAPIV3Schema` and
returns kube-style `StatusCause`s (reason, message, field). `prune` and `apply_defaults` (in
`mutate`, re-exported here) are the two in-place steps that run first; the server's
order is prune, default, validate.

Invariants:
- pure functions over plain JSON values; nothing is mutated by `validate`;
- messages and reasons follow kube-openapi / apimachinery `field.Error` rendering, e.g.
  `Invalid value: 11: spec.replicas in body should be less than or equal to 10`;
- at the root, `apiVersion`/`kind` are checked only if the schema names them, and `metadata`
  only for `name`/`generateName` (the rest is ObjectMeta, handled by the server core);
- `type: integer` accepts whole floats (`1.0`), `type: number` accepts integers, bools are
  never numbers.
"""

from __future__ import annotations

import json
from typing import Any

from asyncop.api.status import StatusCause
from asyncop.apiserver.schema.formats import check_format, compile_pattern
from asyncop.apiserver.schema.mutate import apply_defaults, prune
from asyncop.apiserver.schema.text import child, go_value, index, json_type, quote

__all__ = ["apply_defaults", "json_type", "prune", "validate", "validate_value"]

Schema = dict[str, Any]


def validate(obj: dict[str, Any], schema: Schema) -> list[StatusCause]:
    """Validate a whole custom resource (root semantics: metadata is ObjectMeta)."""
    out: list[StatusCause] = []
    if not isinstance(obj, dict):
        _type_error(out, "", "object", obj)
        return out
    props: dict[str, Schema] = schema.get("properties") or {}
    rest: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "metadata":
            _validate_root_metadata(out, value, props.get("metadata"), "metadata")
        elif key in ("apiVersion", "kind") and key not in props:
            continue
        else:
            rest[key] = value
    root = {k: v for k, v in schema.items() if k != "required"}
    required = [r for r in schema.get("required") or [] if r != "metadata"]
    for name in required:
        if name not in obj:
            out.append(_cause("FieldValueRequired", "Required value", name))
    root_props = {k: v for k, v in props.items() if k != "metadata"}
    root["properties"] = root_props
    _validate_node(out, rest, root, "")
    return out


def validate_value(value: Any, schema: Schema, path: str) -> list[StatusCause]:
    """Validate one value found at `path` (dotted field path) against a schema node."""
    out: list[StatusCause] = []
    _validate_node(out, value, schema, path)
    return out


def _cause(reason: str, message: str, field: str) -> StatusCause:
    return {"reason": reason, "message": message, "field": field}


def _invalid(out: list[StatusCause], path: str, value: Any, detail: str) -> None:
    out.append(_cause("FieldValueInvalid", f"Invalid value: {go_value(value)}: {detail}", path))


def _duplicate(out: list[StatusCause], value: Any, path: str) -> None:
    out.append(_cause("FieldValueDuplicate", f"Duplicate value: {go_value(value)}", path))


def _type_error(out: list[StatusCause], path: str, expected: str, value: Any) -> None:
    actual = json_type(value)
    detail = f"{path} in body must be of type {expected}: {quote(actual)}"
    out.append(_cause("FieldValueTypeInvalid", f"Invalid value: {quote(actual)}: {detail}", path))


def _validate_root_metadata(
    out: list[StatusCause], meta: Any, schema: Schema | None, path: str
) -> None:
    if not isinstance(meta, dict) or not schema:
        return
    props: dict[str, Schema] = schema.get("properties") or {}
    for key in ("name", "generateName"):
        if key in meta and key in props:
            _validate_node(out, meta[key], props[key], child(path, key))


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type_ok(value: Any, typ: str) -> bool:
    if typ == "object":
        return isinstance(value, dict)
    if typ == "array":
        return isinstance(value, list)
    if typ == "string":
        return isinstance(value, str)
    if typ == "integer":
        return _is_integer(value)
    if typ == "number":
        return _is_number(value)
    if typ == "boolean":
        return isinstance(value, bool)
    return True


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: bools never equal numbers, 1 == 1.0, containers compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _validate_node(out: list[StatusCause], value: Any, schema: Schema, path: str) -> None:
    if value is None:
        if schema.get("nullable") or (
            schema.get("x-kubernetes-preserve-unknown-fields") and "type" not in schema
        ):
            return
        if schema.get("x-kubernetes-int-or-string"):
            _type_error(out, path, "integer,string", value)
            return
        if "type" in schema:
            _type_error(out, path, str(schema["type"]), value)
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (_is_integer(value) or isinstance(value, str)):
            _type_error(out, path, "integer,string", value)
            return
    elif "type" in schema and not _type_ok(value, str(schema["type"])):
        _type_error(out, path, str(schema["type"]), value)
        return
    _validate_enum(out, value, schema, path)
    if isinstance(value, str):
        _validate_string(out, value, schema, path)
    elif _is_number(value):
        _validate_number(out, value, schema, path)
    elif isinstance(value, list):
        _validate_array(out, value, schema, path)
    elif isinstance(value, dict):
        _validate_object(out, value, schema, path)
    _validate_combinators(out, value, schema, path)


def _validate_enum(out: list[StatusCause], value: Any, schema: Schema, path: str) -> None:
    enum = schema.get("enum")
    if not enum or any(json_equal(value, e) for e in enum):
        return
    # kube lists strings as they are and other values as JSON, all Go-quoted
    supported = ", ".join(quote(e if isinstance(e, str) else _json(e)) for e in enum)
    message = f"Unsupported value: {go_value(value)}: supported values: {supported}"
    out.append(_cause("FieldValueNotSupported", message, path))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _validate_string(out: list[StatusCause], value: str, schema: Schema, path: str) -> None:
    n = len(value)
    if "maxLength" in schema and n > int(schema["maxLength"]):
        message = f"Too long: may not be more than {int(schema['maxLength'])} bytes"
        out.append(_cause("FieldValueTooLong", message, path))
    if "minLength" in schema and n < int(schema["minLength"]):
        detail = f"{path} in body should be at least {int(schema['minLength'])} chars long"
        _invalid(out, path, value, detail)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        rx = compile_pattern(pattern)
        if rx is not None and rx.search(value) is None:
            _invalid(out, path, value, f"{path} in body should match '{pattern}'")
    fmt = schema.get("format")
    if isinstance(fmt, str) and not check_format(fmt, value):
        _invalid(out, path, value, f"{path} in body must be of type {fmt}: {quote(value)}")


def _num(v: Any) -> str:
    return go_value(v)


def _validate_number(out: list[StatusCause], value: float, schema: Schema, path: str) -> None:
    if "maximum" in schema:
        mx = schema["maximum"]
        if schema.get("exclusiveMaximum") is True:
            if value >= mx:
                _invalid(out, path, value, f"{path} in body should be less than {_num(mx)}")
        elif value > mx:
            detail = f"{path} in body should be less than or equal to {_num(mx)}"
            _invalid(out, path, value, detail)
    if "minimum" in schema:
        mn = schema["minimum"]
        if schema.get("exclusiveMinimum") is True:
            if value <= mn:
                _invalid(out, path, value, f"{path} in body should be greater than {_num(mn)}")
        elif value < mn:
            detail = f"{path} in body should be greater than or equal to {_num(mn)}"
            _invalid(out, path, value, detail)
    mult: Any = schema.get("multipleOf")
    if _is_number(mult) and mult > 0:
        q = value / mult
        if abs(q - round(q)) > 1e-9:
            _invalid(out, path, value, f"{path} in body should be a multiple of {_num(mult)}")


def _validate_array(out: list[StatusCause], value: list[Any], schema: Schema, path: str) -> None:
    n = len(value)
    if "maxItems" in schema and n > int(schema["maxItems"]):
        message = f"Too many: {n}: must have at most {int(schema['maxItems'])} items"
        out.append(_cause("FieldValueTooMany", message, path))
    if "minItems" in schema and n < int(schema["minItems"]):
        detail = f"{path} in body should have at least {int(schema['minItems'])} items"
        _invalid(out, path, n, detail)  # kube reports the item count as the value
    if schema.get("uniqueItems") is True or schema.get("x-kubernetes-list-type") == "set":
        for i, item in enumerate(value):
            if any(json_equal(item, prev) for prev in value[:i]):
                _duplicate(out, item, index(path, i))
    keys = schema.get("x-kubernetes-list-map-keys")
    if schema.get("x-kubernetes-list-type") == "map" and isinstance(keys, list) and keys:
        seen: list[list[Any]] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key = [item.get(k) for k in keys]
            if any(all(json_equal(a, b) for a, b in zip(key, s, strict=True)) for s in seen):
                shown = {k: item.get(k) for k in keys}
                _duplicate(out, shown, index(path, i))
            seen.append(key)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate_node(out, item, items, index(path, i))


def _validate_object(
    out: list[StatusCause], value: dict[str, Any], schema: Schema, path: str
) -> None:
    n = len(value)
    if "minProperties" in schema and n < int(schema["minProperties"]):
        detail = f"{path} in body should have at least {int(schema['minProperties'])} properties"
        _invalid(out, path, n, detail)
        return  # kube-openapi stops at a property-count failure
    if "maxProperties" in schema and n > int(schema["maxProperties"]):
        message = f"Too many: {n}: must have at most {int(schema['maxProperties'])} items"
        out.append(_cause("FieldValueTooMany", message, path))
        return
    for name in schema.get("required") or []:
        if name not in value:
            out.append(_cause("FieldValueRequired", "Required value", child(path, name)))
    props: dict[str, Schema] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    if embedded:
        _validate_embedded(out, value, path)
    for key, item in value.items():
        sub = child(path, key)
        if key in props:
            _validate_node(out, item, props[key], sub)
        elif embedded and key in ("apiVersion", "kind", "metadata"):
            continue
        elif isinstance(additional, dict):
            _validate_node(out, item, additional, sub)
        elif additional is False:
            detail = f"Forbidden: {sub} in body is a forbidden property"
            out.append(_cause("FieldValueForbidden", detail, sub))


def _validate_embedded(out: list[StatusCause], value: dict[str, Any], path: str) -> None:
    for key in ("apiVersion", "kind"):
        if not value.get(key):
            detail = "Required value: must not be empty"
            out.append(_cause("FieldValueRequired", detail, child(path, key)))
        elif not isinstance(value[key], str):
            _type_error(out, child(path, key), "string", value[key])
    meta = value.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        _type_error(out, child(path, "metadata"), "object", meta)


def _validate_combinators(out: list[StatusCause], value: Any, schema: Schema, path: str) -> None:
    for sub in schema.get("allOf") or []:
        _validate_node(out, value, sub, path)
    any_of = schema.get("anyOf")
    if any_of and not any(not validate_value(value, s, path) for s in any_of):
        _invalid(out, path, value, f"{path} in body must validate at least one schema (anyOf)")
    one_of = schema.get("oneOf")
    if one_of:
        matches = sum(1 for s in one_of if not validate_value(value, s, path))
        if matches != 1:
            detail = f"{path} in body must validate one and only one schema (oneOf)"
            _invalid(out, path, value, detail)
    not_schema = schema.get("not")
    if isinstance(not_schema, dict) and not validate_value(value, not_schema, path):
        _invalid(out, path, value, f"{path} in body must not validate the schema (not)")
