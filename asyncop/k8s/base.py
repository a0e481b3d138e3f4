"""The bases of kube's types: `KubeModel`, `KubeObject`, and the scalar types they use.

Every generated class (`core_v1.PodSpec`, `apps_v1.Deployment`, ...) is a `KubeModel`: an
`asyncop.crd.Model` (so it works as a field type of typed resources, snake_case in Python and
camelCase on the wire, unknown fields ignored on parse) that records the kube definition it
mirrors in `__kube_definition__` — the CRD generator reads that name and embeds kube's own
schema for the field. Wire names that are not the camelCase of the Python name (`hostIP`,
`from`, `$ref`, `x-kubernetes-list-type`) are given per field with `wire(...)`.

Top-level kinds with a `Kind` constant in `asyncop.api.kinds` are `KubeObject`s: typed views
of raw objects, like `CustomResource` offers for custom resources — `Deployment.KIND`,
`Deployment.parse(raw)`, `Deployment.from_cache(cache, request)`, `obj.raw`, `obj.to_raw()`.

Scalars, as kube serialises them: `Quantity` is the text of a quantity (`"500m"`, `"1Gi"`;
a JSON number is accepted and kept as its text), `IntOrString` is `int | str`, times are
`datetime` (RFC 3339; kube writes UTC with `Z`, which is what a dump writes back).

Invariants: a parse checks types only — no enums, patterns or bounds kube's decoding does not
apply; `to_raw()` writes exactly the fields that were parsed or set (`exclude_unset`), so a
parsed object dumps back as it came (less fields unknown to this kube version); parsing
never mutates the raw dict. Models build their validators on first use (`defer_build`), so
importing a module of a few hundred classes stays cheap.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, ConfigDict, Field

from asyncop.api import RawObject
from asyncop.crd.model import Model
from asyncop.crd.resource import TypedView

__all__ = ["IntOrString", "KubeModel", "KubeObject", "Quantity", "RawExtension", "wire"]


def wire(name: str) -> Any:
    """The wire name of a field whose name is not the camelCase of its Python name (both
    spellings validate; dumps use `name`)."""
    return Field(validation_alias=name, serialization_alias=name)


def _quantity_text(value: Any) -> Any:
    """A JSON number is a valid quantity on the wire; keep its text (kube serialises
    quantities as strings). Anything else goes to `str` validation unchanged."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


Quantity = Annotated[str, BeforeValidator(_quantity_text)]
"""resource.Quantity: `"500m"`, `"1Gi"`, `"2"` (numbers are accepted and kept as text)."""

IntOrString = int | str
"""intstr.IntOrString: a port number or a name, a count or a percentage."""

RawExtension = Any
"""runtime.RawExtension: a whole embedded object of any kind, kept as parsed JSON."""


class KubeModel(Model):
    """Base of kube's types: a `Model` that names the kube definition it mirrors."""

    model_config = ConfigDict(defer_build=True, use_attribute_docstrings=False)
    __kube_definition__: ClassVar[str] = ""


class KubeObject(KubeModel, TypedView):
    """Base of top-level kinds: a typed view of a raw object (`TypedView`: parse,
    from_cache, raw; see the module docstring)."""

    def to_raw(self) -> RawObject:
        """The object as the API wants it: apiVersion and kind first (from `KIND` when not
        set), then the fields that were parsed or set, with their wire names."""
        body = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        kind = type(self).KIND
        head = {"apiVersion": body.pop("apiVersion", None) or kind.api_version,
                "kind": body.pop("kind", None) or kind.kind}
        return typing.cast(RawObject, {**head, **body})
