"""Server-side apply configurations of built-in kinds checked as structured-merge-diff does.

kube's field manager turns an apply configuration into a typed value before merging
(kube: managedfields/internal/structuredmerge.go, `ObjectToTyped`); for a built-in kind
that fails, whatever `fieldValidation` says, with

    failed to create typed patch object (default/web; apps/v1, Kind=Deployment):
    .spec.replicass: field not declared in schema

and, for values of the wrong type, structured-merge-diff's words: `.spec.replicas: expected
numeric (int or float), got string`, `.data.k: expected string, got
&value.valueUnstructured{Value:1}`, `expected boolean, got &{x}`, `expected map, got &{x}`,
`expected list, got &{x}`. Paths name list items by their list-map keys
(`.spec.containers[name="app"].imagee`), set items by value (`[="x"]`), others by index.
Several errors are listed one per line under `errors:` (sorted: kube's order follows Go map
iteration, which is random).

kube answers this with a 500 (a plain error); the embedded server answers 400 BadRequest with
the same text, as a request's bad input is never a server error here (docs/apiserver.md,
"Decoding built-in kinds"). Invariant: `check` only reads the configuration.
"""

from __future__ import annotations

import json
from typing import Any

from asyncop.apiserver.builtin import gotypes
from asyncop.apiserver.builtin.gofmt import go_sharp_v, go_type, go_v
from asyncop.apiserver.builtin.gotypes import Node

__all__ = ["check"]


def check(node: Node, config: dict[str, Any], *, namespace: str, name: str,
          group: str, version: str, kind: str) -> str | None:
    """The error kube's field manager gives for `config`, or None when it types."""
    errors: list[str] = []
    try:
        _walk(config, node, "", errors)
    except RecursionError:
        errors.append(": exceeded max depth")
    if not errors:
        return None
    errors.sort()
    text = errors[0] if len(errors) == 1 else "errors:\n" + "\n".join(
        "  " + e for e in errors)
    return (f"failed to create typed patch object ({namespace}/{name}; {group}/{version}, "
            f"Kind={kind}): {text}")


def _walk(value: Any, node: Node, path: str, errors: list[str]) -> None:
    if value is None:
        return
    tag = node[0]
    if tag == gotypes.STRUCT:
        if not isinstance(value, dict):
            errors.append(f"{path}: expected map, got &{{{go_v(value)}}}")
            return
        fields = node[2]
        for key, item in value.items():
            sub = fields.get(key)
            if sub is None:
                if path or key not in ("apiVersion", "kind"):
                    errors.append(f"{path}.{key}: field not declared in schema")
                continue
            _walk(item, sub, f"{path}.{key}", errors)
    elif tag == gotypes.MAP:
        if not isinstance(value, dict):
            errors.append(f"{path}: expected map, got &{{{go_v(value)}}}")
            return
        for key, item in value.items():
            _walk(item, node[2], f"{path}.{key}", errors)
    elif tag == gotypes.LIST:
        if not isinstance(value, list):
            errors.append(f"{path}: expected list, got &{{{go_v(value)}}}")
            return
        for i, item in enumerate(value):
            _walk(item, node[2], path + _element(node[3], item, i), errors)
    elif tag in (gotypes.INT32, gotypes.INT64, gotypes.INT, gotypes.FLOAT):
        if isinstance(value, bool) or not isinstance(value, int | float):
            errors.append(f"{path}: expected numeric (int or float), got {go_type(value)}")
    elif tag == gotypes.BOOL:
        if not isinstance(value, bool):
            errors.append(f"{path}: expected boolean, got &{{{go_v(value)}}}")
    elif tag in (gotypes.QUANTITY, gotypes.INT_OR_STRING):  # kube types these as untyped scalars
        if isinstance(value, dict | list):
            errors.append(f"{path}: expected any scalar, got &{{{go_v(value)}}}")
    elif tag != gotypes.ANY and not isinstance(value, str):
        errors.append(f"{path}: expected string, got "
                      f"&value.valueUnstructured{{Value:{go_sharp_v(value)}}}")


def _element(keys: Any, item: Any, i: int) -> str:
    """structured-merge-diff's path element of a list item."""
    if isinstance(keys, tuple) and isinstance(item, dict):
        parts = [f"{k}={_to_string(item[k])}" for k in keys if k in item]
        if parts:
            return "[" + ",".join(parts) + "]"
    if keys is True and not isinstance(item, dict | list):
        return f"[={_to_string(item)}]"
    return f"[{i}]"


def _to_string(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
