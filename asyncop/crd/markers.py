"""Markers: what pydantic cannot say about a field, said with `typing.Annotated`.

```python
port: IntOrString = 8080                              # x-kubernetes-int-or-string
config: Annotated[dict[str, Any], PreserveUnknownFields]
template: Annotated[dict[str, Any], EmbeddedResource] # a whole embedded object
ports: Annotated[list[Port], ListMap("name")]         # x-kubernetes-list-type: map
replicas: Annotated[int, Rule("self >= 0", message="must not be negative")]
note: Annotated[str | None, Nullable] = None          # an explicit null is allowed
```

Each marker adds keys to the field's JSON schema (through pydantic's
`__get_pydantic_json_schema__` hook); `asyncop.crd.schema` turns that JSON schema into a
structural OpenAPI v3 schema and checks the result. Markers never change how a value is
validated in Python, except `Int32` (checked against the int32 range, which its schema
states too).

Invariant: every key a marker adds is a key kube-apiserver accepts in `openAPIV3Schema`, or
an internal `x-asyncop-*` key that the schema conversion consumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

JsonSchema = dict[str, Any]

RULES_KEY = "x-asyncop-rules"
"""Internal key: the CEL rules of a node, converted to `x-kubernetes-validations`."""
FORMAT_KEY = "x-asyncop-format"
"""Internal key: a format the user asked for (wins over the one pydantic derives)."""

KUBE_FORMATS = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
    "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
    "rgbcolor", "byte", "password", "date", "duration", "datetime", "date-time",
    "int32", "int64", "float", "double",
})
"""The formats kube-apiserver knows (it ignores any other); numeric ones are informative."""

RULE_REASONS = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired",
                "FieldValueDuplicate")


class _Marker:
    """Base: subclasses return the keys they add in `keys()`."""

    def keys(self) -> JsonSchema:
        raise NotImplementedError

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema.update(self.keys())
        return schema


@dataclass(frozen=True, slots=True)
class Format(_Marker):
    """`format: <name>`; one of the formats kube-apiserver checks (`KUBE_FORMATS`): date-time,
    date, duration (Go syntax: `1h30m`), byte (standard base64), uuid, email, ipv4, cidr, ..."""

    name: str

    def keys(self) -> JsonSchema:
        return {FORMAT_KEY: self.name}


class _Flag(_Marker):
    key = ""

    def keys(self) -> JsonSchema:
        return {self.key: True}

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_")


class _PreserveUnknownFields(_Flag):
    key = "x-kubernetes-preserve-unknown-fields"


class _Nullable(_Flag):
    key = "nullable"


class _EmbeddedResource(_Marker):
    def keys(self) -> JsonSchema:
        return {"x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True}

    def __repr__(self) -> str:
        return "EmbeddedResource"


class _IntOrStringMarker(_Marker):
    """Replaces the `anyOf: [integer, string]` pydantic makes with the kube extension."""

    def keys(self) -> JsonSchema:
        return {"x-kubernetes-int-or-string": True}

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        kept = {k: v for k, v in schema.items() if k in ("description", RULES_KEY)}
        return {**kept, "x-kubernetes-int-or-string": True}

    def __repr__(self) -> str:
        return "IntOrString"


PreserveUnknownFields = _PreserveUnknownFields()
"""Keep fields the schema does not list (`x-kubernetes-preserve-unknown-fields: true`)."""

Nullable = _Nullable()
"""Allow an explicit `null` (`nullable: true`) where the default rule would not."""

EmbeddedResource = _EmbeddedResource()
"""A whole Kubernetes object (apiVersion, kind, metadata validated like a resource's)."""

IntOrString = Annotated[int | str, _IntOrStringMarker()]
"""A port or a percentage: `x-kubernetes-int-or-string: true` (like intstr.IntOrString)."""

Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1), Format("int32")]
"""An int32: `format: int32` plus the int32 bounds, checked by the server and in Python."""

Int64 = Annotated[int, Format("int64")]
"""An int64 (`format: int64`), like generations and counts in Kubernetes' own types."""


@dataclass(frozen=True, slots=True, init=False)
class ListMap(_Marker):
    """A list of objects merged by key(s): `x-kubernetes-list-type: map` with map keys.
    Each key must be a scalar field of the item model that is required or has a default."""

    map_keys: tuple[str, ...]

    def __init__(self, *keys: str) -> None:
        if not keys:
            raise ValueError("ListMap needs at least one key field")
        object.__setattr__(self, "map_keys", tuple(keys))

    def keys(self) -> JsonSchema:
        return {"x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": list(self.map_keys)}


@dataclass(frozen=True, slots=True)
class _ListType(_Marker):
    kind: Literal["set", "atomic"]

    def keys(self) -> JsonSchema:
        return {"x-kubernetes-list-type": self.kind}

    def __repr__(self) -> str:
        return f"List{self.kind.title()}"


ListSet = _ListType("set")
"""A list of unique scalars, merged as a set (`x-kubernetes-list-type: set`)."""

ListAtomic = _ListType("atomic")
"""A list replaced as a whole on merges (`x-kubernetes-list-type: atomic`)."""


@dataclass(frozen=True, slots=True)
class MapType(_Marker):
    """`x-kubernetes-map-type`: "granular" (merged per key) or "atomic" (replaced whole)."""

    kind: Literal["granular", "atomic"]

    def keys(self) -> JsonSchema:
        return {"x-kubernetes-map-type": self.kind}


@dataclass(frozen=True, slots=True)
class Rule(_Marker):
    """A CEL validation rule (`x-kubernetes-validations`), on a field or (with the class
    keyword `rules=`) on a whole Model. The embedded API server evaluates them as
    kube-apiserver does (transition rules with `oldSelf` on updates only)."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None

    def to_dict(self) -> JsonSchema:
        out: JsonSchema = {"rule": self.rule}
        if self.message is not None:
            out["message"] = self.message
        if self.message_expression is not None:
            out["messageExpression"] = self.message_expression
        if self.reason is not None:
            out["reason"] = self.reason
        if self.field_path is not None:
            out["fieldPath"] = self.field_path
        if self.optional_old_self is not None:
            out["optionalOldSelf"] = self.optional_old_self
        return out

    def keys(self) -> JsonSchema:
        return {RULES_KEY: [self.to_dict()]}

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema[RULES_KEY] = [*schema.get(RULES_KEY, []), self.to_dict()]
        return schema
