"""CustomResource: a typed custom resource, declared once, from which the runtime Kind and
the CRD are derived.

```python
class Memcached(CustomResource, group="cache.example.com", version="v1alpha1",
                short_names=("mc",), printer_columns=(PrinterColumn("Size", ".spec.size",
                type="integer"),)):
    \"\"\"Memcached runs a memcached Deployment of spec.size pods.\"\"\"   # CRD description
    spec: MemcachedSpec
    status: MemcachedStatus | None = None
```

Class keywords (checked when the class is created, each mistake one `CRDError` line):
`group` and `version` (required), `kind` (default: the class name, so two versions can live
in classes with different names), `plural` (default: the kind pluralised), `singular`,
`scope` ("Namespaced" or "Cluster"), `short_names`, `categories`, `printer_columns`,
`status_subresource` (default: on when a `status` field is declared), `scale`, `served`,
`storage` (None: decided when versions are assembled), `deprecated`,
`deprecation_warning`, `selectable_fields`. A subclass with none of them is an abstract base.

Typed access for reconcilers (the cache keeps raw dicts; typing happens only on request):
`Memcached.parse(raw)`, `Memcached.from_cache(cache, request)`, `obj.raw`, `obj.to_raw()`,
and `await obj.write_status(client, status)`, which writes nothing when the status is
unchanged. Invariants: `parse` never mutates `raw`; `write_status` sends the object it was
parsed from with only `status` replaced, so it carries that resourceVersion (a stale write
is a Conflict, never a lost update).
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, Self

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from asyncop.api import Kind, RawObject, deep_copy
from asyncop.crd import names
from asyncop.crd.errors import CRDError
from asyncop.crd.model import Model, ObjectMeta


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """A column of `kubectl get` (additionalPrinterColumns)."""

    name: str
    json_path: str
    type: Literal["string", "integer", "number", "boolean", "date"] = "string"
    description: str | None = None
    priority: int = 0
    format: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.format:
            out["format"] = self.format
        if self.priority:
            out["priority"] = self.priority
        out["jsonPath"] = self.json_path
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True, slots=True)
class Scale:
    """The scale subresource: where replicas live in spec and status."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"specReplicasPath": self.spec_replicas_path,
               "statusReplicasPath": self.status_replicas_path}
        if self.label_selector_path:
            out["labelSelectorPath"] = self.label_selector_path
        return out


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """Everything declared with the class keywords, checked."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] = ()
    status_subresource: bool = False
    scale: Scale | None = None
    served: bool = True
    storage: bool | None = None
    deprecated: bool = False
    deprecation_warning: str | None = None
    selectable_fields: tuple[str, ...] = field(default=())

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"


class StatusWriter(Protocol):
    """The part of `asyncop.client.Client` that `write_status` uses."""

    async def update_status(self, kind: Kind, obj: RawObject) -> RawObject: ...


class CacheReader(Protocol):
    """The part of `asyncop.runtime.cache.Cache` that `from_cache` uses."""

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None: ...


class _Keyed(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str: ...


_KEYWORDS = ("group", "version", "kind", "plural", "singular", "scope", "short_names",
             "categories", "printer_columns", "status_subresource", "scale", "served",
             "storage", "deprecated", "deprecation_warning", "selectable_fields")


class CustomResource(Model):
    """Base of typed custom resources (see the module docstring)."""

    KIND: ClassVar[Kind]
    __resource__: ClassVar[ResourceInfo | None] = None

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    _raw: RawObject | None = PrivateAttr(default=None)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        declared = {k: kwargs.pop(k) for k in _KEYWORDS if k in kwargs}
        super().__pydantic_init_subclass__(**kwargs)
        if not declared:
            cls.__resource__ = None  # an abstract base: no Kind, no CRD
            return
        info = _declare(cls, declared)
        cls.__resource__ = info
        cls.KIND = Kind(info.group, info.version, info.plural, info.kind,
                        namespaced=info.scope == "Namespaced")

    @classmethod
    def info(cls) -> ResourceInfo:
        """The declaration; CRDError for an abstract base (no group/version declared)."""
        if cls.__resource__ is None:
            raise CRDError(
                f"{cls.__name__}: no group: declare it as class {cls.__name__}(CustomResource, "
                'group="example.com", version="v1")'
            )
        return cls.__resource__

    # -- typed access ----------------------------------------------------------------------
    @classmethod
    def parse(cls, raw: RawObject) -> Self:
        """The typed view of `raw` (pydantic ValidationError if it does not fit the model)."""
        obj = cls.model_validate(raw)
        obj._raw = raw
        return obj

    @classmethod
    def from_cache(
        cls, cache: CacheReader, request: _Keyed | str, namespace: str | None = None
    ) -> Self | None:
        """The cached object of `request` (or name + namespace), parsed; None if absent."""
        if isinstance(request, str):
            name, ns = request, namespace
        else:
            name, ns = request.name, request.namespace
        raw = cache.get(cls.KIND, name, ns)
        return None if raw is None else cls.parse(raw)

    @property
    def raw(self) -> RawObject:
        """The raw object this was parsed from (never mutate it), else `to_raw()`."""
        return self._raw if self._raw is not None else self.to_raw()

    def to_raw(self) -> RawObject:
        """This object as the API wants it: apiVersion and kind first, wire names, no None."""
        info = type(self).info()
        body = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        meta = body.get("metadata") or {}
        body["metadata"] = {k: v for k, v in meta.items() if v not in ({}, [])}
        api_version = f"{info.group}/{info.version}"
        return typing.cast(RawObject, {"apiVersion": api_version, "kind": info.kind, **body})

    async def write_status(self, client: StatusWriter, status: BaseModel | dict[str, Any]
                           ) -> Self | None:
        """PUT `status` through the status subresource, or do nothing if it is unchanged.

        Returns the stored object, parsed; raises `Conflict` when this object is stale.
        """
        cls = type(self)
        if not cls.info().status_subresource:
            raise CRDError(f"{cls.__name__}: no status subresource to write")
        new = (status.model_dump(mode="json", by_alias=True, exclude_none=True)
               if isinstance(status, BaseModel) else status)
        raw = self.raw
        current = raw.get("status")
        if current is not None and _normal(cls, current) == _normal(cls, new):
            return None
        body = deep_copy(raw)
        body["status"] = new
        return cls.parse(await client.update_status(cls.KIND, body))


def _status_model(cls: type[CustomResource]) -> type[BaseModel] | None:
    annotation: Any = cls.model_fields["status"].annotation if "status" in cls.model_fields \
        else None
    args: tuple[Any, ...] = typing.get_args(annotation)
    for candidate in (annotation, *args):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _normal(cls: type[CustomResource], status: Any) -> Any:
    """`status` as the model reads it back (so formatting differences are not changes)."""
    model = _status_model(cls)
    if model is None or not isinstance(status, dict):
        return status
    try:
        return model.model_validate(status).model_dump(mode="json", by_alias=True,
                                                       exclude_none=True)
    except ValidationError:
        return status


def _declare(cls: type[CustomResource], kw: dict[str, Any]) -> ResourceInfo:
    name = cls.__name__

    def fail(problem: str) -> CRDError:
        return CRDError(f"{name}: {problem}")

    group, version = kw.get("group"), kw.get("version")
    if not group:
        raise fail(f'no group: declare it as class {name}(CustomResource, '
                   f'group="example.com", version="{version or "v1"}")')
    if not names.is_group(group):
        raise fail(f"group {group!r} must be a DNS subdomain with at least one dot "
                   "(e.g. cache.example.com)")
    if not version:
        raise fail(f'no version: declare it as class {name}(CustomResource, group="{group}", '
                   'version="v1")')
    if not names.is_dns1035_label(version):
        raise fail(f"version {version!r} must be a DNS-1035 label such as v1 or v1alpha1")
    kind = kw.get("kind") or name
    if not kind[:1].isupper() or not names.is_dns1035_label(kind.lower()):
        raise fail(f"kind {kind!r} must be UpperCamelCase letters and digits")
    plural = kw.get("plural") or names.plural_of(kind)
    singular = kw.get("singular") or kind.lower()
    for label, value in (("plural", plural), ("singular", singular),
                         *(("short name", s) for s in kw.get("short_names", ())),
                         *(("category", c) for c in kw.get("categories", ()))):
        if not names.is_dns1035_label(value):
            raise fail(f"{label} {value!r} must be a lower-case DNS-1035 label")
    scope = kw.get("scope", "Namespaced")
    if scope not in ("Namespaced", "Cluster"):
        raise fail(f'scope {scope!r} must be "Namespaced" or "Cluster"')
    has_status = "status" in cls.model_fields
    status_subresource = kw.get("status_subresource", has_status)
    if status_subresource and not has_status:
        raise fail("status_subresource=True needs a status field")
    return ResourceInfo(
        group=group, version=version, kind=kind, plural=plural, singular=singular,
        scope=scope, short_names=tuple(kw.get("short_names", ())),
        categories=tuple(kw.get("categories", ())),
        printer_columns=tuple(kw.get("printer_columns", ())),
        status_subresource=bool(status_subresource), scale=kw.get("scale"),
        served=kw.get("served", True), storage=kw.get("storage"),
        deprecated=kw.get("deprecated", False),
        deprecation_warning=kw.get("deprecation_warning"),
        selectable_fields=tuple(_strings(kw.get("selectable_fields", ()))),
    )


def _strings(values: Sequence[str]) -> list[str]:
    return [str(v) for v in values]
