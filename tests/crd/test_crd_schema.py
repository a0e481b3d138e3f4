"""Pydantic models -> structural OpenAPI v3 (asyncop/crd/schema.py): every mapping rule."""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Annotated, Any, Literal

from pydantic import Base64Bytes, BaseModel, ConfigDict, Field, PlainSerializer

from asyncop.crd import (
    Conditions,
    CustomResource,
    EmbeddedResource,
    Format,
    Int32,
    Int64,
    IntOrString,
    ListAtomic,
    ListMap,
    ListSet,
    MapType,
    Model,
    Nullable,
    PreserveUnknownFields,
    Rule,
)
from asyncop.crd.schema import ORDER

Schema = dict[str, Any]


def spec_of(spec: type[BaseModel]) -> Schema:
    """The schema of `spec` as the spec of a resource."""

    class Thing(CustomResource, group="example.com", version="v1"):
        spec: spec  # type: ignore[valid-type]

    node: Schema = Thing.schema()["properties"]["spec"]
    return node


def props(spec: type[BaseModel]) -> Schema:
    out: Schema = spec_of(spec)["properties"]
    return out


# -- scalars, constraints, formats ------------------------------------------------------------
def test_scalar_types_and_numeric_constraints() -> None:
    class Spec(Model):
        count: int = 1
        ratio: float = 0.5
        on: bool = False
        name: str = "x"
        either: int | float = 1
        size: Annotated[int, Field(ge=0, le=10)] = 1
        share: Annotated[float, Field(gt=0, lt=1, multiple_of=0.25)] = 0.5
        small: Int32 = 0
        big: Int64 = 0
        port: Annotated[Int32, Field(ge=1)] = 80

    p = props(Spec)
    assert p["count"] == {"type": "integer", "default": 1}
    assert p["ratio"] == {"type": "number", "default": 0.5}
    assert p["on"] == {"type": "boolean", "default": False}
    assert p["name"] == {"type": "string", "default": "x"}
    assert p["either"] == {"type": "number", "default": 1}
    assert p["size"] == {"type": "integer", "default": 1, "minimum": 0, "maximum": 10}
    assert p["share"] == {"type": "number", "default": 0.5, "minimum": 0,
                          "exclusiveMinimum": True, "maximum": 1, "exclusiveMaximum": True,
                          "multipleOf": 0.25}
    assert p["small"] == {"type": "integer", "format": "int32", "default": 0,
                          "minimum": -(2**31), "maximum": 2**31 - 1}
    assert p["big"] == {"type": "integer", "format": "int64", "default": 0}
    assert p["port"]["minimum"] == 1 and p["port"]["maximum"] == 2**31 - 1


def test_string_and_collection_lengths_and_patterns() -> None:
    class Spec(Model):
        name: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[a-z]+$")]
        args: Annotated[list[str], Field(min_length=1, max_length=3)] = ["run"]
        labels: Annotated[dict[str, str], Field(min_length=1, max_length=5)] = {"a": "b"}

    p = props(Spec)
    assert p["name"] == {"type": "string", "minLength": 1, "maxLength": 63,
                         "pattern": "^[a-z]+$"}
    assert p["args"] == {"type": "array", "default": ["run"], "minItems": 1, "maxItems": 3,
                         "items": {"type": "string"}}
    assert p["labels"] == {"type": "object", "default": {"a": "b"}, "minProperties": 1,
                           "maxProperties": 5, "additionalProperties": {"type": "string"}}


def test_formats_kube_knows_pass_through_and_others_are_dropped() -> None:
    class Spec(Model):
        when: datetime.datetime | None = None
        day: datetime.date | None = None
        at: datetime.time | None = None
        took: datetime.timedelta | None = None
        id: uuid.UUID | None = None
        blob: bytes | None = None
        b64: Base64Bytes | None = None
        every: Annotated[str, Format("duration")] = "1h"
        addr: Annotated[str, Format("ipv4")] = "10.0.0.1"

    p = props(Spec)
    assert p["when"] == {"type": "string", "format": "date-time"}
    assert p["day"] == {"type": "string", "format": "date"}
    assert p["at"] == {"type": "string"}
    assert p["took"] == {"type": "string"}  # pydantic writes ISO 8601, kube wants Go syntax
    assert p["id"] == {"type": "string", "format": "uuid"}
    assert p["blob"] == {"type": "string"}  # URL-safe base64: not kube's `byte`
    assert p["b64"] == {"type": "string", "format": "byte"}
    assert p["every"] == {"type": "string", "format": "duration", "default": "1h"}
    assert p["addr"] == {"type": "string", "format": "ipv4", "default": "10.0.0.1"}


