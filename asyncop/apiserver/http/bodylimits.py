"""Nesting limits on request bodies: deep JSON or YAML is a 400, never a stored object.

kube-apiserver's decoders stop at 10,000 levels ("exceeded max depth"). This server keeps a
lower bound, `MAX_DEPTH` levels of objects and arrays, because every stored object is later
serialized by orjson inside wrappers (list items, watch events, Table rows, managedFields
mirror the object's shape), and orjson refuses to serialize beyond 254 levels: an object
accepted deeper than that would answer every later GET, LIST and watch of it with a 500.

Invariants: `check_json` never recurses (a body of 10,000 or 1,000,000 `[` cannot exhaust
the Python stack); a body that passes has at most `MAX_DEPTH` levels; the common case (a
body with fewer than `MAX_DEPTH` opening brackets in all) costs two `bytes.count` calls and
no walk. YAML bodies are bounded where they are decoded (`yamlbody`), on the value with
every alias expanded.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import ApiError
from asyncop.apiserver.core import errors

MAX_DEPTH = 128
"""Levels of objects/arrays a request body (and an object made by a patch) may have."""

JSON_TOO_DEEP = "couldn't get version/kind; json parse error: exceeded max depth"
YAML_TOO_DEEP = f"error converting YAML to JSON: yaml: exceeded max depth of {MAX_DEPTH}"
MAX_DECODED_BYTES = 3 * 1024 * 1024
"""kube-apiserver's request body limit (3 MiB); also the most scalar text a YAML body may
expand to through its aliases."""



def too_deep(message: str = JSON_TOO_DEEP) -> ApiError:
    return errors.bad_request(message)


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a decoded value (a scalar is 0), counted without recursion; stops
    counting once it exceeds `limit` (and returns limit + 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, level = pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        for child in children:
            if isinstance(child, dict | list):
                push((child, level))
    return deepest


def check_value(value: Any, message: str = JSON_TOO_DEEP) -> None:
    """400 when a decoded value (a body, or an object a patch produced) is too deep."""
    if depth(value) > MAX_DEPTH:
        raise too_deep(message)


def check_json(raw: bytes, value: Any) -> None:
    """400 when the JSON `raw` decoded into `value` is nested deeper than `MAX_DEPTH`."""
    if raw.count(b"{") + raw.count(b"[") <= MAX_DEPTH:
        return  # cannot be deeper than its number of opening brackets
    check_value(value)
