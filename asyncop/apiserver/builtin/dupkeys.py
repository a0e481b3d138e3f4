"""Duplicate keys in request bodies, found the way kube's strict decoders find them.

orjson (the server's JSON parser) keeps the last of duplicate keys silently, as Go does; the
strict decoders also report them. This module is the slow path taken only when a body may
have duplicates (the decoder counts keys against the body's `":` tokens):

- `loads_json(raw)`: the JSON text parsed again, each object with duplicate keys a `DupDict`
  whose `duplicates` lists them in order (the last value kept, as Go keeps it), and every
  non-integer number a `GoFloat` that remembers its literal (`1e3`), which Go's messages show;
- `yaml_unmarshal_errors(lines)`: go-yaml's strict error for a YAML body, as kube's YAML
  serializer reports it (`yaml: unmarshal errors:\\n  line 4: key "replicas" already set in
  map`); the lines come from the YAML decoder (`http/yamlbody.py`), which reads a body once.

Invariant: `loads_json` only reads its input and never raises on malformed input (None).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DupDict", "GoFloat", "duplicate_paths", "loads_json", "yaml_unmarshal_errors"]


class DupDict(dict[str, Any]):
    """A JSON object whose keys repeated: `duplicates` are the repeated keys, in order."""

    duplicates: list[str]


class GoFloat(float):
    """A JSON number that is not an integer literal, with its text."""

    __slots__ = ("literal",)
    literal: str


def _go_float(text: str) -> GoFloat:
    value = GoFloat(text)
    value.literal = text
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    repeated: list[str] | None = None
    for key, value in pairs:
        if key in obj:
            repeated = [key] if repeated is None else [*repeated, key]
        obj[key] = value
    if repeated is None:
        return obj
    marked = DupDict(obj)
    marked.duplicates = repeated
    return marked


def loads_json(raw: bytes) -> Any:
    """`raw` parsed with duplicates marked and float literals kept (None if not JSON)."""
    try:
        return json.loads(raw, object_pairs_hook=_pairs, parse_float=_go_float)
    except (ValueError, RecursionError):
        return None


def yaml_unmarshal_errors(lines: list[str]) -> str:
    """go-yaml's strict error for a YAML body's repeated keys (the lines come from the
    decoder that read the body, `asyncop.apiserver.http.yamlbody`)."""
    return "yaml: unmarshal errors:\n  " + "\n  ".join(lines)


def duplicate_paths(value: Any, path: str = "") -> list[str]:
    """The strict path of every repeated key in a `loads_json` result, as sigs.k8s.io/json
    names them (`spec.replicas`, `spec.containers[0].name`), nested ones first."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out += duplicate_paths(item, f"{path}.{key}" if path else key)
        for key in getattr(value, "duplicates", ()):
            out.append(f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += duplicate_paths(item, f"{path}[{i}]")
    return out
