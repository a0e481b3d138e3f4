"""Kubernetes' own types inside a CRD schema, expanded as controller-gen expands them.

A field whose type is one of kube's types (a class with `__kube_definition__`, such as
`asyncop.k8s.PodTemplateSpec`) gets kube's full schema in the CRD, read from
`asyncop.kubespec` (kube 1.<DEFAULT_MINOR>) — never from the Python class, which holds names
and types only. `kube_schema(definition)` builds it as controller-gen (the CRD generator of
kubebuilder) does for a Go field of that type:

- `$ref`s are inlined; a field's own description wins over its type's; kube's `required`,
  `format`, `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and
  `x-kubernetes-map-type` are kept (list types on arrays, map types on objects: kube's data
  marks a few `[]byte` strings `atomic`, which a CRD refuses); the `x-kubernetes-patch-*`,
  `x-kubernetes-unions` and group/version/kind tags are dropped (a CRD has no place for them);
- kube's special types take controller-gen's forms (its `KnownPackages`): IntOrString →
  `x-kubernetes-int-or-string: true` with `anyOf: [{type: integer}, {type: string}]`,
  Quantity → the same plus controller-gen's quantity `pattern`, Time and MicroTime →
  `type: string, format: date-time`, an embedded ObjectMeta (a template's `metadata`) →
  `type: object` (controller-gen without `generateEmbeddedObjectMeta`: the API server prunes
  everything in it), or with `embedded_object_meta=True` controller-gen's
  `generateEmbeddedObjectMeta` form (name, namespace, labels, annotations, finalizers,
  `EMBEDDED_OBJECT_META`), RawExtension →
  `type: object` with `x-kubernetes-preserve-unknown-fields`, apiextensions' JSON →
  `x-kubernetes-preserve-unknown-fields` alone;
- kube's `+default=` markers become `default:` as controller-gen applies them (`KUBE_DEFAULTS`:
  the markers of k8s.io/api v0.33.0 with a JSON value; `ref(...)` values are skipped, as
  controller-gen skips them). kube's OpenAPI data does not carry them, and without them
  list-map keys such as a container port's `protocol` would be neither required nor
  defaulted, which kube-apiserver refuses in a CRD.

A definition that contains itself (apiextensions' JSONSchemaProps) cannot be a structural
schema: `KubeRecursion` names the definition and where it recurs, and the schema conversion
turns it into the usual one-line `CRDError` naming the model and field.

Invariants: the result is a fresh dict each call (the cached expansion is deep-copied), keys
in the conversion's fixed order, so generated YAML is byte-stable; nothing here imports
`asyncop.k8s` (classes are recognised by their `__kube_definition__`).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from typing import Any

from asyncop.kubespec import DEFAULT_MINOR, INT_OR_STRING, QUANTITY, definitions, ref_name

Schema = dict[str, Any]

KUBE_DEFINITION_KEY = "x-asyncop-kube-definition"
"""Internal key: this JSON-schema node is kube's type of that name (see `pydantic_schema`)."""

QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
"""controller-gen's pattern for resource.Quantity."""

_INT_OR_STRING: Schema = {"anyOf": [{"type": "integer"}, {"type": "string"}],
                          "x-kubernetes-int-or-string": True}
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_SPECIAL: Mapping[str, Schema] = {
    INT_OR_STRING: _INT_OR_STRING,
    QUANTITY: {**_INT_OR_STRING, "pattern": QUANTITY_PATTERN},
    _META + "Time": {"type": "string", "format": "date-time"},
    _META + "MicroTime": {"type": "string", "format": "date-time"},
    _META + "ObjectMeta": {"type": "object"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": {
        "x-kubernetes-preserve-unknown-fields": True},
}
"""kube's special types in controller-gen's forms (see the module docstring)."""

_STRING_MAP: Schema = {"type": "object", "additionalProperties": {"type": "string"}}
EMBEDDED_OBJECT_META: Schema = {"type": "object", "properties": {
    "annotations": _STRING_MAP, "finalizers": {"type": "array", "items": {"type": "string"}},
    "labels": _STRING_MAP, "name": {"type": "string"}, "namespace": {"type": "string"}}}
"""An embedded ObjectMeta as controller-gen writes it with `crd:generateEmbeddedObjectMeta=true`
(its ObjectMetaPackages): the five fields that mean something in a template, no more."""

