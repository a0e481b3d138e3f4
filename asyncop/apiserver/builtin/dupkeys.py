"""Duplicate keys in request bodies, found the way kube's strict decoders find them.

orjson (the server's JSON parser) keeps the last of duplicate keys silently, as Go does; the
strict decoders also report them. This module is the slow path taken only when a body may
have duplicates (the decoder counts keys against the body's `":` tokens):

- `loads_json(raw)`: the JSON text parsed again, each object with duplicate keys a `DupDict`
  whose `duplicates` lists them in order (the last value kept, as Go keeps it), and every
  non-integer number a `GoFloat` that remembers its literal (`1e3`), which Go's messages show;
- `yaml_duplicates(raw)`: go-yaml's strict error for a YAML body, as kube's YAML serializer
  reports it (`yaml: unmarshal errors:\\n  line 4: key "replicas" already set in map`), the
  line being that of the repeated key's value.

Invariant: both only read their input; neither raises on malformed input (None / the plain
parse instead).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

__all__ = ["DupDict", "GoFloat", "duplicate_paths", "loads_json", "yaml_duplicates"]


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


def yaml_duplicates(raw: bytes) -> str | None:
    """go-yaml's strict-decoding error for duplicate keys in a YAML body, or None."""
    try:
        root = yaml.compose(raw, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    lines: list[str] = []
    try:
        _scan(root, lines)
    except RecursionError:
        return None
    if not lines:
        return None
    return "yaml: unmarshal errors:\n  " + "\n  ".join(lines)


def _scan(node: yaml.Node | None, lines: list[str]) -> None:
    """go-yaml's order: each value is decoded (its own duplicates first), then its key is
    set in the map (a repeated key reported at its value's line)."""
    if isinstance(node, yaml.MappingNode):
        seen: set[tuple[str, str]] = set()
        for key, value in node.value:
            _scan(value, lines)
            if isinstance(key, yaml.ScalarNode):
                ident = (key.tag, key.value)
                if ident in seen:
                    lines.append(f"line {value.start_mark.line + 1}: key {_go_sharp_v(key)} "
                                 "already set in map")
                seen.add(ident)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _scan(item, lines)


def _go_sharp_v(key: yaml.ScalarNode) -> str:
    """Go's `%#v` of a decoded YAML key: strings quoted, numbers and booleans bare."""
    if key.tag == "tag:yaml.org,2002:str":
        return json.dumps(key.value)
    return str(key.value)


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
