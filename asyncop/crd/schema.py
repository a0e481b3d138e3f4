"""From a pydantic model to a structural OpenAPI v3 schema, as a CRD's openAPIV3Schema needs.

Pydantic writes a JSON schema (draft 2020-12); Kubernetes wants OpenAPI v3.0 in "structural"
form. `object_schema(owner, model)` converts one into the other:

- `$ref`s are inlined (a recursive model cannot be: structural schemas are trees);
- titles, `examples` and other keys kube does not know are dropped; descriptions stay (field
  descriptions win over a nested model's docstring);
- `X | None` with a default of None is simply an optional field; a field that is required
  but may be None gets `nullable: true` (so does `Annotated[..., Nullable]`);
- `const` becomes a one-value `enum`; `exclusiveMinimum: n` becomes `minimum: n` plus
  `exclusiveMinimum: true` (OpenAPI 3.0); `uniqueItems` (sets) becomes
  `x-kubernetes-list-type: set` (kube rejects uniqueItems); `format: binary` is `byte`;
- `dict[str, Any]`, `Any` and models with `extra="allow"` keep unknown fields
  (`x-kubernetes-preserve-unknown-fields: true`); `dict[str, X]` is `additionalProperties: X`;
- `default: null` is dropped; CEL rules from `Rule` markers and `rules=` model keywords become
  `x-kubernetes-validations` (model rules first).

Anything without a structural mapping (tuples with mixed items, unions of different types,
arbitrary classes, callables) is a `CRDError` naming the class and the field path. Invariant:
the output's keys come in one fixed order, so generated YAML is byte-stable.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, PydanticOmit
from pydantic_core.core_schema import ErrorType

from asyncop.crd.errors import CRDError

Schema = dict[str, Any]
Path = tuple[str, ...]

ORDER = (
    "type", "format", "description", "enum", "default", "nullable",
    "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "minProperties",
    "maxProperties", "required", "properties", "additionalProperties", "items",
    "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations",
)
_COPIED = frozenset(ORDER) - {"properties", "additionalProperties", "items", "required",
                              "x-kubernetes-validations"}
_NULL: Schema = {"type": "null"}
_INVALID = "x-asyncop-invalid"
_RULES = "x-asyncop-rules"
_OPTIONAL = "x-asyncop-optional-null"
_REF = "x-asyncop-ref"


class _Generator(GenerateJsonSchema):
    """Pydantic's generator, but a type with no JSON schema leaves a marker at its place
    (instead of raising without saying which field it is)."""

    def handle_invalid_for_json_schema(
        self, schema: CoreSchema | ErrorType, error_info: str
    ) -> JsonSchemaValue:
        return {_INVALID: error_info}

    def callable_schema(self, schema: Any) -> JsonSchemaValue:
        return {_INVALID: "a callable"}

    def default_schema(self, schema: Any) -> JsonSchemaValue:
        try:
            return super().default_schema(schema)
        except PydanticOmit:
            raise
        except Exception:  # a default that cannot be serialised: no default in the CRD
            return self.generate_inner(schema["schema"])


def json_schema(model: type[BaseModel]) -> Schema:
    return model.model_json_schema(by_alias=True, mode="validation", schema_generator=_Generator)


def object_schema(owner: str, model: type[BaseModel]) -> Schema:
    """The structural schema of `model` (an object); errors name `owner` and the field."""
    raw = json_schema(model)
    defs = raw.pop("$defs", {})
    out = _Converter(owner, model, defs).convert(raw, ())
    out.pop(_OPTIONAL, None)
    return out


class _Converter:
    def __init__(self, owner: str, model: type[BaseModel], defs: dict[str, Schema]) -> None:
        self.owner = owner
        self.model = model
        self.defs = defs
        self.stack: list[str] = []

    def error(self, path: Path, problem: str) -> CRDError:
        where = _dotted(path)
        return CRDError(f"{self.owner}: {where}: {problem}" if where else
                        f"{self.owner}: {problem}")

    def type_name(self, path: Path) -> str:
        return _type_name(_annotation_at(self.model, path))

    # -- nodes --------------------------------------------------------------------------------
    def convert(self, node: Schema, path: Path) -> Schema:
        node = self.resolve(node, path)
        if "anyOf" in node or "oneOf" in node:
            node = self.union(node, path)
        name = node.get(_REF)
        if name is None:
            return self.convert_node(node, path)
        if name in self.stack:
            raise self.error(path, f"{name} refers to itself; a structural schema cannot "
                             "recurse (use a dict[str, Any] field to cut the cycle)")
        self.stack.append(name)
        try:
            return self.convert_node(node, path)
        finally:
            self.stack.pop()

    def convert_node(self, node: Schema, path: Path) -> Schema:
        if _INVALID in node:
            raise self.error(path, f"{self.type_name(path)} has no OpenAPI mapping (use a "
                             "str/int/float/bool, list[...], dict[str, ...] or a Model)")
        if "prefixItems" in node:
            raise self.error(path, f"{self.type_name(path)} has no OpenAPI mapping (use "
                             "list[...] or a Model)")
        if "allOf" in node or "not" in node:
            raise self.error(path, "allOf/not have no structural mapping here; use a Model")
        out: Schema = {}
        if "const" in node:
            node = {**node, "enum": [node["const"]]}
        if isinstance(node.get("type"), list):
            raise self.error(path, f"{self.type_name(path)} is not a structural schema "
                             "(several types)")
        if node.get("type") == "null":
            raise self.error(path, "a field that can only be None has no OpenAPI mapping")
        for key in _COPIED:
            if key in node:
                out[key] = node[key]
        if isinstance(out.get("description"), str):
            out["description"] = prose(out["description"])
        if "enum" in out:
            self.check_enum(out, path)
        if out.get("format") == "binary":
            out["format"] = "byte"
        for bound in ("Minimum", "Maximum"):
            key = f"exclusive{bound}"
            if isinstance(out.get(key), int | float) and not isinstance(out[key], bool):
                out[bound.lower()] = out[key]
                out[key] = True
        if out.get("default", 0) is None:
            del out["default"]
        if node.get(_OPTIONAL):
            out[_OPTIONAL] = True
        typ = node.get("type")
        if typ == "array":
            self.array(node, out, path)
        elif typ == "object" or "properties" in node or "additionalProperties" in node:
            out.setdefault("type", "object")
            self.object(node, out, path)
        elif not typ and not out.get("x-kubernetes-int-or-string"):
            out["x-kubernetes-preserve-unknown-fields"] = True  # Any
        rules = node.get(_RULES)
        if rules:
            out["x-kubernetes-validations"] = list(rules)
        return _ordered(out)

    def resolve(self, node: Schema, path: Path) -> Schema:
        """Inline `$ref` (and pydantic's `allOf: [{$ref}]`); siblings override the target."""
        ref = node.get("$ref")
        if ref is None and isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            ref = node["allOf"][0].get("$ref")
            node = {k: v for k, v in node.items() if k != "allOf"}
        if ref is None:
            return node
        name = ref.rsplit("/", 1)[-1]
        target = self.defs[name]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        rules = [*target.get(_RULES, []), *node.get(_RULES, [])]
        if rules:
            merged[_RULES] = rules
        merged[_REF] = name
        return merged

    def union(self, node: Schema, path: Path) -> Schema:
        members = node.get("anyOf") or node.get("oneOf") or []
        rest = [m for m in members if m != _NULL]
        siblings = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        if len(rest) != 1:
            raise self.error(path, f"{self.type_name(path)} is not a structural schema (types "
                             "differ); annotate with IntOrString or split the field")
        member = self.resolve(rest[0], path)
        merged = {**member, **siblings}
        rules = [*member.get(_RULES, []), *siblings.get(_RULES, [])]
        if rules:
            merged[_RULES] = rules
        if len(rest) < len(members):
            merged[_OPTIONAL] = True
        return merged

    def check_enum(self, out: Schema, path: Path) -> None:
        kinds = {type(v) for v in out["enum"]}
        if len(kinds) > 1:
            raise self.error(path, f"enum values {out['enum']!r} mix types; a structural "
                             "enum has one type")
        if "type" not in out:
            kind = kinds.pop() if kinds else str
            out["type"] = {str: "string", int: "integer", float: "number",
                           bool: "boolean"}.get(kind, "string")

    def array(self, node: Schema, out: Schema, path: Path) -> None:
        if node.get("uniqueItems"):
            listed = node.get("x-kubernetes-list-type")
            if listed not in (None, "set"):
                raise self.error(path, f"a set cannot be x-kubernetes-list-type {listed}")
            out["x-kubernetes-list-type"] = "set"
        items = node.get("items")
        if not isinstance(items, dict):
            raise self.error(path, "a list needs an item type (list[...])")
        converted = self.convert(items, (*path, "[*]"))
        if converted.pop(_OPTIONAL, False):
            converted["nullable"] = True
        out["items"] = converted

    def object(self, node: Schema, out: Schema, path: Path) -> None:
        props: dict[str, Schema] = node.get("properties") or {}
        required = list(node.get("required") or [])
        extra = node.get("additionalProperties")
        if props:
            out["properties"] = {}
            for name, prop in props.items():
                converted = self.convert(prop, (*path, name))
                if converted.pop(_OPTIONAL, False) and name in required:
                    converted["nullable"] = True
                    out["properties"][name] = _ordered(converted)
                else:
                    out["properties"][name] = converted
            if required:
                out["required"] = required
        if extra is True or extra == {}:
            out["x-kubernetes-preserve-unknown-fields"] = True
        elif isinstance(extra, dict):
            if props:
                raise self.error(path, "a model with both fields and a dict of extra values "
                                 "is not structural")
            value = self.convert(extra, (*path, "*"))
            value.pop(_OPTIONAL, None)
            out["additionalProperties"] = value
        if not props and extra is None and "x-kubernetes-preserve-unknown-fields" not in out:
            out["x-kubernetes-preserve-unknown-fields"] = True  # a bare `dict`


def prose(text: str) -> str:
    """A docstring as a description: lines of a paragraph joined, paragraphs kept."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
    return "\n".join(p for p in paragraphs if p)


def _ordered(node: Schema) -> Schema:
    out = {key: node[key] for key in ORDER if key in node}
    if node.get(_OPTIONAL):
        out[_OPTIONAL] = True
    return out


def _dotted(path: Path) -> str:
    text = ""
    for part in path:
        if part in ("[*]", "*"):
            text += "[*]" if part == "[*]" else "[key]"
        else:
            text += f".{part}" if text else part
    return text


# -- naming the Python type at a path, for error messages -------------------------------------
def _strip(annotation: Any) -> Any:
    """`Annotated[X, ...]` -> X, `X | None` -> X."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) == 1:
                annotation = args[0]
                continue
        return annotation


def _annotation_at(model: type[BaseModel], path: Path) -> Any:
    current: Any = model
    for part in path:
        current = _strip(current)
        if part in ("[*]", "*"):
            args = typing.get_args(current)
            current = args[-1] if args else Any
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return current
        for name, field in current.model_fields.items():
            if part in (name, field.alias, field.serialization_alias):
                current = field.annotation
                break
        else:
            return current
    return _strip(current)


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    text = repr(annotation).replace("typing.", "")
    for arg in typing.get_args(annotation):
        if isinstance(arg, type):
            text = text.replace(repr(arg), arg.__name__).replace(
                f"{arg.__module__}.{arg.__qualname__}", arg.__name__)
    return text
