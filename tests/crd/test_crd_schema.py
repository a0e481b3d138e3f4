"""Pydantic models -> structural OpenAPI v3: every mapping rule, and one line per bad model."""

from __future__ import annotations

import enum
from datetime import date, datetime
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from asyncop.crd import (
    Conditions,
    CRDError,
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
    resource_schema,
)


class Color(enum.StrEnum):
    """A colour."""

    RED = "red"
    BLUE = "blue"


class Port(Model):
    """A named port."""

    name: str
    """The port's name."""
    port: Int32
    protocol: Literal["TCP", "UDP"] = "TCP"


class Range(Model, rules=[Rule("self.low <= self.high", message="low must not exceed high")]):
    low: int = 0
    high: int = 10


class Everything(Model):
    """Everything a spec can hold."""

    size: Annotated[int, Field(ge=0, le=10)] = 1
    """Number of pods."""
    ratio: Annotated[float, Field(gt=0, lt=1, multiple_of=0.25)] = 0.5
    name: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[a-z]+$")]
    enabled: bool = False
    mode: Literal["fast", "safe"] = "safe"
    only: Literal["x"] = "x"
    color: Color = Color.RED
    count: Int64 | None = None
    port: IntOrString = 8080
    tags: set[str] = set()
    args: Annotated[list[str], Field(min_length=1, max_length=3)] = ["run"]
    labels: dict[str, str] = {}
    config: dict[str, Any] = {}
    anything: Any = None
    when: datetime | None = None
    day: date | None = None
    blob: bytes = b""
    ports: Annotated[list[Port], ListMap("name")] = []
    range_: Annotated[Range, Field(alias="range")] = Range()
    template: Annotated[dict[str, Any], EmbeddedResource] = {}
    raw: Annotated[dict[str, Any], PreserveUnknownFields] = {}
    atomic: Annotated[list[int], ListAtomic] = []
    unique: Annotated[list[int], ListSet] = []
    selector: Annotated[dict[str, str], MapType("atomic")] = {}
    replicas: Annotated[int, Rule("self >= 0", reason="FieldValueInvalid",
                                  message_expression="'got ' + string(self)")] = 1
    uuid_like: Annotated[str, Format("uuid")] = ""
    must_say: Annotated[str | None, Nullable] = None
    required_maybe_none: int | None
    pod_names: list[str] = []


class Thing(CustomResource, group="example.com", version="v1"):
    """A thing."""

    spec: Everything
    status: Range | None = None


def props() -> dict[str, Any]:
    schema = resource_schema(Thing)
    return schema["properties"]["spec"]["properties"]


def test_root_has_apiversion_kind_metadata_and_the_fields() -> None:
    root = resource_schema(Thing)
    assert root["type"] == "object" and root["description"] == "A thing."
    assert list(root["properties"]) == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert root["properties"]["metadata"] == {"type": "object"}
    assert root["required"] == ["spec"]
    assert "default" not in root["properties"]["status"]
    assert root["properties"]["spec"]["description"] == "Everything a spec can hold."


def test_scalars_constraints_and_descriptions() -> None:
    p = props()
    assert p["size"] == {"type": "integer", "description": "Number of pods.", "default": 1,
                         "minimum": 0, "maximum": 10}
    assert p["ratio"] == {"type": "number", "default": 0.5, "minimum": 0,
                          "exclusiveMinimum": True, "maximum": 1, "exclusiveMaximum": True,
                          "multipleOf": 0.25}
    assert p["name"] == {"type": "string", "minLength": 1, "maxLength": 63,
                         "pattern": "^[a-z]+$"}
    assert p["enabled"] == {"type": "boolean", "default": False}
    assert p["count"] == {"type": "integer", "format": "int64"}
    assert p["when"] == {"type": "string", "format": "date-time"}
    assert p["day"] == {"type": "string", "format": "date"}
    assert p["blob"] == {"type": "string", "format": "byte", "default": ""}
    assert p["uuidLike"] == {"type": "string", "format": "uuid", "default": ""}


def test_enums_literals_and_const() -> None:
    p = props()
    assert p["mode"] == {"type": "string", "enum": ["fast", "safe"], "default": "safe"}
    assert p["only"] == {"type": "string", "enum": ["x"], "default": "x"}
    assert p["color"] == {"type": "string", "description": "A colour.", "enum": ["red", "blue"],
                          "default": "red"}