# -- enums -------------------------------------------------------------------------------------
class Color(enum.StrEnum):
    """A colour."""

    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_literals_enums_and_const() -> None:
    class Spec(Model):
        mode: Literal["fast", "safe"] = "safe"
        only: Literal["x"] = "x"
        number: Literal[1, 2, 3] = 1
        color: Color = Color.RED
        level: Level = Level.LOW
        maybe: Literal["a", "b"] | None = None
        hint: Annotated[Color, Field(description="The colour to paint.")] = Color.BLUE

    p = props(Spec)
    assert p["mode"] == {"type": "string", "enum": ["fast", "safe"], "default": "safe"}
    assert p["only"] == {"type": "string", "enum": ["x"], "default": "x"}
    assert p["number"] == {"type": "integer", "enum": [1, 2, 3], "default": 1}
    assert p["color"] == {"type": "string", "description": "A colour.",
                          "enum": ["red", "blue"], "default": "red"}
    assert p["level"] == {"type": "integer", "enum": [1, 2], "default": 1}
    assert p["maybe"] == {"type": "string", "enum": ["a", "b"]}
    assert p["hint"]["description"] == "The colour to paint."


# -- collections and free-form fields ----------------------------------------------------------
def test_lists_tuples_sets_and_maps() -> None:
    class Spec(Model):
        names: list[str] = []
        ints: tuple[int, ...] = ()
        pair: tuple[int, int] = (1, 2)
        tags: set[str] = {"b", "a", "c"}
        frozen: frozenset[int] = frozenset()
        labels: dict[str, str] = {}
        nested: dict[str, list[int]] = {}

    p = props(Spec)
    assert p["names"] == {"type": "array", "default": [], "items": {"type": "string"}}
    assert p["ints"] == {"type": "array", "default": [], "items": {"type": "integer"}}
    assert p["pair"] == {"type": "array", "default": [1, 2], "minItems": 2, "maxItems": 2,
                         "items": {"type": "integer"}}
    assert p["tags"] == {"type": "array", "default": ["a", "b", "c"],
                         "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
    assert "uniqueItems" not in str(p)
    assert p["frozen"]["x-kubernetes-list-type"] == "set"
    assert p["labels"] == {"type": "object", "default": {},
                           "additionalProperties": {"type": "string"}}
    assert p["nested"]["additionalProperties"] == {"type": "array",
                                                   "items": {"type": "integer"}}


def test_free_form_fields_preserve_unknown_fields() -> None:
    class Empty(Model):
        pass

    class Loose(Model):
        model_config = ConfigDict(extra="allow")
        known: int = 1

    class Strict(Model):
        model_config = ConfigDict(extra="forbid")
        known: int = 1

    class Spec(Model):
        anything: Any = None
        config: dict[str, Any] = {}
        bare: dict = {}  # type: ignore[type-arg]
        values: list[Any] = []
        raw: Annotated[dict[str, Any], PreserveUnknownFields] = {}
        template: Annotated[dict[str, Any] | None, EmbeddedResource] = None
        empty: Empty = Empty()
        loose: Loose | None = None
        strict: Strict | None = None

    p = props(Spec)
    preserve = {"x-kubernetes-preserve-unknown-fields": True}
    assert p["anything"] == preserve
    assert p["config"] == {"type": "object", "default": {}, **preserve}
    assert p["bare"] == {"type": "object", "default": {}, **preserve}
    assert p["values"] == {"type": "array", "default": [], "items": preserve}
    assert p["raw"] == {"type": "object", "default": {}, **preserve}
    assert p["template"] == {"type": "object", "x-kubernetes-embedded-resource": True, **preserve}
    assert p["empty"] == {"type": "object", "default": {}}  # a model prunes what it lacks
    assert p["loose"] == {"type": "object", "properties": {"known": {
        "type": "integer", "default": 1}}, **preserve}
    assert p["strict"] == {"type": "object", "properties": {"known": {
        "type": "integer", "default": 1}}}


# -- nullability and required fields -----------------------------------------------------------
def test_the_nullable_rule() -> None:
    class Spec(Model):
        optional: int | None = None
        required_or_none: int | None
        with_default: int | None = 5
        asked: Annotated[str | None, Nullable] = None
        items: list[int | None] = []
        values: dict[str, str | None] = {}
        port: IntOrString | None = None

    spec = spec_of(Spec)
    p = spec["properties"]
    assert spec["required"] == ["requiredOrNone"]
    assert p["optional"] == {"type": "integer"}  # simply not required: no default: null
    assert p["requiredOrNone"] == {"type": "integer", "nullable": True}
    assert p["withDefault"] == {"type": "integer", "default": 5}
    assert p["asked"] == {"type": "string", "nullable": True}
    assert p["items"]["items"] == {"type": "integer", "nullable": True}
    assert p["values"]["additionalProperties"] == {"type": "string", "nullable": True}
    assert p["port"] == {"x-kubernetes-int-or-string": True}


# -- models: names, descriptions, nesting ------------------------------------------------------
class Port(Model):
    """A named port."""

    name: str
    """The port's name."""
    container_port: Int32
    protocol: Literal["TCP", "UDP"] = "TCP"


def test_nested_models_camel_case_and_descriptions() -> None:
    class Spec(Model):
        """The desired state.

        Second paragraph, which
        spans two lines."""

        primary_port: Port
        """The port clients use (wins over Port's docstring)."""
        extra_ports: list[Port] = []
        fallback: Port | None = None
        described: str = Field("x", description="From Field(description=...).")

    spec = spec_of(Spec)
    assert spec["description"] == ("The desired state.\n\nSecond paragraph, which spans two "
                                   "lines.")
    p = spec["properties"]
    assert list(p) == ["primaryPort", "extraPorts", "fallback", "described"]
    assert p["primaryPort"]["description"] == "The port clients use (wins over Port's docstring)."
    item = p["extraPorts"]["items"]
    assert item == {
        "type": "object", "description": "A named port.", "required": ["name", "containerPort"],
        "properties": {
            "name": {"type": "string", "description": "The port's name."},
            "containerPort": {"type": "integer", "format": "int32", "minimum": -(2**31),
                              "maximum": 2**31 - 1},
            "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"}}}
    assert p["fallback"] == {**item, "description": "A named port."}
    assert p["described"]["description"] == "From Field(description=...)."
    assert "title" not in str(spec)


