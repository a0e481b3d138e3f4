"""Pydantic's JSON schema of a model, with what a CRD needs that pydantic leaves out.

`json_schema(model)` is `model.model_json_schema(by_alias=True, mode="validation")` (the
shape objects may have on the wire) with three changes, made by a `GenerateJsonSchema`
subclass:

- a type pydantic cannot describe (an arbitrary class, a callable) leaves a marker at its
  place instead of raising, so the conversion can name the field; so does a `kubernetes`
  client model (a pydantic model whose schema is not kube's; the marker names the
  asyncop.k8s class to use), and one of kube's own types (a class with
  `__kube_definition__`) is just its definition's name: the conversion embeds kube's schema;
- defaults are taken from model fields only, serialised by the field's own serializer (so a
  `bytes` default is base64, an enum its value, a nested model its wire names); `None` is no
  default;
- a default that does not validate as its own field (`Annotated[int, Field(ge=1)] = 0`)
  leaves a marker with pydantic's message (kube would reject the CRD);
- a `default_factory` counts when the factory is deterministic: it is called twice, and the
  default is used only when both results serialise to the same JSON (`list`, `dict`, a Model
  do; `uuid4` and `datetime.now` do not). Factories that take the validated data never count.

Invariant: nothing here raises for a model; problems are left as markers for the conversion.
"""

from __future__ import annotations

from typing import Annotated, Any, cast

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, NoDefault
from pydantic_core import CoreSchema, PydanticUndefined, core_schema, to_jsonable_python
from pydantic_core.core_schema import ErrorType

from asyncop.crd.kubetypes import KUBE_DEFINITION_KEY
from asyncop.crd.unmapped import client_model_problem

INVALID_KEY = "x-asyncop-invalid"
"""Internal key: this node's type has no JSON schema (the value says why)."""
UNMAPPED_KEY = "x-asyncop-unmapped"
"""Internal key: a model that must not become a schema (the value says why and what instead)."""
BAD_DEFAULT_KEY = "x-asyncop-bad-default"
"""Internal key: this field's default does not validate (the value is pydantic's message)."""

_NONE = object()


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The validation-mode JSON schema of `model`, with field defaults (see the module)."""
    return model.model_json_schema(by_alias=True, mode="validation", schema_generator=_Generator)


class _Generator(GenerateJsonSchema):
    def handle_invalid_for_json_schema(
        self, schema: CoreSchema | ErrorType, error_info: str
    ) -> JsonSchemaValue:
        return {INVALID_KEY: error_info}

    def callable_schema(self, schema: core_schema.CallableSchema) -> JsonSchemaValue:
        return {INVALID_KEY: "a callable"}

    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        return NoDefault  # model fields get theirs in model_schema, from the field itself

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return value  # keep declaration order; the conversion orders every node itself

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        kube = vars(schema["cls"]).get("__kube_definition__")
        if isinstance(kube, str) and kube:
            return {KUBE_DEFINITION_KEY: kube}  # kube's own type: its schema is kubespec's
        problem = client_model_problem(schema["cls"])
        if problem:
            return {UNMAPPED_KEY: problem}
        json_schema = super().model_schema(schema)
        fields_schema = schema["schema"]
        props = json_schema.get("properties")
        if fields_schema["type"] != "model-fields" or not isinstance(props, dict):
            return json_schema
        cls = cast("type[BaseModel]", schema["cls"])
        for name, field in fields_schema["fields"].items():
            key = self._get_alias_name(field, name)
            if key in props and name in cls.model_fields:
                default = field_default(cls, name)
                if default is not _NONE:
                    props[key]["default"] = default
                    problem = _invalid_default(cls, name)
                    if problem:
                        props[key][BAD_DEFAULT_KEY] = problem
        return json_schema


def field_default(cls: type[BaseModel], name: str) -> Any:
    """The JSON form of the default of field `name`, or `_NONE` when it has none to state."""
    info = cls.model_fields[name]
    if info.default_factory is not None:
        if info.default_factory_takes_validated_data:
            return _NONE
        factory = cast("Any", info.default_factory)
        try:
            first, second = _dump(cls, name, factory()), _dump(cls, name, factory())
        except Exception:  # a factory that fails or makes something unserialisable
            return _NONE
        return first if first == second else _NONE
    if info.default is PydanticUndefined or info.default is None:
        return _NONE
    try:
        return _dump(cls, name, info.default)
    except Exception:  # not serialisable: no default in the CRD
        return _NONE


def _invalid_default(cls: type[BaseModel], name: str) -> str | None:
    """pydantic's first message if the static default of `name` fails its own validation."""
    info = cls.model_fields[name]
    if info.default_factory is not None:
        return None
    try:
        annotated: Any = Annotated[info.annotation, *info.metadata]
        TypeAdapter(annotated).validate_python(info.default)
    except ValidationError as exc:
        return str(exc.errors(include_url=False)[0]["msg"])
    except Exception:  # a type TypeAdapter cannot build on its own: nothing to say
        return None
    return None


def _dump(cls: type[BaseModel], name: str, value: Any) -> Any:
    """`value` as field `name` of `cls` serialises it in JSON mode (field serializers,
    aliases and the model's config applied)."""
    if value is None:
        return None
    info = cls.model_fields[name]
    key = info.serialization_alias or info.alias or name
    try:
        instance = cls.model_construct(**{name: value})
        dumped = instance.model_dump(mode="json", by_alias=True, include={name}, warnings=False)
    except Exception:  # e.g. a model_post_init that needs the other fields
        dumped = None
    if isinstance(dumped, dict) and key in dumped:
        return dumped[key]
    return to_jsonable_python(value, by_alias=True)