def test_collections() -> None:
    p = props()
    assert p["tags"] == {"type": "array", "default": [], "items": {"type": "string"},
                         "x-kubernetes-list-type": "set"}
    assert p["args"] == {"type": "array", "default": ["run"], "minItems": 1, "maxItems": 3,
                         "items": {"type": "string"}}
    assert p["labels"] == {"type": "object", "default": {},
                           "additionalProperties": {"type": "string"}}
    assert p["config"] == {"type": "object", "default": {},
                           "x-kubernetes-preserve-unknown-fields": True}
    assert p["anything"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert p["podNames"]["items"] == {"type": "string"}
    assert p["atomic"]["x-kubernetes-list-type"] == "atomic"
    assert p["unique"]["x-kubernetes-list-type"] == "set"
    assert p["selector"]["x-kubernetes-map-type"] == "atomic"


def test_markers() -> None:
    p = props()
    assert p["port"] == {"default": 8080, "x-kubernetes-int-or-string": True}
    assert p["template"] == {"type": "object", "default": {},
                             "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True}
    assert p["raw"]["x-kubernetes-preserve-unknown-fields"] is True
    assert p["replicas"]["x-kubernetes-validations"] == [
        {"rule": "self >= 0", "messageExpression": "'got ' + string(self)",
         "reason": "FieldValueInvalid"}]
    assert p["range"]["x-kubernetes-validations"] == [
        {"rule": "self.low <= self.high", "message": "low must not exceed high"}]
    assert p["range"]["default"] == {"low": 0, "high": 10}


def test_nested_models_list_maps_and_nullability() -> None:
    p = props()
    ports = p["ports"]
    assert ports["x-kubernetes-list-type"] == "map"
    assert ports["x-kubernetes-list-map-keys"] == ["name"]
    item = ports["items"]
    assert item["description"] == "A named port." and item["required"] == ["name", "port"]
    assert item["properties"]["name"] == {"type": "string", "description": "The port's name."}
    assert item["properties"]["port"] == {"type": "integer", "format": "int32"}
    assert item["properties"]["protocol"]["enum"] == ["TCP", "UDP"]
    assert p["mustSay"] == {"type": "string", "nullable": True}  # asked for with Nullable
    assert p["requiredMaybeNone"] == {"type": "integer", "nullable": True}  # required, may be null
    assert "nullable" not in p["count"]  # optional: simply absent


def test_conditions_are_a_map_keyed_by_type() -> None:
    class S(Model):
        conditions: Conditions = []

    class C(CustomResource, group="example.com", version="v1"):
        status: S | None = None

    cond = resource_schema(C)["properties"]["status"]["properties"]["conditions"]
    assert cond["x-kubernetes-list-type"] == "map"
    assert cond["items"]["properties"]["status"]["enum"] == ["True", "False", "Unknown"]
    assert cond["items"]["properties"]["lastTransitionTime"]["format"] == "date-time"


def test_plain_basemodels_and_extra_allow() -> None:
    class Plain(BaseModel):
        model_config = ConfigDict(extra="allow")
        some_field: int = 1

    class P(CustomResource, group="example.com", version="v1"):
        spec: Plain

    spec = resource_schema(P)["properties"]["spec"]
    assert spec["properties"] == {"some_field": {"type": "integer", "default": 1}}
    assert spec["x-kubernetes-preserve-unknown-fields"] is True


# -- bad models: one line naming the class and the field -----------------------------------------
class Opaque:
    pass


def _bad(annotation_spec: type[BaseModel]) -> str:
    class Bad(CustomResource, group="example.com", version="v1"):
        spec: annotation_spec  # type: ignore[valid-type]

    with pytest.raises(CRDError) as info:
        resource_schema(Bad)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_tuple_has_no_mapping() -> None:
    class Spec(Model):
        ports: tuple[int, str] = (1, "a")

    assert _bad(Spec) == ("Bad: spec.ports: tuple[int, str] has no OpenAPI mapping (use "
                          "list[...] or a Model)")


def test_a_union_of_types_is_not_structural() -> None:
    class Spec(Model):
        value: int | str = 1

    assert _bad(Spec) == ("Bad: spec.value: int | str is not a structural schema (types differ); "
                          "annotate with IntOrString or split the field")


def test_an_arbitrary_class_names_the_field() -> None:
    class Spec(Model):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        handle: Opaque | None = None

    assert _bad(Spec).startswith("Bad: spec.handle: Opaque has no OpenAPI mapping")


def test_a_recursive_model_cannot_be_structural() -> None:
    class Node(Model):
        children: list[Node] = []

    Node.model_rebuild()

    class Spec(Model):
        root: Node | None = None

    assert "refers to itself; a structural schema cannot recurse" in _bad(Spec)


def test_mixed_enum_values_are_rejected() -> None:
    class Spec(Model):
        level: Literal["low", 1] = "low"

    assert _bad(Spec).startswith("Bad: spec.level: ")


def test_a_list_map_key_must_be_required_or_defaulted() -> None:
    class Item(Model):
        key: str | None = None

    class Spec(Model):
        items: Annotated[list[Item], ListMap("key")] = []

    assert _bad(Spec) == ("Bad: spec.items: ListMap key 'key' must be required or have a "
                          "default")


def test_list_markers_on_the_wrong_shapes() -> None:
    class SetOfObjects(Model):
        ports: Annotated[list[Port], ListSet] = []

    assert _bad(SetOfObjects) == ("Bad: spec.ports: a ListSet holds scalars (or atomic maps); "
                                  "use ListMap for objects")

    class MapOnDict(Model):
        labels: Annotated[dict[str, str], ListAtomic] = {}

    assert _bad(MapOnDict) == "Bad: spec.labels: x-kubernetes-list-type atomic is for lists only"


def test_a_rule_with_an_unknown_reason() -> None:
    class Spec(Model):
        n: Annotated[int, Rule("self > 0", reason="Nope")] = 1

    assert _bad(Spec).startswith("Bad: spec.n: rule reason 'Nope' is not one of")
