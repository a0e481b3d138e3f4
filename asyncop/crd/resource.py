"""CustomResource: a typed custom resource, declared once; the runtime Kind and the CRD are
derived from it.

```python
class Memcached(CustomResource, group="cache.example.com", version="v1alpha1",
                short_names=("mc",), printer_columns=(PrinterColumn("Size", ".spec.size",
                type="integer"),)):
    \"\"\"Memcached runs a memcached Deployment of spec.size pods.\"\"\"   # CRD description
    spec: MemcachedSpec
    status: MemcachedStatus | None = None
```

Class keywords (`info.KEYWORDS`, checked when the class is created; each mistake is one
`CRDError` line): `group` and `version` (required), `kind` (default: the class name, so two
versions can live in classes with different names), `plural`, `singular`, `scope`,
`short_names`, `categories`, `printer_columns`, `status_subresource` (default: on when a
`status` field is declared), `scale`, `served`, `storage` (None: decided when the versions
are assembled), `deprecated`, `deprecation_warning`, `selectable_fields`,
`embedded_object_meta` (kube's ObjectMeta inside kube's types keeps name, namespace, labels,
annotations and finalizers, as controller-gen's `generateEmbeddedObjectMeta`); plus `rules=`
(CEL rules on the root). A subclass of CustomResource with no keywords is an abstract base
(shared fields; no Kind, no CRD); keywords are not inherited, so a subclass of a resource
declares its own. The class gets `KIND` (the runtime's `Kind`) and `__resource__`
(the checked `ResourceInfo`); `schema()` and `crd()` give its openAPIV3Schema and a CRD with
just this version.

Fields: `api_version` (apiVersion) and `kind` (default: the class's values), `metadata`
(`ObjectMeta`), and the user's own (`spec`, `status`, `data`, ...).

Typed access for reconcilers (the cache keeps raw dicts; typing happens only on request):
`Memcached.parse(raw)`, `Memcached.from_cache(cache, request)`, `obj.raw`, `obj.to_raw()`,
and `await obj.write_status(client, status)`; all but the last two come from `TypedView`,
which kube's own kinds (`asyncop.k8s.base.KubeObject`) share. Invariants: `parse` never
mutates `raw`; `to_raw` and status writes leave out the nulls the schema does not allow;
`write_status` sends the object it was parsed from with only `status` replaced, so it
carries that resourceVersion (a stale write is a Conflict, never a lost update), and sends
nothing when the status, read back through the status model, is unchanged.
"""

from __future__ import annotations

import copy
import typing
from typing import Any, ClassVar, Protocol, Self

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from asyncop.api import Kind, RawObject
from asyncop.crd.errors import CRDError
from asyncop.crd.info import KEYWORDS, ResourceInfo, declare
from asyncop.crd.model import Model, ObjectMeta
from asyncop.crd.values import strip_nulls, wire_value

Schema = dict[str, Any]


class StatusWriter(Protocol):
    """The part of `asyncop.client.Client` that `write_status` uses."""

    async def update_status(self, kind: Kind, obj: RawObject) -> RawObject: ...


class CacheReader(Protocol):
    """The part of `asyncop.runtime.cache.Cache` that `from_cache` uses."""

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None: ...


class Keyed(Protocol):
    """A request: `asyncop.api.Request` or anything with a name and a namespace."""

    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str: ...


class TypedView(Model):
    """A typed view of a raw object of one Kind (`KIND`): the base of `CustomResource` and of
    kube's own kinds (`asyncop.k8s.base.KubeObject`), which differ only in `to_raw`.

    Invariants: `parse` never mutates `raw` and remembers it (`raw`); equality compares the
    fields, never the raw object a view came from."""

    KIND: ClassVar[Kind]
    _raw: RawObject | None = PrivateAttr(default=None)

    @classmethod
    def parse(cls, raw: RawObject | dict[str, Any]) -> Self:
        """The typed view of `raw` (pydantic ValidationError if it does not fit the model)."""
        obj = cls.model_validate(raw)
        obj._raw = typing.cast(RawObject, raw)
        return obj

    @classmethod
    def from_cache(
        cls, cache: CacheReader, request: Keyed | str, namespace: str | None = None
    ) -> Self | None:
        """The cached object of `request` (or name + namespace), parsed; None if absent."""
        if isinstance(request, str):
            name, ns = request, namespace
        else:
            name, ns = request.name, request.namespace
        raw = cache.get(cls.KIND, name, ns or None)
        return None if raw is None else cls.parse(raw)

    def __eq__(self, other: object) -> bool:
        """Equal fields (the raw object a view was parsed from does not count)."""
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (type(self) is type(other) and self.__dict__ == other.__dict__
                and self.__pydantic_extra__ == other.__pydantic_extra__)

    @property
    def raw(self) -> RawObject:
        """The raw object this was parsed from (never mutate it), else `to_raw()`."""
        return self._raw if self._raw is not None else self.to_raw()

    def to_raw(self) -> RawObject:
        """The object as the API wants it (each kind of view writes its own)."""
        raise NotImplementedError