_CORE = "io.k8s.api.core.v1."
KUBE_DEFAULTS: Mapping[tuple[str, str], Any] = {
    (_CORE + "AzureDiskVolumeSource", "fsType"): "ext4",
    (_CORE + "AzureDiskVolumeSource", "readOnly"): False,
    (_CORE + "ContainerPort", "protocol"): "TCP",
    (_CORE + "GRPCAction", "service"): "",
    (_CORE + "ISCSIPersistentVolumeSource", "iscsiInterface"): "default",
    (_CORE + "ISCSIVolumeSource", "iscsiInterface"): "default",
    (_CORE + "LocalObjectReference", "name"): "",
    (_CORE + "RBDPersistentVolumeSource", "keyring"): "/etc/ceph/keyring",
    (_CORE + "RBDPersistentVolumeSource", "pool"): "rbd",
    (_CORE + "RBDPersistentVolumeSource", "user"): "admin",
    (_CORE + "RBDVolumeSource", "keyring"): "/etc/ceph/keyring",
    (_CORE + "RBDVolumeSource", "pool"): "rbd",
    (_CORE + "RBDVolumeSource", "user"): "admin",
    (_CORE + "ReplicationControllerSpec", "minReadySeconds"): 0,
    (_CORE + "ReplicationControllerSpec", "replicas"): 1,
    (_CORE + "ScaleIOPersistentVolumeSource", "fsType"): "xfs",
    (_CORE + "ScaleIOPersistentVolumeSource", "storageMode"): "ThinProvisioned",
    (_CORE + "ScaleIOVolumeSource", "fsType"): "xfs",
    (_CORE + "ScaleIOVolumeSource", "storageMode"): "ThinProvisioned",
    (_CORE + "ServicePort", "protocol"): "TCP",
}
"""(definition, field) → default: the `+default=<JSON>` markers of k8s.io/api v0.33.0's
types.go files (only core/v1 has any), which controller-gen writes as `default:`."""

_KEPT = ("type", "format", "description", "required", "x-kubernetes-list-type",
         "x-kubernetes-list-map-keys", "x-kubernetes-map-type")


_HOMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"io\.k8s\.api\.([a-z0-9]+)\.(v\d+)"), "{0}_{1}"),
    (re.compile(r"io\.k8s\.apimachinery\.pkg\.apis\.meta\.(v1)"), "meta_{0}"),
    (re.compile(r"io\.k8s\.apiextensions-apiserver\.pkg\.apis\.apiextensions\.(v1)"),
     "apiextensions_{0}"),
    (re.compile(r"io\.k8s\.kube-aggregator\.pkg\.apis\.apiregistration\.(v1)"),
     "apiregistration_{0}"),
    (re.compile(r"io\.k8s\.apimachinery\.pkg\.(version)"), "{0}"),
    (re.compile(r"io\.k8s\.apimachinery\.pkg\.(?:runtime|api\.resource|util\.intstr)"), "base"),
)


def k8s_module(definition: str) -> str | None:
    """The `asyncop.k8s` module that holds kube's GA `definition` (`io.k8s.api.batch.v1.Job`
    → `batch_v1`, `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` → `meta_v1`; Quantity,
    IntOrString and RawExtension → `base`); None for alpha and beta API versions. The one
    naming rule: asyncop.k8s's generator and the error messages here both use it."""
    package = definition.rpartition(".")[0]
    for pattern, template in _HOMES:
        m = pattern.fullmatch(package)
        if m:
            return template.format(*m.groups())
    return None


class KubeRecursion(Exception):
    """`definition` contains itself; `at` is the path inside the expansion where it recurs."""

    def __init__(self, definition: str, at: tuple[str, ...]) -> None:
        super().__init__(definition, at)
        self.definition = definition
        self.at = at


def kube_schema(definition: str, *, embedded_object_meta: bool = False) -> Schema:
    """The structural schema of kube's `definition`, as controller-gen writes it (a copy);
    `embedded_object_meta` as its `crd:generateEmbeddedObjectMeta=true`."""
    return copy.deepcopy(_expanded(definition, embedded_object_meta))


@functools.cache
def _expanded(definition: str, embedded_object_meta: bool) -> Schema:
    specials = ({**_SPECIAL, _META + "ObjectMeta": EMBEDDED_OBJECT_META}
                if embedded_object_meta else _SPECIAL)
    return _expand({"$ref": definition}, (), (), specials)


def _expand(node: Schema, stack: tuple[str, ...], at: tuple[str, ...],
            specials: Mapping[str, Schema]) -> Schema:
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = ref_name(ref)
        special = specials.get(target)
        if special is not None:
            expanded = copy.deepcopy(special)
        elif target in stack:
            raise KubeRecursion(target, at)
        else:
            expanded = _expand(definitions(DEFAULT_MINOR)[target], (*stack, target), at,
                               specials)
        if isinstance(node.get("description"), str):
            expanded["description"] = node["description"]
        return expanded
    out: Schema = {key: copy.deepcopy(node[key]) for key in _KEPT if key in node}
    if out.get("type") != "array":  # kube marks some []byte strings atomic: not for a CRD
        out.pop("x-kubernetes-list-type", None)
        out.pop("x-kubernetes-list-map-keys", None)
    if out.get("type") != "object":
        out.pop("x-kubernetes-map-type", None)
    owner = stack[-1] if stack else ""
    props = node.get("properties")
    if isinstance(props, dict):
        out["properties"] = {}
        for name, prop in props.items():
            sub = _expand(prop, stack, (*at, name), specials)
            default = KUBE_DEFAULTS.get((owner, name))
            if default is not None:
                sub["default"] = default
            out["properties"][name] = sub
    if isinstance(node.get("items"), dict):
        out["items"] = _expand(node["items"], stack, (*at, "[*]"), specials)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _expand(extra, stack, (*at, "*"), specials)
    if "type" not in out and "properties" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True  # a definition of any JSON value
    return out
