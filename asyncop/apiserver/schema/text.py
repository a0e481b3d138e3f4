"""Rendering helpers shared by the schema modules: field paths and Go-style value printing.

Invariants: field paths are kube's (`spec.items[0].name`, dotted children, `[i]` indexes);
values print as apimachinery's `field.Error` does: strings Go-quoted, numbers and bools bare,
`null` for nil, containers as compact JSON.
"""

from __future__ import annotations

import json
import math
from typing import Any


def child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def quote(s: str) -> str:
    """A Go `%q` rendering of a string (close enough: JSON escaping, non-ASCII kept)."""
    return json.dumps(s, ensure_ascii=False)


def format_number(v: float) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if math.isfinite(v) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return repr(v)


def go_value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, (int, float)):
        return format_number(v)
    return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def json_type(value: Any) -> str:
    """The JSON type name kube-openapi reports for a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