def test_plain_basemodels_keep_their_field_names() -> None:
    class Plain(BaseModel):
        some_field: int = 1

    class Spec(BaseModel):
        inner_thing: Plain = Plain()

    p = props(Spec)
    assert p == {"inner_thing": {"type": "object", "default": {"some_field": 1},
                                 "properties": {"some_field": {"type": "integer",
                                                               "default": 1}}}}


def test_keys_come_in_one_fixed_order() -> None:
    class Spec(Model):
        ports: Annotated[list[Port], ListMap("name"), Field(max_length=8),
                         Rule("size(self) > 0")] = [Port(name="http", container_port=80)]
        """Ports."""

    node = props(Spec)["ports"]
    assert list(node) == ["type", "description", "default", "maxItems", "items",
                          "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
                          "x-kubernetes-validations"]
    assert [k for k in ORDER if k in node] == list(node)


# -- defaults ----------------------------------------------------------------------------------
class Sub(Model):
    pod_names: list[str] = ["a"]
    note: str | None = None


def test_defaults_are_serialised_by_the_field() -> None:
    class Spec(Model):
        sub: Sub = Sub()
        color: Color = Color.BLUE
        blob: bytes = b"\xfb\xff"
        when: datetime.datetime = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
        shouted: Annotated[str, PlainSerializer(lambda v: v.upper())] = "quiet"
        nothing: str | None = None

    p = props(Spec)
    assert p["sub"]["default"] == {"podNames": ["a"]}  # wire names, no null for note
    assert p["color"]["default"] == "blue"
    assert p["blob"]["default"] == "-_8="
    assert p["when"]["default"] == "2026-01-02T03:04:05Z"
    assert p["shouted"]["default"] == "QUIET"
    assert "default" not in p["nothing"]


def test_default_factories_count_when_deterministic() -> None:
    class Spec(Model):
        names: list[str] = Field(default_factory=list)
        sub: Sub = Field(default_factory=Sub)
        made: dict[str, int] = Field(default_factory=lambda: {"a": 1})
        token: str = Field(default_factory=lambda: uuid.uuid4().hex)
        stamp: datetime.datetime = Field(default_factory=lambda: datetime.datetime.now(
            datetime.UTC))
        derived: str = Field(default_factory=lambda data: "x")

    p = props(Spec)
    assert p["names"]["default"] == []
    assert p["sub"]["default"] == {"podNames": ["a"]}
    assert p["made"]["default"] == {"a": 1}
    assert "default" not in p["token"] and "default" not in p["stamp"]
    assert "default" not in p["derived"]


