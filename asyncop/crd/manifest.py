"""CRD assembly: the openAPIV3Schema of a resource class, its version entry, whole CRDs, YAML.

- `resource_schema(cls)`: the root schema — `apiVersion`, `kind`, `metadata` (an object, as
  kube requires) and the class's own fields (spec, status, ...); the class docstring is the
  description; `status` never gets a default. Printer columns, scale paths and selectable
  fields are checked against it (each must name a declared field of a fitting type).
- `crds(*classes)`: one CRD per (group, plural) with every version, in Kubernetes' version
  order (GA, beta, alpha; higher first); exactly one storage version (the only one, or the
  one declared `storage=True`); versions must agree on kind, scope and names.
- `crd_yaml(crd, header=)`: the canonical YAML text (block style, keys in dict order, lists
  indented under their key, long lines wrapped by the emitter at 100 columns).

Invariants: output depends only on the classes (no clock, no environment), key order is
fixed, and every CRD passes `check_structural`, so it is byte-stable and accepted by kube.
"""

from __future__ import annotations

import typing
from typing import Any

import yaml

from asyncop.api import RawObject
from asyncop.crd import names
from asyncop.crd.errors import CRDError
from asyncop.crd.resource import CustomResource, ResourceInfo
from asyncop.crd.schema import Schema, object_schema, prose
from asyncop.crd.structural import check_structural, node_at

API_VERSION = {"type": "string", "description": (
    "APIVersion defines the versioned schema of this representation of an object.")}
KIND = {"type": "string", "description": (
    "Kind is a string value representing the REST resource this object represents.")}
_METADATA_PATHS = ("name", "namespace", "uid", "generation", "resourceVersion",
                   "creationTimestamp", "deletionTimestamp", "labels", "annotations",
                   "generateName", "finalizers", "ownerReferences")
_COLUMN_TYPES = {"integer": ("integer",), "number": ("number", "integer"),
                 "boolean": ("boolean",)}


def resource_schema(cls: type[CustomResource]) -> Schema:
    """The structural openAPIV3Schema of one resource class (one version)."""
    info = cls.info()
    body = object_schema(cls.__name__, cls)
    root: Schema = {"type": "object"}
    if cls.__doc__ and "__doc__" in vars(cls):
        root["description"] = prose(cls.__doc__)
    props: Schema = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"type": "object"}}
    for name, prop in (body.get("properties") or {}).items():
        if name == "metadata":
            continue
        if name == "status":
            prop = {k: v for k, v in prop.items() if k != "default"}
        props[name] = prop
    required = [r for r in body.get("required") or [] if r != "metadata"]
    if required:
        root["required"] = required
    root["properties"] = props
    if body.get("x-kubernetes-validations"):
        root["x-kubernetes-validations"] = body["x-kubernetes-validations"]
    check_structural(cls.__name__, root)
    _check_paths(cls.__name__, info, root)
    return root


def _check_paths(owner: str, info: ResourceInfo, root: Schema) -> None:
    def field(path: str, what: str) -> Schema:
        if path.startswith(".metadata."):
            head = path.removeprefix(".metadata.").split(".")[0].split("[")[0]
            if head in _METADATA_PATHS:
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
            if not path.startswith((".spec.", ".status.")):
                raise CRDError(f"{owner}: {what}: {path} must be under .spec or .status")
            if field(path, what).get("type") != "integer":
                raise CRDError(f"{owner}: {what}: {path} must be an integer field")
        if info.scale.label_selector_path:
            node = field(info.scale.label_selector_path, "scale labelSelectorPath")
            if node.get("type") not in (None, "string"):
                raise CRDError(f"{owner}: scale labelSelectorPath: must be a string field")
    for path in info.selectable_fields:
        node = field(path, "selectable field")
        if node.get("type") not in ("string", "integer", "boolean"):
            raise CRDError(f"{owner}: selectable field {path} must be a string, integer or "
                           "boolean field")


def version_entry(cls: type[CustomResource], *, storage: bool) -> Schema:
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
    entry["schema"] = {"openAPIV3Schema": resource_schema(cls)}
    return entry


def crds(*classes: type[CustomResource]) -> list[RawObject]:
    """One CRD per (group, plural) with all its versions; sorted by CRD name."""
    groups: dict[str, list[type[CustomResource]]] = {}
    for cls in classes:
        info = cls.info()
        members = groups.setdefault(info.crd_name, [])
        if cls not in members:
            members.append(cls)
    return [_crd(name, members) for name, members in sorted(groups.items())]


def _crd(name: str, members: list[type[CustomResource]]) -> RawObject:
    members = sorted(members, key=lambda c: names.version_priority(c.info().version))
    first = members[0].info()
    seen: dict[str, str] = {}
    for cls in members:
        info = cls.info()
        same = (info.kind, info.scope, info.singular, info.short_names, info.categories)
        if same != (first.kind, first.scope, first.singular, first.short_names,
                    first.categories):
            raise CRDError(f"{cls.__name__}: versions of {name} disagree on kind, scope or "
                           f"names ({members[0].__name__} declares them differently)")
        if info.version in seen:
            raise CRDError(f"{cls.__name__}: version {info.version} of {name} is declared "
                           f"twice (also by {seen[info.version]})")
        seen[info.version] = cls.__name__
    declared = [c for c in members if c.info().storage]
    if len(members) == 1:
        storage = members[0]
    elif len(declared) == 1:
        storage = declared[0]
    else:
        listed = ", ".join(c.__name__ for c in members)
        raise CRDError(f"{name}: {len(declared)} storage versions among {listed}; declare "
                       "exactly one with storage=True")
    if not storage.info().served:
        raise CRDError(f"{storage.__name__}: the storage version must be served")
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


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """Long prose is folded (`>-`), text with line breaks literal (`|`), the rest plain."""
    style = "|" if "\n" in value else (">" if len(value) > 72 and " " in value else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True


_Dumper.add_representer(str, _str)


def crd_yaml(crd: RawObject | dict[str, Any], *, header: str | None = None) -> str:
    """The canonical YAML text of `crd`, with an optional `# header` comment line."""
    text = yaml.dump(dict(crd), Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     width=100, allow_unicode=True)
    return (f"# {header}\n" if header else "") + text
