"""Is a CRD's openAPIV3Schema structural? kube's rules, with kube's field paths and messages.

`validate_structural(schema, path)` walks a schema (as found at `path`, e.g.
`spec.versions[0].schema.openAPIV3Schema`) and reports what apiextensions.k8s.io/v1 rejects:
missing or unknown `type`s (root, object fields, array items), arrays without `items`,
forbidden keywords (`$ref`, `uniqueItems: true`, ...), `additionalProperties` at the root or
next to `properties`, embedded-resource and int-or-string invariants, root `metadata`
constraints other than name/generateName, generic keywords inside `allOf/anyOf/oneOf/not`
(value validation only), uncompilable patterns and invalid `default`s.

Invariants: child paths are rendered like kube (`.properties[spec]`, `.items`,
`.additionalProperties`, `.anyOf[0]`); causes are sorted by their rendered text, as kube
sorts them, so the 422 message is stable.
"""

from __future__ import annotations

from typing import Any

from asyncop.api.status import StatusCause
from asyncop.apiserver.schema.checks import validate_value
from asyncop.apiserver.schema.formats import compile_pattern
from asyncop.apiserver.schema.mutate import apply_defaults, prune
from asyncop.apiserver.schema.text import go_value

_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_FORBIDDEN = {
    "$ref": "$ref is not supported",
    "$schema": "$schema is not supported",
    "id": "id is not supported",
    "definitions": "definitions are not supported",
    "dependencies": "dependencies are not supported",
    "patternProperties": "patternProperties is not supported",
    "additionalItems": "additionalItems cannot be set",
}
#: keywords that make a schema inside allOf/anyOf/oneOf/not non-structural.
_NESTED_FORBIDDEN = {
    "type": "must be empty to be structural",
    "default": "must be undefined to be structural",
    "title": "must be empty to be structural",
    "description": "must be empty to be structural",
    "x-kubernetes-preserve-unknown-fields": "must be false to be structural",
    "x-kubernetes-embedded-resource": "must be false to be structural",
    "x-kubernetes-int-or-string": "must be false to be structural",
    "x-kubernetes-list-map-keys": "must be empty to be structural",
    "x-kubernetes-list-type": "must be undefined to be structural",
    "x-kubernetes-map-type": "must be undefined to be structural",
    "x-kubernetes-validations": "must be empty to be structural",
    "additionalProperties": "must be undefined to be structural",
}
_COMBINATORS = ("allOf", "anyOf", "oneOf")
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def _cause(reason: str, message: str, field: str) -> StatusCause:
    return {"reason": reason, "message": message, "field": field}


def _required(out: list[StatusCause], field: str, detail: str) -> None:
    out.append(_cause("FieldValueRequired", f"Required value: {detail}", field))


def _invalid(out: list[StatusCause], field: str, value: Any, detail: str) -> None:
    out.append(_cause("FieldValueInvalid", f"Invalid value: {go_value(value)}: {detail}", field))


def _forbidden(out: list[StatusCause], field: str, detail: str) -> None:
    out.append(_cause("FieldValueForbidden", f"Forbidden: {detail}", field))


def validate_structural(schema: dict[str, Any], path: str) -> list[StatusCause]:
    out: list[StatusCause] = []
    _walk(out, schema, path, level="root")
    out.sort(key=lambda c: f"{c['field']}: {c['message']}")
    return out


def _walk(out: list[StatusCause], node: Any, path: str, *, level: str) -> None:
    """level: `root`, `items` (array items) or `field` (object property/additionalProperties)."""
    if not isinstance(node, dict):
        _invalid(out, path, node, "must be a schema object")
        return
    for key, detail in _FORBIDDEN.items():
        if key in node:
            _forbidden(out, f"{path}.{key}", detail)
    _check_type(out, node, path, level)
    _check_extensions(out, node, path)
    _check_keywords(out, node, path)
    embedded = node.get("x-kubernetes-embedded-resource") is True
    props = node.get("properties")
    additional = node.get("additionalProperties")
    if additional is not None:
        if level == "root":
            _forbidden(out, f"{path}.additionalProperties", "must not be used at the root")
        if embedded:
            _forbidden(out, f"{path}.additionalProperties",
                       "must not be used if x-kubernetes-embedded-resource is set")
        if props and additional is not True:
            _forbidden(out, f"{path}.additionalProperties",
                       "additionalProperties and properties are mutual exclusive")
        if additional is False:
            _forbidden(out, f"{path}.additionalProperties", "must not be set to false")
        if isinstance(additional, dict):
            _walk(out, additional, f"{path}.additionalProperties", level="field")
    if isinstance(props, dict):
        if level == "root" or embedded:
            _check_type_meta(out, props, path, root=level == "root")
        for name, sub in props.items():
            _walk(out, sub, f"{path}.properties[{name}]", level="field")
    elif props is not None:
        _invalid(out, f"{path}.properties", props, "must be a map")
    if embedded and node.get("x-kubernetes-preserve-unknown-fields") is not True and not props:
        _required(out, f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource "
                                             "is true without x-kubernetes-preserve-unknown-fields")
    items = node.get("items")
    if isinstance(items, list):
        _forbidden(out, f"{path}.items", "items must be a schema object and not an array")
    elif isinstance(items, dict):
        _walk(out, items, f"{path}.items", level="items")
    elif node.get("type") == "array":
        _required(out, f"{path}.items", "must be specified")
    _combinators(out, node, path)
    if "default" in node and level != "root":
        _check_default(out, node, path)


