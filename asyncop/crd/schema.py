"""From a pydantic model to a structural OpenAPI v3 schema, as a CRD's openAPIV3Schema needs.

Pydantic writes a JSON schema (draft 2020-12, see `pydantic_schema`); Kubernetes wants
OpenAPI v3.0 in "structural" form. `object_schema(owner, model)` converts one into the other:

- `$ref`s are inlined (a recursive model cannot be: structural schemas are trees); titles,
  examples and other keys kube does not use are dropped; descriptions stay (a field's own
  description wins over its model's docstring) with paragraph lines joined;
- types: int -> integer, float -> number (no format), `int | float` -> number, bool, str;
  `Literal`/`Enum`/`const` -> `enum` with the values' one type; `list[X]`/`tuple[X, ...]` ->
  array; `set`/`frozenset` -> array with `x-kubernetes-list-type: set` (kube rejects
  `uniqueItems`); `dict[str, X]` -> `additionalProperties: X`; `Any`, `dict[str, Any]`, a
  bare `dict` and models with `extra="allow"` keep unknown fields; a model with
  `extra="forbid"` states nothing more (kube prunes unknown fields anyway);
- constraints: ge/le -> minimum/maximum, gt/lt -> minimum/maximum plus OpenAPI 3.0's
  `exclusiveMinimum/exclusiveMaximum: true`, multiple_of, lengths (minLength/minItems/
  minProperties...), pattern;
- formats: date-time, date, uuid, email, ipv4/ipv6, uri... pass through; formats kube does
  not know are dropped, and so is pydantic's `duration` for timedelta (its ISO 8601 text is
  not kube's Go duration); `bytes` is a plain string (pydantic's base64 is the URL-safe
  alphabet, kube's `format: byte` the standard one; `pydantic.Base64Bytes` gets `byte`);
  `Format(...)` states a format explicitly (checked against the ones kube knows);
- nullability, one rule: None where a value must be present — a required field, a list
  item, a map value — gives `nullable: true`; an optional field whose default is None is
  simply not required (no `nullable`, no `default: null`); `Annotated[..., Nullable]` asks
  for `nullable: true` anywhere;
- defaults: the field's default as its serializer writes it, nulls the schema does not
  allow removed, never `default: null` (factories: see `pydantic_schema`);
- CEL rules from `Rule` markers and `rules=` model keywords become `x-kubernetes-validations`
  (the model's rules first);
- one of kube's own types (a class with `__kube_definition__`, from `asyncop.k8s`) becomes
  kube's full schema from kubespec, expanded as controller-gen expands it (`kubetypes`); the
  field's description, default, nullability and rules go on top.

Anything without a structural mapping (tuples with mixed items, unions of different types,
arbitrary classes, callables) is a `CRDError` naming the class and the field path. Invariant:
the output's keys come in one fixed order (`ORDER`), so generated YAML is byte-stable.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from asyncop.crd.errors import CRDError
from asyncop.crd.kubetypes import KUBE_DEFINITION_KEY, KubeRecursion, kube_schema
from asyncop.crd.markers import FORMAT_KEY, KUBE_FORMATS, RULES_KEY
from asyncop.crd.pydantic_schema import BAD_DEFAULT_KEY, INVALID_KEY, UNMAPPED_KEY, json_schema
from asyncop.crd.typenames import dotted, type_at
from asyncop.crd.values import wire_value

Schema = dict[str, Any]
Path = tuple[str, ...]

ORDER = (
    "type", "format", "description", "enum", "default", "nullable",
    "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "minProperties",
    "maxProperties", "required", "properties", "additionalProperties", "items", "anyOf",
    "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations",
)
_COPIED = frozenset(ORDER) - {"properties", "additionalProperties", "items", "required",
                              "x-kubernetes-validations", "format", "anyOf"}
_NULL: Schema = {"type": "null"}
_OPTIONAL = "x-asyncop-optional-null"
_REF = "x-asyncop-ref"
_RULE_ORDER = ("rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf")
_ENUM_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_PYDANTIC_FORMATS = {"base64": "byte"}
_NOT_KUBE = frozenset({"duration", "binary", "base64url"})


def object_schema(owner: str, model: type[BaseModel], *,
                  embedded_object_meta: bool = False) -> Schema:
    """The structural schema of `model` (an object); errors name `owner` and the field.
    `embedded_object_meta`: kube's ObjectMeta inside kube's types keeps its fields
    (`kubetypes.kube_schema`)."""
    raw = json_schema(model)
    defs = raw.pop("$defs", {})
    out = _Converter(owner, model, defs, embedded_object_meta).convert(raw, ())
    out.pop(_OPTIONAL, None)
    return out


def prose(text: str) -> str:
    """A docstring as a description: lines of a paragraph joined, paragraphs kept."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
    return "\n\n".join(p for p in paragraphs if p)