class CustomResource(TypedView):
    """Base of typed custom resources (see the module docstring)."""

    __resource__: ClassVar[ResourceInfo | None] = None
    __schema__: ClassVar[Schema | None] = None

    api_version: str = Field(default="", alias="apiVersion")  # `default=`: mypy reads it
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @classmethod
    def _class_keywords(cls) -> tuple[str, ...]:
        return KEYWORDS

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        declared = {k: kwargs.pop(k) for k in KEYWORDS if k in kwargs}
        super().__pydantic_init_subclass__(**kwargs)
        cls.__schema__ = None
        if not declared:
            parent = next((b for b in cls.__mro__[1:] if getattr(b, "__resource__", None)), None)
            if parent is not None:
                raise CRDError(f"{cls.__name__}: subclasses the resource {parent.__name__}; "
                               "declare its own group=..., version=... (and kind=... for "
                               "another version of the same kind)")
            cls.__resource__ = None  # an abstract base: no Kind, no CRD
            return
        info = declare(cls.__name__, declared, has_status="status" in cls.model_fields)
        cls.__resource__ = info
        cls.KIND = Kind(info.group, info.version, info.plural, info.kind,
                        namespaced=info.scope == "Namespaced")
        for name, value in (("api_version", info.api_version), ("kind", info.kind)):
            field = copy.copy(cls.__pydantic_fields__[name])
            field.default = value
            cls.__pydantic_fields__[name] = field
        cls.model_rebuild(force=True, raise_errors=False)

    @classmethod
    def info(cls) -> ResourceInfo:
        """The declaration; CRDError for an abstract base (no group/version declared)."""
        if cls.__resource__ is None:
            raise CRDError(
                f"{cls.__name__}: no group: declare it as class {cls.__name__}(CustomResource, "
                'group="example.com", version="v1")'
            )
        return cls.__resource__

    @classmethod
    def schema(cls) -> Schema:  # type: ignore[override]  # pydantic v1's deprecated schema()
        """The structural openAPIV3Schema of this version (a fresh copy)."""
        return copy.deepcopy(cls._schema())

    @classmethod
    def crd(cls) -> RawObject:
        """The apiextensions.k8s.io/v1 CRD with just this version (the storage version)."""
        from asyncop.crd.manifest import single_crd

        return single_crd(cls)

    @classmethod
    def _schema(cls) -> Schema:
        if cls.__schema__ is None:
            from asyncop.crd.manifest import resource_schema

            cls.__schema__ = resource_schema(cls)
        return cls.__schema__

    # -- typed access (parse, from_cache, raw: TypedView) -----------------------------------
    def to_raw(self) -> RawObject:
        """This object as the API wants it: apiVersion and kind first, wire names, no nulls
        the schema does not allow, no empty metadata fields."""
        cls = type(self)
        info = cls.info()
        body = self.model_dump(mode="json", by_alias=True)
        meta = body.pop("metadata", None) or {}
        api_version = body.pop("apiVersion", None) or info.api_version
        kind = body.pop("kind", None) or info.kind
        schema = _or_none(cls)
        body = strip_nulls(body) if schema is None else wire_value(body, schema)
        out = {"apiVersion": api_version, "kind": kind,
               "metadata": {k: v for k, v in meta.items() if v not in (None, {}, [])}, **body}
        return typing.cast(RawObject, out)

    async def write_status(self, client: StatusWriter, status: BaseModel | dict[str, Any]
                           ) -> Self | None:
        """PUT `status` through the status subresource, or do nothing if it is unchanged.

        Returns the stored object, parsed, or None when nothing was sent; raises the
        client's `Conflict` when this object is stale.
        """
        cls = type(self)
        if not cls.info().status_subresource:
            raise CRDError(f"{cls.__name__}: no status subresource to write")
        raw = self.raw
        new = _normal(cls, status, strict=True)
        if new == _normal(cls, raw.get("status"), strict=False):
            return None
        body = typing.cast(RawObject, {**raw, "status": new})
        return cls.parse(await client.update_status(cls.KIND, body))


def _or_none(cls: type[CustomResource]) -> Schema | None:
    try:
        return cls._schema()
    except CRDError:  # a class typed for a CRD defined elsewhere may have no schema of ours
        return None


def _status_model(cls: type[CustomResource]) -> type[BaseModel] | None:
    field = cls.model_fields.get("status")
    annotation: Any = field.annotation if field is not None else None
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _normal(cls: type[CustomResource], status: Any, *, strict: bool) -> Any:
    """`status` as the status model reads and writes it back, in wire form; `strict`: a
    status that does not fit the model raises (else it is compared as it is)."""
    if status is None:
        return None
    model = _status_model(cls)
    if model is not None and isinstance(status, model):
        status = status.model_dump(mode="json", by_alias=True)  # already through the model
    elif model is not None:
        if isinstance(status, BaseModel):
            status = status.model_dump(mode="json", by_alias=True)
        try:
            status = model.model_validate(status).model_dump(mode="json", by_alias=True)
        except ValidationError:
            if strict:
                raise
    elif isinstance(status, BaseModel):
        status = status.model_dump(mode="json", by_alias=True)
    schema = _or_none(cls)
    node = ((schema or {}).get("properties") or {}).get("status")
    return strip_nulls(status) if node is None else wire_value(status, node)
