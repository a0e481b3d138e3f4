"""The declaration of a custom resource: what the class keywords say, checked.

`declare(name, keywords, has_status=...)` turns the keywords of
`class Memcached(CustomResource, group=..., version=..., ...)` into a frozen `ResourceInfo`,
or raises a one-line `CRDError` naming the class for a declaration mistake — the same rules
kube-apiserver applies to a CRD's names, versions, printer columns, scale paths and
selectable fields, so a mistake shows at import time rather than as a 422 at install time.
Checks that need the schema (does a JSON path name a declared field of the right type?)
happen when the CRD is assembled (`manifest`).

`PrinterColumn` and `Scale` are the values users pass; `to_dict()` gives their CRD form with
keys in a fixed order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from asyncop.crd import names
from asyncop.crd.errors import CRDError

KEYWORDS = ("group", "version", "kind", "plural", "singular", "scope", "short_names",
            "categories", "printer_columns", "status_subresource", "scale", "served",
            "storage", "deprecated", "deprecation_warning", "selectable_fields",
            "embedded_object_meta")
COLUMN_TYPES = ("string", "integer", "number", "boolean", "date")
COLUMN_FORMATS = ("int32", "int64", "float", "double", "byte", "date", "date-time",
                  "password")
MAX_SELECTABLE_FIELDS = 8


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """A column of `kubectl get` (additionalPrinterColumns); priority > 0 shows only with
    `-o wide`."""

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
    """The scale subresource: where replicas live in spec and status (integer fields), and
    optionally a string field holding the label selector of the pods (for HPAs)."""

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
    selectable_fields: tuple[str, ...] = ()
    embedded_object_meta: bool = False
    """kube's ObjectMeta inside kube's types (a template's `metadata`) keeps name, namespace,
    labels, annotations and finalizers (controller-gen's `crd:generateEmbeddedObjectMeta=true`)
    instead of being a bare `type: object`, under which the API server prunes all of them."""

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


def declare(name: str, kw: Mapping[str, Any], *, has_status: bool) -> ResourceInfo:
    """The checked declaration of class `name` (see the module docstring)."""

    def fail(problem: str) -> CRDError:
        return CRDError(f"{name}: {problem}")

    group, version = kw.get("group"), kw.get("version")
    if not group:
        raise fail(f'no group: declare it as class {name}(CustomResource, '
                   f'group="example.com", version="{version or "v1"}")')
    if not isinstance(group, str) or not names.is_group(group):
        raise fail(f"group {group!r} must be a DNS subdomain with at least one dot "
                   "(e.g. cache.example.com)")
    if not version:
        raise fail(f'no version: declare it as class {name}(CustomResource, group="{group}", '
                   'version="v1")')
    if not isinstance(version, str) or not names.is_dns1035_label(version):
        raise fail(f"version {version!r} must be a DNS-1035 label such as v1 or v1alpha1")
    kind = kw.get("kind") or name
    if not isinstance(kind, str) or not names.is_kind(kind):
        raise fail(f"kind {kind!r} must be UpperCamelCase letters and digits")
    plural = kw.get("plural") or names.plural_of(kind)
    singular = kw.get("singular") or kind.lower()
    short_names = _strings(fail, "short_names", kw.get("short_names", ()))
    categories = _strings(fail, "categories", kw.get("categories", ()))
    for label, value in (("plural", plural), ("singular", singular),
                         *(("short name", s) for s in short_names),
                         *(("category", c) for c in categories)):
        if not isinstance(value, str) or not names.is_dns1035_label(value):
            raise fail(f"{label} {value!r} must be a lower-case DNS-1035 label")
    scope = kw.get("scope", "Namespaced")
    if scope not in ("Namespaced", "Cluster"):
        raise fail(f'scope {scope!r} must be "Namespaced" or "Cluster"')
    status_subresource = kw.get("status_subresource", has_status)
    if status_subresource and not has_status:
        raise fail("status_subresource=True needs a status field")
    storage = kw.get("storage")
    if storage not in (None, True, False):
        raise fail(f"storage={storage!r} must be True, False or None")
    deprecation_warning = kw.get("deprecation_warning")
    if deprecation_warning is not None and not kw.get("deprecated"):
        raise fail("deprecation_warning needs deprecated=True")
    embedded_object_meta = kw.get("embedded_object_meta", False)
    if not isinstance(embedded_object_meta, bool):
        raise fail(f"embedded_object_meta={embedded_object_meta!r} must be True or False")
    return ResourceInfo(
        group=group, version=version, kind=kind, plural=plural, singular=singular,
        scope=scope, short_names=short_names, categories=categories,
        printer_columns=_columns(fail, kw.get("printer_columns", ())),
        status_subresource=bool(status_subresource), scale=_scale(fail, kw.get("scale")),
        served=bool(kw.get("served", True)), storage=storage,
        deprecated=bool(kw.get("deprecated", False)), deprecation_warning=deprecation_warning,
        selectable_fields=_selectable(fail, kw.get("selectable_fields", ())),
        embedded_object_meta=bool(embedded_object_meta),
    )


def _strings(fail: Any, label: str, values: Any) -> tuple[str, ...]:
    if isinstance(values, str):
        raise fail(f"{label} takes a tuple of strings, e.g. {label}=({values!r},)")
    return tuple(values)


def _columns(fail: Any, columns: Any) -> tuple[PrinterColumn, ...]:
    if isinstance(columns, PrinterColumn):
        columns = (columns,)
    out = tuple(columns)
    for column in out:
        if not isinstance(column, PrinterColumn):
            raise fail(f"printer_columns takes PrinterColumn(...) values, not {column!r}")
        what = f"printer column {column.name!r}"
        if not column.name:
            raise fail("a printer column needs a name")
        if column.type not in COLUMN_TYPES:
            raise fail(f"{what}: type {column.type!r} is not one of {', '.join(COLUMN_TYPES)}")
        if column.format and column.format not in COLUMN_FORMATS:
            raise fail(f"{what}: format {column.format!r} is not one of "
                       f"{', '.join(COLUMN_FORMATS)}")
        if column.priority < 0:
            raise fail(f"{what}: priority must not be negative")
        if not column.json_path.startswith("."):
            raise fail(f"{what}: json_path {column.json_path!r} must start with '.' "
                       "(e.g. .spec.size)")
    return out


def _scale(fail: Any, scale: Any) -> Scale | None:
    if scale is None:
        return None
    if not isinstance(scale, Scale):
        raise fail(f"scale takes Scale(...), not {scale!r}")
    checks = (("specReplicasPath", scale.spec_replicas_path, (".spec.",)),
              ("statusReplicasPath", scale.status_replicas_path, (".status.",)),
              ("labelSelectorPath", scale.label_selector_path, (".spec.", ".status.")))
    for what, path, prefixes in checks:
        if path is None:
            continue
        if not path.startswith(prefixes) or "[" in path:
            under = " or ".join(p.rstrip(".") for p in prefixes)
            raise fail(f"scale {what}: {path} must be a simple path under {under}")
    return scale


def _selectable(fail: Any, paths: Any) -> tuple[str, ...]:
    out = _strings(fail, "selectable_fields", paths)
    if len(out) > MAX_SELECTABLE_FIELDS:
        raise fail(f"at most {MAX_SELECTABLE_FIELDS} selectable fields")
    for path in out:
        if not path.startswith(".") or "[" in path:
            raise fail(f"selectable field {path!r} must be a simple path such as .spec.color")
        if path == ".metadata" or path.startswith(".metadata."):
            raise fail(f"selectable field {path}: metadata fields cannot be selectable "
                       "(name and namespace always are)")
    return out
