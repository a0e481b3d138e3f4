"""Strategic-merge-patch results decoded as kube decodes them: from a map, not from JSON.

kube applies a strategic merge patch to the current object as a map and converts the result
into the Go type with `runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation`
(kube: handlers/patch.go applyPatchToObject, runtime/converter.go), not with the JSON
decoder, so its words differ:

- unknown fields: `unknown field "spec.foo"` (the path unquoted), all of them, sorted;
- the first type mismatch stops it: `cannot restore struct from: string`, `cannot restore
  slice from map`, `unrecognized type: int32` (a string into an int), `cannot convert float64
  to int32` (a fraction), `cannot convert int64 to v1.Protocol` (a number into a string);
  integers into narrower Go ints wrap as Go's conversion does; types with their own
  UnmarshalJSON (Quantity, Time, IntOrString) answer their parser's error.

The 422 shows the patch as Go's `%+v` prints the map (`map[spec:map[replicas:2]]`), rendered
by `gofmt.go_v`. Invariant: `convert` never raises on any JSON value; it mutates only to drop
unknown fields and nulls and to canonicalise quantities.
"""

from __future__ import annotations

import math
from typing import Any

from asyncop.apiserver.builtin import gotypes
from asyncop.apiserver.builtin.goerrors import (
    base64_error,
    json_kind,
    time_error,
)
from asyncop.apiserver.builtin.gofmt import go_v
from asyncop.apiserver.builtin.gotypes import Node
from asyncop.apiserver.builtin.quantity import parse_error
from asyncop.apiserver.builtin.quantityhook import canonical_quantity

__all__ = ["convert"]

_KIND_NAMES = {gotypes.STRING: "string", gotypes.BOOL: "bool", gotypes.INT32: "int32",
               gotypes.INT64: "int64", gotypes.INT: "int", gotypes.FLOAT: "float64"}


class _Stop(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _go_kind(value: Any) -> str:
    """reflect.Kind of a value of the patched map (ints are int64, as kube decodes them)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "map" if isinstance(value, dict) else "slice"


def convert(node: Node, obj: dict[str, Any], *,
            strict: bool) -> tuple[str | None, list[str]]:
    """(the converter's error or None, the unknown-field errors, sorted)."""
    unknown: list[str] = []
    try:
        _value(obj, node, "", unknown)
    except _Stop as exc:
        return exc.message, []
    except RecursionError:
        return "exceeded max depth", []
    return None, sorted(unknown) if strict else []


def _value(value: Any, node: Node, path: str, unknown: list[str]) -> Any:
    tag = node[0]
    if tag == gotypes.STRUCT:
        if not isinstance(value, dict):
            raise _Stop(f"cannot restore struct from: {_go_kind(value)}")
        fields = node[2]
        for key in list(value):
            sub = fields.get(key)
            child = f"{path}.{key}" if path else key
            if sub is None:
                unknown.append(f'unknown field "{child}"')
                del value[key]
            elif value[key] is None:
                del value[key]
            else:
                value[key] = _value(value[key], sub, child, unknown)
        return value
    if tag == gotypes.LIST:
        if not isinstance(value, list):
            raise _Stop(f"cannot restore slice from {_go_kind(value)}")
        for i, item in enumerate(value):
            value[i] = _element(item, node[2], f"{path}[{i}]", unknown)
        return value
    if tag == gotypes.MAP:
        if not isinstance(value, dict):
            raise _Stop(f"cannot restore map from {_go_kind(value)}")
        for key in list(value):
            value[key] = _element(value[key], node[2], f"{path}.{key}" if path else key,
                                  unknown)
        return value
    return _scalar(value, node)


def _element(item: Any, node: Node, path: str, unknown: list[str]) -> Any:
    if item is None:
        return {} if node[0] == gotypes.STRUCT else None
    return _value(item, node, path, unknown)


def _scalar(value: Any, node: Node) -> Any:
    tag, go_type = node[0], node[1]
    if tag == gotypes.ANY:
        return value
    if tag == gotypes.BYTES:
        if isinstance(value, str):
            error = base64_error(value)
            if error:
                raise _Stop(f"error decoding from json: {error}")
            return value
        raise _Stop(f"cannot restore slice from {_go_kind(value)}")
    if tag == gotypes.QUANTITY:
        text = value.strip() if isinstance(value, str) else go_v(value)
        error = parse_error(text)
        if error:
            raise _Stop(error)
        return canonical_quantity(value)
    if tag in (gotypes.TIME, gotypes.MICROTIME):
        if not isinstance(value, str):
            raise _Stop(f"json: cannot unmarshal {json_kind(value)} into Go value of type "
                        "string")
        error = time_error(value, node[2])
        if error:
            raise _Stop(error)
        return value
    if tag == gotypes.INT_OR_STRING:
        if isinstance(value, str):
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Stop(f"json: cannot unmarshal {json_kind(value)} into Go value of type "
                        "int32")
        if isinstance(value, float) or not -gotypes.INT32_LIMIT <= value < gotypes.INT32_LIMIT:
            raise _Stop(f"json: cannot unmarshal number {go_v(value)} into Go value of type "
                        "int32")
        return value
    kind = _KIND_NAMES.get(tag, "string")
    if isinstance(value, bool):
        if tag == gotypes.BOOL:
            return value
    elif isinstance(value, str):
        if tag == gotypes.STRING:
            return value
    elif isinstance(value, int):
        if tag in (gotypes.INT32, gotypes.INT64, gotypes.INT):
            return _wrap(value, 32 if tag == gotypes.INT32 else 64)
        if tag == gotypes.FLOAT:
            return value
        if tag == gotypes.STRING:
            raise _Stop(f"cannot convert int64 to {go_type}")
    elif isinstance(value, float):
        if tag == gotypes.FLOAT:
            return value
        if tag in (gotypes.INT32, gotypes.INT64, gotypes.INT):
            if math.isfinite(value) and value == math.trunc(value):
                return _wrap(int(value), 32 if tag == gotypes.INT32 else 64)
            raise _Stop(f"cannot convert float64 to {go_type}")
    raise _Stop(f"unrecognized type: {kind}")


def _wrap(value: int, bits: int) -> int:
    """Go's integer conversion: the low bits, two's complement."""
    half = 1 << (bits - 1)
    return ((value + half) % (1 << bits)) - half
