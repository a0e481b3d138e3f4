"""ResourceType: everything the embedded API server knows about one served resource.

One ResourceType per (group, version, plural). Built-in types come from a static table;
CRD-backed types are derived from the CRD object when it becomes Established. Invariant:
a ResourceType is immutable; re-registering a CRD replaces its types as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asyncop.apiserver.schema.cel import has_rules


@dataclass(frozen=True, slots=True)
class ScaleSpec:
    """JSON paths (dotted, without the leading dot) of the scale subresource."""

    spec_replicas_path: str = "spec.replicas"
    status_replicas_path: str = "status.replicas"
    label_selector_path: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = (
        "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch",
    )
    has_status: bool = False
    scale: ScaleSpec | None = None
    #: openAPIV3Schema of a CRD version (None for built-ins: no schema validation).
    schema: dict[str, Any] | None = None
    #: additionalPrinterColumns of a CRD version (empty: Name + Age, or a built-in table).
    printer_columns: tuple[dict[str, Any], ...] = ()
    #: name of the CRD this type comes from (None for built-ins).
    crd_name: str | None = None
    #: the version objects are stored in (all served versions convert trivially).
    storage_version: str = ""
    list_kind: str = field(default="")
    #: the group whose storage this resource shares (events.k8s.io events live with core
    #: events); None: its own group.
    storage_group: str | None = None
    # derived once (hot path: every request asks for them several times)
    _api_version: str = field(default="", init=False, repr=False, compare=False)
    _gr: tuple[str, str] = field(default=("", ""), init=False, repr=False, compare=False)
    _cel: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        api_version = f"{self.group}/{self.version}" if self.group else self.version
        group = self.group if self.storage_group is None else self.storage_group
        object.__setattr__(self, "_api_version", api_version)
        object.__setattr__(self, "_gr", (group, self.plural))
        object.__setattr__(self, "_cel", has_rules(self.schema))

    @property
    def api_version(self) -> str:
        return self._api_version

    @property
    def has_cel_rules(self) -> bool:
        """Whether the schema carries CEL rules (`x-kubernetes-validations`) anywhere."""
        return self._cel

    @property
    def gr(self) -> tuple[str, str]:
        """(group, plural): the storage identity shared by every version of a resource
        (and by every group that views the same storage, see `storage_group`)."""
        return self._gr

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def list_kind_name(self) -> str:
        return self.list_kind or f"{self.kind}List"

    @property
    def is_custom(self) -> bool:
        return self.crd_name is not None
