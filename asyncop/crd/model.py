"""Model and ObjectMeta: the pydantic bases of typed resources.

`Model` is the base for spec, status and nested models. It follows Kubernetes' conventions
so that Python code reads like Python and the API like Kubernetes: fields are snake_case in
Python and camelCase on the wire (`observed_generation` <-> `observedGeneration`), both names
validate, dumps use the wire names; the docstring under a field is its description (as Go
comments are for controller-gen); unknown fields are ignored, so an object written by a newer
version of the schema never fails to parse; `bytes` travel as base64 (pydantic writes the
URL-safe alphabet and reads both). CEL rules on a whole model are a class keyword:
`class Range(Model, rules=[Rule("self.min <= self.max")])`. A field type pydantic cannot
validate (an arbitrary class, a kubernetes client model) fails when the class is made, in one
`CRDError` line naming the model and the field (`unmapped`).

Plain `pydantic.BaseModel`s work too (field names are then used as they are).

`ObjectMeta` is a typed view of `metadata` (fields it does not list, such as managedFields,
are kept as extras). Invariant: models never mutate the raw dicts they are validated from.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.alias_generators import to_camel
from pydantic.errors import PydanticSchemaGenerationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from asyncop.crd.errors import CRDError
from asyncop.crd.markers import RULES_KEY, Rule
from asyncop.crd.unmapped import unmapped_type_error


class Model(BaseModel):
    """Base of spec/status models: camelCase on the wire, docstrings as descriptions."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
        extra="ignore",
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )
    __rules__: ClassVar[tuple[Rule, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Class keywords are read in __pydantic_init_subclass__; object's hook takes none.
        super().__init_subclass__()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        rules = kwargs.pop("rules", ())
        unknown = sorted(set(kwargs) - set(cls._class_keywords()))
        if unknown:
            raise CRDError(f"{cls.__name__}: unknown class keyword {unknown[0]!r} (known: "
                           f"{', '.join(('rules', *cls._class_keywords()))})")
        super().__pydantic_init_subclass__(**kwargs)
        if isinstance(rules, Rule) or not isinstance(rules, Sequence) or not all(
                isinstance(r, Rule) for r in rules):
            raise CRDError(f"{cls.__name__}: rules= takes a list of Rule(...)")
        cls.__rules__ = tuple(rules)

    @classmethod
    def _class_keywords(cls) -> tuple[str, ...]:
        """Class keywords a subclass reads besides `rules` (CustomResource adds its own)."""
        return ()

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """pydantic's schema; a field type it has none for is one CRDError line naming the
        model and the field (and, for a kubernetes client model, the asyncop.k8s class)."""
        try:
            return handler(source)
        except PydanticSchemaGenerationError as exc:
            raise unmapped_type_error(cls, exc) from None

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        if cls.__rules__:
            target = handler.resolve_ref_schema(schema)
            target[RULES_KEY] = [r.to_dict() for r in cls.__rules__]
        return schema


class OwnerReference(Model):
    """An owner of the object (metav1.OwnerReference)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(Model):
    """The typed view of `metadata`; fields not listed here are kept as extras."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)
