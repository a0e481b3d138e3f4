"""Is a CRD's openAPIV3Schema structural? kube's rules, with kube's field paths and messages.

`validate_structural(schema, path)` walks a schema (as found at `path`, e.g.
`spec.versions[0].schema.openAPIV3Schema`) and reports what apiextensions.k8s.io/v1 rejects:
missing or unknown `type`s, forbidden keywords (`$ref`, `uniqueItems: true`, ...),
`additionalProperties` next to `properties`, arrays without `items`, uncompilable patterns,
root metadata constraints other than name/generateName, and invalid `default`s.

Invariant: child paths are rendered like kube (`.properties[spec]`, `.items`,
`.additionalProperties`), so the causes can go straight into a 422 Status.
"""

from __future__ import annotations

from typing import Any

from asyncop.api.status import StatusCause
from asyncop.apiserver.schema import validate_value
from asyncop.apiserver.schema_formats import compile_pattern
from asyncop.apiserver.schema_mutate import apply_defaults, prune
from asyncop.apiserver.schema_text import go_value

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


def _cause(reason: str, message: str, field: str) -> StatusCause:
    return {"reason": reason, "message": message, "field": field}


def validate_structural(schema: dict[str, Any], path: str) -> list[StatusCause]:
    out: list[StatusCause] = []
    typ = schema.get("type")
    if not typ:
        out.append(_cause("FieldValueRequired", "Required value: must not be empty at the root",
                          f"{path}.type"))
    elif typ != "object":
        out.append(_cause("FieldValueInvalid",
                          f"Invalid value: {go_value(typ)}: must be object at the root",
                          f"{path}.type"))
    meta = (schema.get("properties") or {}).get("metadata")
    if isinstance(meta, dict):
        extra = set(meta) - {"type", "properties", "description"}
        props = set(meta.get("properties") or {})
        if extra or props - {"name", "generateName"} or meta.get("type", "object") != "object":
            detail = ("Forbidden: must not specify anything other than name and generateName, "
                      "but metadata is implicitly specified")
            out.append(_cause("FieldValueForbidden", detail, f"{path}.properties[metadata]"))
    _walk(out, schema, path, root=True, context="")
    return out


def _walk(out: list[StatusCause], node: Any, path: str, *, root: bool, context: str) -> None:
    if not isinstance(node, dict):
        out.append(_cause("FieldValueInvalid",
                          f"Invalid value: {go_value(node)}: must be a schema object", path))
        return
    for key, detail in _FORBIDDEN.items():
        if key in node:
            out.append(_cause("FieldValueForbidden", f"Forbidden: {detail}", f"{path}.{key}"))
    typ = node.get("type")
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if typ is not None and typ not in _TYPES:
        listed = ", ".join(go_value(t) for t in _TYPES)
        out.append(_cause("FieldValueNotSupported",
                          f"Unsupported value: {go_value(typ)}: supported values: {listed}",
                          f"{path}.type"))
    if not root and not typ and not int_or_string and preserve is not True and context:
        out.append(_cause("FieldValueRequired", f"Required value: must not be empty for {context}",
                          f"{path}.type"))
    if int_or_string and typ:
        detail = (f"Invalid value: {go_value(typ)}: must be empty if x-kubernetes-int-or-string "
                  "is true")
        out.append(_cause("FieldValueInvalid", detail, f"{path}.type"))
    if preserve is False:
        out.append(_cause("FieldValueInvalid", "Invalid value: false: must be true or undefined",
                          f"{path}.x-kubernetes-preserve-unknown-fields"))
    if node.get("x-kubernetes-embedded-resource") is True and typ != "object":
        detail = "Required value: must be object if x-kubernetes-embedded-resource is true"
        out.append(_cause("FieldValueRequired", detail, f"{path}.type"))
    if node.get("uniqueItems") is True:
        detail = ("Forbidden: uniqueItems cannot be set to true since the runtime complexity "
                  "becomes quadratic")
        out.append(_cause("FieldValueForbidden", detail, f"{path}.uniqueItems"))
    pattern = node.get("pattern")
    if pattern is not None and (not isinstance(pattern, str) or compile_pattern(pattern) is None):
        detail = (f"Invalid value: {go_value(pattern)}: must be a valid regular expression, "
                  "but isn't")
        out.append(_cause("FieldValueInvalid", detail, f"{path}.pattern"))
    props = node.get("properties")
    additional = node.get("additionalProperties")
    if props and additional is not None and additional is not True:
        out.append(_cause("FieldValueForbidden",
                          "Forbidden: additionalProperties and properties are mutual exclusive",
                          f"{path}.additionalProperties"))
    if additional is False:
        out.append(_cause("FieldValueForbidden", "Forbidden: must not be set to false",
                          f"{path}.additionalProperties"))
    if isinstance(props, dict):
        for name, sub in props.items():
            _walk(out, sub, f"{path}.properties[{name}]", root=False,
                  context="specified object fields")
    elif props is not None:
        out.append(_cause("FieldValueInvalid", f"Invalid value: {go_value(props)}: must be a map",
                          f"{path}.properties"))
    if isinstance(additional, dict):
        _walk(out, additional, f"{path}.additionalProperties", root=False,
              context="specified additionalProperties")
    items = node.get("items")
    if isinstance(items, list):
        out.append(_cause("FieldValueForbidden",
                          "Forbidden: items must be a schema object and not an array",
                          f"{path}.items"))
    elif isinstance(items, dict):
        _walk(out, items, f"{path}.items", root=False, context="specified array items")
    elif typ == "array":
        out.append(_cause("FieldValueRequired", "Required value: must be specified",
                          f"{path}.items"))
    for comb in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(node.get(comb) or []):
            if isinstance(sub, dict) and isinstance(sub.get("pattern"), str):
                if compile_pattern(sub["pattern"]) is None:
                    out.append(_cause("FieldValueInvalid", "Invalid value: must be a valid regular "
                                      "expression, but isn't", f"{path}.{comb}[{i}].pattern"))
    if "default" in node and not root:
        _check_default(out, node, path)


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
            out.append(_cause("FieldValueInvalid",
                              f"Invalid value: {go_value(value)}: must not have unknown fields: "
                              f"{shown}", f"{path}.default"))
        apply_defaults(probe, wrapper)
        value = probe.get("x", value)
    out.extend(validate_value(value, bare, f"{path}.default"))


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
