"""CRD assembly: the openAPIV3Schema of a resource class, its version entry, whole CRDs.

- `resource_schema(cls)`: the root schema — `apiVersion` and `kind` (strings, with kube's own
  descriptions), `metadata` (`type: object`: kube implies the rest) and the class's own
  fields (spec, status, ...); the class docstring is the description; `status` never gets
  a default. Printer columns, scale paths and selectable fields are checked against it
  (each must name a declared field of a fitting type).
- `crds(*classes)`: one CRD per (group, plural) with every version, in Kubernetes' version
  order (v1 > v1beta2 > v1beta1 > v1alpha1 ...); exactly one storage version (the only one,
  or the one declared `storage=True`); versions must agree on kind, scope and names; CRDs
  sorted by name. `single_crd(cls)` (`cls.crd()`): the CRD with just that version, stored.

Invariants: output depends only on the classes (no clock, no environment), key order is
fixed, and every schema passes `check_root`/`check_structural`, so it is byte-stable and
accepted by kube-apiserver.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

from asyncop.api import RawObject
from asyncop.crd import names
from asyncop.crd.errors import CRDError
from asyncop.crd.info import ResourceInfo
from asyncop.crd.schema import ORDER, Schema, object_schema, prose
from asyncop.crd.structural import check_root, node_at

if TYPE_CHECKING:
    from asyncop.crd.resource import CustomResource

API_VERSION: Schema = {"type": "string", "description": (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values.")}
KIND: Schema = {"type": "string", "description": (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase.")}
_TYPE_META = ("apiVersion", "kind", "metadata")
_METADATA_FIELDS = ("name", "namespace", "uid", "generation", "resourceVersion",
                    "creationTimestamp", "deletionTimestamp", "labels", "annotations",
                    "generateName", "finalizers", "ownerReferences")
_COLUMN_TYPES = {"integer": ("integer",), "number": ("number", "integer"),
                 "boolean": ("boolean",), "date": ("string",)}


def resource_schema(cls: type[CustomResource]) -> Schema:
    """The structural openAPIV3Schema of one resource class (one version)."""
    info = cls.info()
    body = object_schema(cls.__name__, cls, embedded_object_meta=info.embedded_object_meta)
    root: Schema = {"type": "object"}
    if cls.__doc__ and "__doc__" in vars(cls):
        root["description"] = prose(cls.__doc__)
    props: Schema = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"type": "object"}}
    for name, prop in (body.get("properties") or {}).items():
        if name in _TYPE_META:
            continue
        if name == "status":
            prop = {k: v for k, v in prop.items() if k != "default"}
        props[name] = prop
    required = [r for r in body.get("required") or [] if r not in _TYPE_META]
    if required:
        root["required"] = required
    root["properties"] = props
    for key in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations"):
        if key in body:
            root[key] = body[key]
    root = {key: root[key] for key in ORDER if key in root}
    check_root(cls.__name__, root)
    _check_paths(cls.__name__, info, root)
    return root


def _check_paths(owner: str, info: ResourceInfo, root: Schema) -> None:
    def field(path: str, what: str) -> Schema:
        if path.startswith(".metadata."):
            head = path.removeprefix(".metadata.").split(".")[0].split("[")[0]
            if head in _METADATA_FIELDS:
                return {}
        node = node_at(root, path)
        if node is None:
            raise CRDError(f"{owner}: {what}: {path} names no declared field")
        return node

    for column in info.printer_columns:
        node = field(column.json_path, f"printer column {column.name!r}")
        allowed = _COLUMN_TYPES.get(column.type)
        if allowed and node.get("type") and node["type"] not in allowed:
            raise CRDError(f"{owner}: printer column {column.name!r}: {column.json_path} is "
                           f"a {node['type']}, not {column.type}")
    if info.scale is not None:
        for path, what in ((info.scale.spec_replicas_path, "scale specReplicasPath"),
                           (info.scale.status_replicas_path, "scale statusReplicasPath")):
            if field(path, what).get("type") != "integer":
                raise CRDError(f"{owner}: {what}: {path} must be an integer field")
        if info.scale.label_selector_path:
            path = info.scale.label_selector_path
            if field(path, "scale labelSelectorPath").get("type") != "string":
                raise CRDError(f"{owner}: scale labelSelectorPath: {path} must be a string "
                               "field")
    for path in info.selectable_fields:
        node = field(path, "selectable field")
        if node.get("type") not in ("string", "integer", "boolean"):
            raise CRDError(f"{owner}: selectable field {path} must be a string, integer or "
                           "boolean field")


def version_entry(cls: type[CustomResource], *, storage: bool) -> Schema:
    """The `spec.versions[]` entry of one resource class."""
    info = cls.info()
    entry: Schema = {"name": info.version, "served": info.served, "storage": storage}
    if info.deprecated:
        entry["deprecated"] = True
        if info.deprecation_warning:
            entry["deprecationWarning"] = info.deprecation_warning
    sub: Schema = {}
    if info.status_subresource:
        sub["status"] = {}
    if info.scale is not None:
        sub["scale"] = info.scale.to_dict()
    if sub:
        entry["subresources"] = sub
    if info.printer_columns:
        entry["additionalPrinterColumns"] = [c.to_dict() for c in info.printer_columns]
    if info.selectable_fields:
        entry["selectableFields"] = [{"jsonPath": p} for p in info.selectable_fields]
    entry["schema"] = {"openAPIV3Schema": cls.schema()}
    return entry


def crds(*classes: type[CustomResource]) -> list[RawObject]:
    """One CRD per (group, plural) with all its versions; sorted by CRD name."""
    groups: dict[str, list[type[CustomResource]]] = {}
    for cls in classes:
        members = groups.setdefault(cls.info().crd_name, [])
        if cls not in members:
            members.append(cls)
    return [_crd(name, members) for name, members in sorted(groups.items())]


def single_crd(cls: type[CustomResource]) -> RawObject:
    """The CRD of `cls` alone; its version is the storage version."""
    return _assemble(cls.info().crd_name, [cls], storage=cls)


def _crd(name: str, members: list[type[CustomResource]]) -> RawObject:
    members = sorted(members, key=lambda c: names.version_priority(c.info().version))
    first = members[0]
    seen: dict[str, str] = {}
    for cls in members:
        info = cls.info()
        differs = [label for label, a, b in _same(first.info(), info) if a != b]
        if differs:
            raise CRDError(f"{cls.__name__}: versions of {name} disagree on {differs[0]} "
                           f"({first.__name__} declares it differently)")
        if info.version in seen:
            raise CRDError(f"{cls.__name__}: version {info.version} of {name} is declared "
                           f"twice (also by {seen[info.version]})")
        seen[info.version] = cls.__name__
    declared = [c for c in members if c.info().storage]
    if len(members) == 1 and members[0].info().storage is not False:
        storage = members[0]
    elif len(declared) == 1:
        storage = declared[0]
    else:
        listed = ", ".join(c.__name__ for c in members)
        raise CRDError(f"{name}: {len(declared)} storage versions among {listed}; declare "
                       "exactly one with storage=True")
    if not any(c.info().served for c in members):
        raise CRDError(f"{name}: no served version; declare one with served=True")
    return _assemble(name, members, storage=storage)


def _same(a: ResourceInfo, b: ResourceInfo) -> list[tuple[str, Any, Any]]:
    return [("kind", a.kind, b.kind), ("scope", a.scope, b.scope),
            ("singular", a.singular, b.singular), ("short_names", a.short_names, b.short_names),
            ("categories", a.categories, b.categories)]


def _assemble(name: str, members: list[type[CustomResource]], *,
              storage: type[CustomResource]) -> RawObject:
    first = members[0].info()
    spec_names: Schema = {"plural": first.plural, "singular": first.singular,
                          "kind": first.kind, "listKind": f"{first.kind}List"}
    if first.short_names:
        spec_names["shortNames"] = list(first.short_names)
    if first.categories:
        spec_names["categories"] = list(first.categories)
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": first.group,
            "scope": first.scope,
            "names": spec_names,
            "versions": [version_entry(c, storage=c is storage) for c in members],
        },
    }
    return typing.cast(RawObject, crd)
