"""Merge schema of built-in kinds: which lists are merged by key, which are sets.

Kubernetes tags list fields of its Go types with `patchMergeKey`/`patchStrategy` (strategic
merge patch) and `listType=map|set` (server-side apply). This module is the small, hand-written
subset of those tags that the embedded API server needs for the kinds real clients patch
(Pods and the pod template of workloads, Services, metadata of every kind, conditions).

Custom resources get the metadata rules plus, when the caller passes the CRD version's
openAPIV3Schema, its `x-kubernetes-list-type: map|set` lists (server-side apply only: custom
resources do not accept strategic merge patches). Ports are keyed by port and protocol for
server-side apply (`Node.key_defaults`), by port alone for strategic merge, as in Kubernetes.

Invariants: a `Node` is immutable; a list field without a `Node` (or with a plain one) is
atomic: patches and applies replace it as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, slots=True)
class Node:
    """Merge information for one field.

    `fields` are the children of a struct (or of each item of a keyed list); `key` makes a
    list of maps associative (merged item by item on that field); `set_list` makes a list of
    scalars a set (merged by union). Neither: the value is atomic.
    """

    fields: Mapping[str, Node] = field(default_factory=lambda: MappingProxyType({}))
    key: str | None = None
    set_list: bool = False
    #: further key fields of a keyed list for server-side apply, with their defaults
    #: (container ports are keyed by containerPort *and* protocol, TCP when absent);
    #: strategic merge patch matches on `key` alone, as Kubernetes does.
    key_defaults: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def child(self, name: str) -> Node | None:
        return self.fields.get(name)

    def identity(self, item: Mapping[str, object], *, full: bool) -> dict[str, object]:
        """The key fields of a list item (`full`: with the extra SSA key fields)."""
        assert self.key is not None
        ident = {self.key: item.get(self.key)}
        if full:
            for name, default in self.key_defaults.items():
                ident[name] = item.get(name, default)
        return ident


def _struct(**children: Node) -> Node:
    return Node(fields=MappingProxyType(children))


def _keyed(key: str, **children: Node) -> Node:
    return Node(fields=MappingProxyType(children), key=key)


def _ports(key: str) -> Node:
    """Ports: keyed by port number and protocol (TCP when absent)."""
    return Node(key=key, key_defaults=MappingProxyType({"protocol": "TCP"}))


SET = Node(set_list=True)
CONDITIONS = _keyed("type")

METADATA = _struct(finalizers=SET, ownerReferences=_keyed("uid"))

_CONTAINER = {
    "ports": _ports("containerPort"),
    "env": _keyed("name"),
    "volumeMounts": _keyed("mountPath"),
    "volumeDevices": _keyed("devicePath"),
}

POD_SPEC = _struct(
    containers=_keyed("name", **_CONTAINER),
    initContainers=_keyed("name", **_CONTAINER),
    ephemeralContainers=_keyed("name", **_CONTAINER),
    volumes=_keyed("name"),
    imagePullSecrets=_keyed("name"),
    hostAliases=_keyed("ip"),
    topologySpreadConstraints=_keyed("topologyKey"),
    resourceClaims=_keyed("name"),
    schedulingGates=_keyed("name"),
)

POD_TEMPLATE = _struct(metadata=METADATA, spec=POD_SPEC)

_WORKLOAD = _struct(
    metadata=METADATA,
    spec=_struct(template=POD_TEMPLATE),
    status=_struct(conditions=CONDITIONS),
)

_DEFAULT = _struct(metadata=METADATA)

KIND_SCHEMAS: Mapping[str, Node] = MappingProxyType(
    {
        "Pod": _struct(
            metadata=METADATA,
            spec=POD_SPEC,
            status=_struct(
                conditions=CONDITIONS, podIPs=_keyed("ip"), hostIPs=_keyed("ip")
            ),
        ),
        "PodTemplate": _struct(metadata=METADATA, template=POD_TEMPLATE),
        "Deployment": _WORKLOAD,
        "ReplicaSet": _WORKLOAD,
        "StatefulSet": _WORKLOAD,
        "DaemonSet": _WORKLOAD,
        "ReplicationController": _WORKLOAD,
        "Job": _WORKLOAD,
        "CronJob": _struct(
            metadata=METADATA,
            spec=_struct(jobTemplate=_struct(metadata=METADATA, spec=_struct(
                template=POD_TEMPLATE))),
        ),
        "Service": _struct(
            metadata=METADATA,
            spec=_struct(ports=_ports("port")),
            status=_struct(conditions=CONDITIONS),
        ),
        "Namespace": _struct(metadata=METADATA, status=_struct(conditions=CONDITIONS)),
        "Node": _struct(
            metadata=METADATA,
            status=_struct(conditions=CONDITIONS, addresses=_keyed("type")),
        ),
        "CustomResourceDefinition": _struct(
            metadata=METADATA, status=_struct(conditions=CONDITIONS)
        ),
    }
)


def schema_for(kind: str, openapi: Mapping[str, Any] | None = None) -> Node:
    """The merge schema of `kind`; metadata-only for kinds without list merge rules.

    `openapi` (a CRD version's openAPIV3Schema) adds the custom resource's list types:
    `x-kubernetes-list-type: map` lists merge by `x-kubernetes-list-map-keys`, `set` lists
    are sets, other lists stay atomic.
    """
    if openapi is None:
        return KIND_SCHEMAS.get(kind, _DEFAULT)
    derived = _from_openapi(openapi)
    fields = dict(derived.fields) if derived is not None else {}
    fields["metadata"] = METADATA
    return Node(fields=MappingProxyType(fields))


def _from_openapi(schema: Any) -> Node | None:
    """The Node of one openAPI schema, or None when nothing below it merges specially."""
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "array" or "items" in schema:
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set":
            return SET
        keys = schema.get("x-kubernetes-list-map-keys") or []
        if list_type != "map" or not keys:
            return None
        raw_items = schema.get("items")
        items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
        item = _from_openapi(items)
        raw_props = items.get("properties")
        props: Mapping[str, Any] = raw_props if isinstance(raw_props, Mapping) else {}
        defaults = {
            k: (props.get(k) or {}).get("default") if isinstance(props.get(k), Mapping) else None
            for k in keys[1:]
        }
        return Node(fields=item.fields if item is not None else MappingProxyType({}),
                    key=str(keys[0]), key_defaults=MappingProxyType(defaults))
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    children = {str(k): node for k, v in properties.items()
                if (node := _from_openapi(v)) is not None}
    return Node(fields=MappingProxyType(children)) if children else None