def _check_type(out: list[StatusCause], node: dict[str, Any], path: str, level: str) -> None:
    typ = node.get("type")
    if typ is not None and typ not in _TYPES:
        listed = ", ".join(go_value(t) for t in _TYPES)
        out.append(_cause("FieldValueNotSupported",
                          f"Unsupported value: {go_value(typ)}: supported values: {listed}",
                          f"{path}.type"))
    if node.get("x-kubernetes-embedded-resource") is True and typ != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        if typ:
            _invalid(out, f"{path}.type", typ, detail)
        else:
            _required(out, f"{path}.type", detail)
    elif (not typ and node.get("x-kubernetes-int-or-string") is not True
          and node.get("x-kubernetes-preserve-unknown-fields") is not True):
        context = {"root": "at the root", "items": "for specified array items",
                   "field": "for specified object fields"}[level]
        _required(out, f"{path}.type", f"must not be empty {context}")
    if level == "root" and typ and typ != "object":
        _invalid(out, f"{path}.type", typ, "must be object at the root")


def _check_extensions(out: list[StatusCause], node: dict[str, Any], path: str) -> None:
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if preserve is False:
        _invalid(out, f"{path}.x-kubernetes-preserve-unknown-fields", False,
                 "must be true or undefined")
    if node.get("x-kubernetes-int-or-string") is True:
        for key in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"):
            if node.get(key) is True:
                _invalid(out, f"{path}.{key}", True,
                         "must be false if x-kubernetes-int-or-string is true")
    if node.get("x-kubernetes-list-type") == "map" and not node.get("x-kubernetes-list-map-keys"):
        _required(out, f"{path}.x-kubernetes-list-map-keys",
                  "must not be empty if x-kubernetes-list-type is map")


def _check_keywords(out: list[StatusCause], node: dict[str, Any], path: str) -> None:
    if node.get("uniqueItems") is True:
        _forbidden(out, f"{path}.uniqueItems",
                   "uniqueItems cannot be set to true since the runtime complexity becomes "
                   "quadratic")
    pattern = node.get("pattern")
    if pattern is not None and (not isinstance(pattern, str) or compile_pattern(pattern) is None):
        _invalid(out, f"{path}.pattern", pattern, "must be a valid regular expression, but isn't")


def _check_type_meta(out: list[StatusCause], props: dict[str, Any], path: str, *,
                     root: bool) -> None:
    for key in ("kind", "apiVersion"):
        sub = props.get(key)
        if isinstance(sub, dict) and sub.get("type") != "string":
            _invalid(out, f"{path}.properties[{key}].type", sub.get("type"), "must be string")
    meta = props.get("metadata")
    if not isinstance(meta, dict):
        return
    mpath = f"{path}.properties[metadata]"
    if meta.get("type") != "object":
        _invalid(out, f"{mpath}.type", meta.get("type"), "must be object")
    if root:
        extra = set(meta) - {"type", "properties"}
        names = set(meta.get("properties") or {})
        if extra or names - {"name", "generateName"}:
            _forbidden(out, mpath, "must not specify anything other than name and generateName, "
                                   "but metadata is implicitly specified")


def _combinators(out: list[StatusCause], node: dict[str, Any], path: str, *,
                 skip_any_of: bool = False) -> None:
    """allOf/anyOf/oneOf/not hold value validations only — except kube's two IntOrString
    forms, `anyOf: [{type: integer}, {type: string}]` and the same as `allOf[0].anyOf`
    (kube: isIntOrStringAnyOfPattern / isIntOrStringAllOfPattern), which controller-gen
    writes for every IntOrString and Quantity field."""
    for comb in _COMBINATORS:
        subs = node.get(comb) or []
        if comb == "anyOf" and (skip_any_of or subs == _INT_OR_STRING_ANY_OF):
            continue
        for i, sub in enumerate(subs):
            first_all_of = comb == "allOf" and i == 0 and isinstance(sub, dict) and sub.get(
                "anyOf") == _INT_OR_STRING_ANY_OF
            _nested(out, sub, f"{path}.{comb}[{i}]", skip_any_of=first_all_of)
    if "not" in node:
        _nested(out, node["not"], f"{path}.not")


def _nested(out: list[StatusCause], node: Any, path: str, *, skip_any_of: bool = False) -> None:
    """A schema under allOf/anyOf/oneOf/not: value validations only."""
    if not isinstance(node, dict):
        _invalid(out, path, node, "must be a schema object")
        return
    for key, detail in _NESTED_FORBIDDEN.items():
        if key in node and node[key] is not False:
            _forbidden(out, f"{path}.{key}", detail)
    if node.get("nullable") is True:
        _forbidden(out, f"{path}.nullable", "must be false to be structural")
    _check_keywords(out, node, path)
    props = node.get("properties")
    if isinstance(props, dict):
        if "metadata" in props:
            _forbidden(out, f"{path}.properties[metadata]",
                       "must not be specified in a nested context")
        for name, sub in props.items():
            _nested(out, sub, f"{path}.properties[{name}]")
    if isinstance(node.get("items"), dict):
        _nested(out, node["items"], f"{path}.items")
    _combinators(out, node, path, skip_any_of=skip_any_of)


def _check_default(out: list[StatusCause], node: dict[str, Any], path: str) -> None:
    value = node["default"]
    if value is None and node.get("nullable"):
        return
    bare = {k: v for k, v in node.items() if k != "default"}
    if isinstance(value, dict):
        wrapper = {"type": "object", "properties": {"x": bare}}
        probe: dict[str, Any] = {"x": _copy(value)}
        pruned = prune(probe, wrapper)
        if pruned:
            shown = ", ".join(p.removeprefix("x.") for p in pruned)
            _invalid(out, f"{path}.default", value, f"must not have unknown fields: {shown}")
        apply_defaults(probe, wrapper)
        value = probe.get("x", value)
    out.extend(validate_value(value, bare, f"{path}.default"))


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