class _Converter:
    def __init__(self, owner: str, model: type[BaseModel], defs: dict[str, Schema],
                 embedded_object_meta: bool) -> None:
        self.owner = owner
        self.model = model
        self.defs = defs
        self.embedded_object_meta = embedded_object_meta
        self.stack: list[str] = []

    def error(self, path: Path, problem: str) -> CRDError:
        where = dotted(path)
        return CRDError(f"{self.owner}: {where}: {problem}" if where else
                        f"{self.owner}: {problem}")

    def type_name(self, path: Path) -> str:
        return type_at(self.model, path)

    # -- nodes --------------------------------------------------------------------------------
    def convert(self, node: Schema, path: Path) -> Schema:
        node = self.resolve(node)
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
        if KUBE_DEFINITION_KEY in node:
            return self.kube_node(node, path)
        node = self.check_shape(node, path)
        out: Schema = {key: node[key] for key in _COPIED if key in node}
        if isinstance(out.get("description"), str):
            out["description"] = prose(out["description"])
        optional = bool(node.get(_OPTIONAL))
        if "enum" in out:
            optional = self.enum(out, path) or optional
        self.format(node, out, path)
        for bound in ("Minimum", "Maximum"):
            key = f"exclusive{bound}"
            if isinstance(out.get(key), int | float) and not isinstance(out[key], bool):
                out[bound.lower()] = out[key]
                out[key] = True
        typ = out.get("type")
        if typ == "array":
            self.array(node, out, path)
        elif typ == "object" or "properties" in node or "additionalProperties" in node:
            out.setdefault("type", "object")
            self.object(node, out, path)
        elif not typ and not out.get("x-kubernetes-int-or-string"):
            out["x-kubernetes-preserve-unknown-fields"] = True  # Any
        rules = node.get(RULES_KEY)
        if rules:
            out["x-kubernetes-validations"] = [
                {key: rule[key] for key in _RULE_ORDER if key in rule} for rule in rules]
        if "default" in out:
            self.default(node, out, path)
        result = {key: out[key] for key in ORDER if key in out}
        if optional:
            result[_OPTIONAL] = True
        return result

    def kube_node(self, node: Schema, path: Path) -> Schema:
        """One of kube's own types: its schema from kubespec (`kubetypes`); the field's
        description, default, nullability and CEL rules on top."""
        definition = node[KUBE_DEFINITION_KEY]
        try:
            out = kube_schema(definition, embedded_object_meta=self.embedded_object_meta)
        except KubeRecursion as exc:
            name = exc.definition.rpartition(".")[2]
            raise self.error((*path, *exc.at), f"{name} refers to itself (kube's "
                             f"{exc.definition}); a structural schema cannot recurse (use a "
                             "dict[str, Any] field to cut the cycle)") from None
        except KeyError:
            raise self.error(path, f"{self.type_name(path)} names {definition!r}, which "
                             "Kubernetes does not define") from None
        if isinstance(node.get("description"), str):
            out["description"] = prose(node["description"])
        if node.get("nullable"):
            out["nullable"] = True
        rules = node.get(RULES_KEY)
        if rules:
            out["x-kubernetes-validations"] = [
                {key: rule[key] for key in _RULE_ORDER if key in rule} for rule in rules]
        if "default" in node:
            out["default"] = node["default"]
            self.default(node, out, path)
        result = _ordered(out)
        if node.get(_OPTIONAL):
            result[_OPTIONAL] = True
        return result

    def default(self, node: Schema, out: Schema, path: Path) -> None:
        if node.get(BAD_DEFAULT_KEY):
            raise self.error(path, f"the default {out['default']!r} is invalid: "
                             f"{node[BAD_DEFAULT_KEY]}")
        value = out["default"] = wire_value(out["default"], out, sort_sets=True)
        if value is None:
            del out["default"]
        elif out.get("x-kubernetes-embedded-resource") and not (
                isinstance(value, dict) and value.get("apiVersion") and value.get("kind")):
            raise self.error(path, "the default of an embedded resource needs apiVersion and "
                             "kind (or make the field `... | None = None`)")

    def check_shape(self, node: Schema, path: Path) -> Schema:
        """Reject what has no structural form; homogeneous fixed tuples become arrays."""
        if UNMAPPED_KEY in node:
            raise self.error(path, node[UNMAPPED_KEY])
        if INVALID_KEY in node:
            raise self.error(path, f"{self.type_name(path)} has no OpenAPI mapping (use a "
                             "str/int/float/bool, list[...], dict[str, ...] or a Model)")
        if "prefixItems" in node:
            items = [self.resolve(i) for i in node["prefixItems"]]
            if not items or node.get("items") not in (None, False) or any(
                    i != items[0] for i in items):
                raise self.error(path, f"{self.type_name(path)} has no OpenAPI mapping (use "
                                 "list[...] or a Model)")
            node = {k: v for k, v in node.items() if k != "prefixItems"}
            node["items"] = node.get("items") or items[0]
        if "allOf" in node or "not" in node:
            raise self.error(path, f"{self.type_name(path)} has no structural mapping "
                             "(allOf/not); use a Model")
        if "const" in node:
            node = {**node, "enum": [node["const"]]}
        if isinstance(node.get("type"), list):
            raise self.error(path, f"{self.type_name(path)} is not a structural schema "
                             "(several types)")
        if node.get("type") == "null":
            raise self.error(path, "a field that can only be None has no OpenAPI mapping")
        return node

    def resolve(self, node: Schema) -> Schema:
        """Inline `$ref` (and pydantic's `allOf: [{$ref}]`); siblings override the target."""
        ref = node.get("$ref")
        if ref is None and isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            ref = node["allOf"][0].get("$ref")
            if ref is not None:
                node = {k: v for k, v in node.items() if k != "allOf"}
        if ref is None:
            return node
        name = ref.rsplit("/", 1)[-1]
        target = self.defs[name]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        rules = [*target.get(RULES_KEY, []), *node.get(RULES_KEY, [])]
        if rules:
            merged[RULES_KEY] = rules
        merged[_REF] = name
        return merged

    def union(self, node: Schema, path: Path) -> Schema:
        members = node.get("anyOf") or node.get("oneOf") or []
        rest = [self.resolve(m) for m in members if m != _NULL]
        siblings = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        if len(rest) == 1:
            member = rest[0]
        elif all(set(m) <= {"type"} for m in rest) and {m.get("type") for m in rest} == {
                "integer", "number"}:
            member = {"type": "number"}  # int | float
        elif rest and all(m.get("type") == "object" or _REF in m for m in rest):
            raise self.error(path, f"{self.type_name(path)} is not a structural schema (a "
                             "union of models); use one Model with optional fields")
        else:
            raise self.error(path, f"{self.type_name(path)} is not a structural schema (types "
                             "differ); annotate with IntOrString or split the field")
        merged = {**member, **siblings}
        rules = [*member.get(RULES_KEY, []), *siblings.get(RULES_KEY, [])]
        if rules:
            merged[RULES_KEY] = rules
        if len(rest) < len(members):
            merged[_OPTIONAL] = True
        return merged

    def enum(self, out: Schema, path: Path) -> bool:
        """Check an enum has one value type (and set `type`); True if it allowed None."""
        values = out["enum"]
        with_none = None in values
        values = out["enum"] = [v for v in values if v is not None]
        kinds = {_ENUM_TYPES.get(type(v), "object") for v in values}
        if len(kinds) > 1:
            shown = ", ".join(repr(v) for v in values)
            raise self.error(path, f"enum values {shown} mix types; a structural enum has one "
                             "type")
        if "type" not in out:
            out["type"] = kinds.pop() if kinds else "string"
        return with_none

    def format(self, node: Schema, out: Schema, path: Path) -> None:
        fmt = node.get("format")
        fmt = _PYDANTIC_FORMATS.get(fmt, fmt) if isinstance(fmt, str) else None
        if fmt in KUBE_FORMATS and fmt not in _NOT_KUBE:
            out["format"] = fmt
        wanted = node.get(FORMAT_KEY)
        if wanted is not None:
            if wanted not in KUBE_FORMATS:
                raise self.error(path, f"format {wanted!r} is not one kube-apiserver knows "
                                 f"({', '.join(sorted(KUBE_FORMATS))})")
            out["format"] = wanted

    def array(self, node: Schema, out: Schema, path: Path) -> None:
        if node.get("uniqueItems"):
            listed = out.get("x-kubernetes-list-type")
            if listed not in (None, "set"):
                raise self.error(path, f"a set cannot be x-kubernetes-list-type {listed}")
            out["x-kubernetes-list-type"] = "set"
        items = node.get("items")
        if not isinstance(items, dict):
            raise self.error(path, "a list needs an item type (list[...])")
        out["items"] = _nullable_if_optional(self.convert(items, (*path, "[*]")))

    def object(self, node: Schema, out: Schema, path: Path) -> None:
        props: dict[str, Schema] = node.get("properties") or {}
        required = list(node.get("required") or [])
        extra = node.get("additionalProperties")
        if props:
            out["properties"] = {}
            for name, prop in props.items():
                converted = self.convert(prop, (*path, name))
                if name in required:
                    converted = _nullable_if_optional(converted)
                converted.pop(_OPTIONAL, None)
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
            out["additionalProperties"] = _nullable_if_optional(value)
        if "properties" not in node and extra is None:
            out["x-kubernetes-preserve-unknown-fields"] = True  # a bare `dict`


def _ordered(node: Schema) -> Schema:
    """`node` and every schema under it with their keys in ORDER."""
    out = {key: node[key] for key in ORDER if key in node}
    if "properties" in out:
        out["properties"] = {k: _ordered(v) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = _ordered(out[key])
    return out


def _nullable_if_optional(node: Schema) -> Schema:
    """A node that must be present but may be None: `nullable: true` (in its ORDER place)."""
    if not node.pop(_OPTIONAL, False):
        return node
    node["nullable"] = True
    return {key: node[key] for key in ORDER if key in node}
