"""Schema forms of the OpenAPI documents: v3 (kube's builder3) and v2 (swagger), from kubespec.

kubespec answers kube's definitions in their `/openapi/v3` form with bare `$ref`s that may
carry siblings (a description). The served forms differ by version:

- v3 (`v3_definitions`): a `$ref` with siblings is wrapped as `allOf: [{$ref}]` next to
  them (kube: builder3's WrapRefs); a bare `$ref` stays bare;
- v2 (`v2_definitions`): `$ref`s point at `#/definitions/`, IntOrString is `type: string,
  format: int-or-string` and Quantity `type: string` (kube's swagger forms); siblings of a
  `$ref` stay beside it, as kube's /openapi/v2 has them.

`closure` is the set of definitions a document needs: the roots and everything they
reference, transitively. `custom_name` is kube's definition name of a custom resource
(kube: ToRESTFriendlyName of `<group>/<version>.<Kind>`).

Invariants: the per-minor tables are computed once per process and shared — never mutate
what they return; extension values, enums and defaults are data, never rewritten.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from asyncop import kubespec

__all__ = [
    "REF_V2",
    "REF_V3",
    "closure",
    "custom_name",
    "direct_refs",
    "to_v2",
    "v2_definitions",
    "v3_definitions",
    "wrap_refs",
]

REF_V3 = "#/components/schemas/"
REF_V2 = "#/definitions/"
_DATA_KEYS = frozenset({"enum", "default", "example", "required"})
_V2_FORMS: dict[str, dict[str, Any]] = {
    kubespec.INT_OR_STRING: {"type": "string", "format": "int-or-string"},
    kubespec.QUANTITY: {"type": "string"},
}

Schema = dict[str, Any]


def custom_name(group: str, version: str, kind: str) -> str:
    """kube's definition name of a custom resource kind (`com.example.v1.Widget`)."""
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


def _is_data(key: str) -> bool:
    return key in _DATA_KEYS or key.startswith("x-")


def direct_refs(schema: Any) -> set[str]:
    """Definition names `schema` references directly (any depth inside it)."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str):
                    found.add(kubespec.ref_name(value))
                elif key == "properties" and isinstance(value, dict):
                    stack.extend(value.values())
                elif not _is_data(key):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


@functools.cache
def _refs_by_name(minor: int) -> Mapping[str, frozenset[str]]:
    defs = kubespec.definitions(minor)
    return {name: frozenset(direct_refs(schema)) for name, schema in defs.schemas.items()}


def closure(minor: int, roots: Iterable[str],
            extra: Mapping[str, Schema] | None = None) -> set[str]:
    """`roots` and every definition they reference, transitively. Names found in `extra`
    (custom resources' schemas) are followed there; unknown names are left out."""
    refs = _refs_by_name(minor)
    extra = extra or {}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name in extra:
            seen.add(name)
            todo.extend(direct_refs(extra[name]))
        elif name in refs:
            seen.add(name)
            todo.extend(refs[name])
    return seen


def wrap_refs(schema: Any) -> Any:
    """A copy of `schema` with every `$ref` that has siblings wrapped in `allOf`."""
    if isinstance(schema, list):
        return [wrap_refs(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: Schema = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: wrap_refs(prop) for name, prop in value.items()}
        elif _is_data(key) or key == "$ref":
            out[key] = value
        else:
            out[key] = wrap_refs(value)
    ref = out.get("$ref")
    if isinstance(ref, str) and len(out) > 1:
        del out["$ref"]
        out["allOf"] = [{"$ref": ref}]
    return out


def to_v2(schema: Any) -> Any:
    """A copy of a v3-form schema with its `$ref`s pointing at `#/definitions/`."""
    if isinstance(schema, list):
        return [to_v2(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: Schema = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = REF_V2 + kubespec.ref_name(value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: to_v2(prop) for name, prop in value.items()}
        elif _is_data(key):
            out[key] = value
        else:
            out[key] = to_v2(value)
    return out


@functools.cache
def v3_definitions(minor: int) -> Mapping[str, Schema]:
    """Every kube definition of 1.<minor> in its served /openapi/v3 form."""
    defs = kubespec.definitions(minor)
    return {name: wrap_refs(schema) for name, schema in defs.schemas.items()}


@functools.cache
def v2_definitions(minor: int) -> Mapping[str, Schema]:
    """Every kube definition of 1.<minor> in its served /openapi/v2 form."""
    defs = kubespec.definitions(minor)
    return {name: dict(_V2_FORMS[name]) if name in _V2_FORMS else to_v2(schema)
            for name, schema in defs.schemas.items()}