def test_the_root_status_never_gets_a_default() -> None:
    class Status(Model):
        replicas: int = 0

    class Thing(CustomResource, group="example.com", version="v1"):
        status: Status = Status()

    status = Thing.schema()["properties"]["status"]
    assert status == {"type": "object", "properties": {"replicas": {"type": "integer",
                                                                      "default": 0}}}


# -- markers -----------------------------------------------------------------------------------
def test_int_or_string() -> None:
    class Spec(Model):
        port: IntOrString = 8080
        """A number or a name."""
        target: Annotated[IntOrString, Rule("self != 0")] = "http"

    p = props(Spec)
    assert p["port"] == {"description": "A number or a name.", "default": 8080,
                         "x-kubernetes-int-or-string": True}
    assert p["target"] == {"default": "http", "x-kubernetes-int-or-string": True,
                           "x-kubernetes-validations": [{"rule": "self != 0"}]}


def test_list_and_map_types() -> None:
    class Spec(Model):
        ports: Annotated[list[Port], ListMap("name", "protocol")] = []
        unique: Annotated[list[int], ListSet] = []
        whole: Annotated[list[int], ListAtomic] = []
        selector: Annotated[dict[str, str], MapType("atomic")] = {}
        merged: Annotated[dict[str, str], MapType("granular")] = {}
        conditions: Conditions = []

    p = props(Spec)
    assert p["ports"]["x-kubernetes-list-type"] == "map"
    assert p["ports"]["x-kubernetes-list-map-keys"] == ["name", "protocol"]
    assert p["unique"]["x-kubernetes-list-type"] == "set"
    assert p["whole"]["x-kubernetes-list-type"] == "atomic"
    assert p["selector"]["x-kubernetes-map-type"] == "atomic"
    assert p["merged"]["x-kubernetes-map-type"] == "granular"
    cond = p["conditions"]
    assert cond["x-kubernetes-list-type"] == "map"
    assert cond["x-kubernetes-list-map-keys"] == ["type"]
    assert cond["items"]["required"] == ["type", "status"]
    assert cond["items"]["properties"]["status"]["enum"] == ["True", "False", "Unknown"]
    assert cond["items"]["properties"]["lastTransitionTime"]["format"] == "date-time"


class Range(Model, rules=[Rule("self.low <= self.high", message="low must not exceed high")]):
    low: int = 0
    high: int = 10


def test_cel_rules_on_fields_models_and_the_root() -> None:
    class Spec(Model, rules=[Rule("has(self.replicas)", reason="FieldValueRequired")]):
        replicas: Annotated[int, Rule("self >= oldSelf", message="no shrinking",
                                      message_expression="'got ' + string(self)",
                                      reason="FieldValueInvalid", field_path=".replicas",
                                      optional_old_self=True)] = 1
        window: Annotated[Range, Rule("self.high < 100")] = Range()

    class Thing(CustomResource, group="example.com", version="v1",
                rules=[Rule("self.metadata.name.size() < 20")]):
        spec: Spec

    root = Thing.schema()
    assert root["x-kubernetes-validations"] == [{"rule": "self.metadata.name.size() < 20"}]
    spec = root["properties"]["spec"]
    assert spec["x-kubernetes-validations"] == [{"rule": "has(self.replicas)",
                                                 "reason": "FieldValueRequired"}]
    assert spec["properties"]["replicas"]["x-kubernetes-validations"] == [{
        "rule": "self >= oldSelf", "message": "no shrinking",
        "messageExpression": "'got ' + string(self)", "reason": "FieldValueInvalid",
        "fieldPath": ".replicas", "optionalOldSelf": True}]
    assert spec["properties"]["window"]["x-kubernetes-validations"] == [
        {"rule": "self.low <= self.high", "message": "low must not exceed high"},
        {"rule": "self.high < 100"}]


def test_keys_kube_does_not_use_are_dropped() -> None:
    class Spec(Model):
        name: str = Field("x", title="Name", examples=["a"], json_schema_extra={"foo": 1},
                          deprecated=True)

    assert props(Spec)["name"] == {"type": "string", "default": "x"}
