"""Typed custom resources from pydantic models, and the CRDs generated from them.

Declare a resource once — group, version, names, printer columns, subresources, and its
spec/status as pydantic models — and get from it the runtime `Kind` (`Memcached.KIND`), a
structural OpenAPI v3 schema and a complete apiextensions.k8s.io/v1 CRD (`crds(...)`,
several versions of one kind in one CRD), and typed access in reconcilers (`parse`,
`from_cache`, `write_status`) that leaves the raw-dict hot path alone.

Modules, in reading order: `resource` (CustomResource and typed access), `info` (the class
keywords, checked: ResourceInfo, PrinterColumn, Scale), `model` (Model, ObjectMeta),
`markers` (what pydantic cannot say: IntOrString, PreserveUnknownFields, EmbeddedResource,
ListMap/ListSet/ListAtomic, MapType, Rule, Format, Nullable, Int32, Int64), `manifest` (CRD
assembly), `schema` (pydantic JSON schema -> structural OpenAPI; the mapping rules are in its
docstring), `pydantic_schema` (defaults and untyped fields), `kubetypes` (kube's own types,
such as `asyncop.k8s.PodTemplateSpec`, embedded with kube's full schema as controller-gen
embeds them), `structural` (kube's structural rules), `values` (nulls the schema does not
allow), `yamltext` (crd_yaml), `conditions` (metav1.Condition), `names`, `typenames`,
`unmapped` (field types with no mapping), `errors`.

Invariant: this package imports only `asyncop.api` and `asyncop.kubespec` (and
pydantic/yaml) — never `asyncop.k8s`, whose classes it knows by their `__kube_definition__`;
a mistake in a model is a `CRDError` of one line naming the class and the field.
"""

from asyncop.crd.conditions import Condition, Conditions
from asyncop.crd.errors import CRDError, describe_error
from asyncop.crd.info import PrinterColumn, ResourceInfo, Scale
from asyncop.crd.manifest import crds, resource_schema
from asyncop.crd.markers import (
    EmbeddedResource,
    Format,
    Int32,
    Int64,
    IntOrString,
    ListAtomic,
    ListMap,
    ListSet,
    MapType,
    Nullable,
    PreserveUnknownFields,
    Rule,
)
from asyncop.crd.model import Model, ObjectMeta, OwnerReference
from asyncop.crd.resource import CustomResource
from asyncop.crd.yamltext import crd_yaml

__all__ = [
    "CRDError",
    "Condition",
    "Conditions",
    "CustomResource",
    "EmbeddedResource",
    "Format",
    "Int32",
    "Int64",
    "IntOrString",
    "ListAtomic",
    "ListMap",
    "ListSet",
    "MapType",
    "Model",
    "Nullable",
    "ObjectMeta",
    "OwnerReference",
    "PreserveUnknownFields",
    "PrinterColumn",
    "ResourceInfo",
    "Rule",
    "Scale",
    "crd_yaml",
    "crds",
    "describe_error",
    "resource_schema",
]
