"""Printer columns of the built-in kinds, as kube-apiserver's table printers show them.

Each entry of `BUILTIN_TABLES` (keyed by (group, plural)) builds the `Column`s for one kind:
pods, deployments, replicasets, statefulsets, services, namespaces, configmaps, secrets,
serviceaccounts, core and events.k8s.io events, leases, CRDs and RBAC objects.

Invariant: a column's `cell(obj, now)` never raises on partial objects: missing data prints
as kube prints it (`<none>`, `0`, `<unknown>`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncop.apiserver.tables_time import human_age

Cell = Callable[[dict[str, Any], datetime], Any]
_NAME_DESC = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DESC = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC."
)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    cell: Cell
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def name_column() -> Column:
    return Column("Name", "string", lambda o, _n: _meta(o).get("name", ""), "name", _NAME_DESC)


def age_column() -> Column:
    return Column(
        "Age", "date", lambda o, n: human_age(_meta(o).get("creationTimestamp"), n), "",
        _AGE_DESC,
    )


def _col(name: str, typ: str, cell: Cell, *, priority: int = 0, description: str = "") -> Column:
    return Column(name, typ, cell, "", description or name, priority)


def _selector_text(sel: Any) -> str:
    if not isinstance(sel, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in _dict(sel.get("matchLabels")).items()]
    for expr in _list(sel.get("matchExpressions")):
        op = str(_get(expr, "operator") or "")
        key = str(_get(expr, "key") or "")
        values = ",".join(str(v) for v in _list(_get(expr, "values")))
        if op == "In":
            parts.append(f"{key} in ({values})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def _containers(obj: dict[str, Any], field: str) -> str:
    cs = _list(_get(obj, "spec", "template", "spec", "containers"))
    return ",".join(str(_dict(c).get(field, "")) for c in cs) or "<none>"


def _workload_extra() -> list[Column]:
    return [
        _col("Containers", "string", lambda o, _n: _containers(o, "name"), priority=1),
        _col("Images", "string", lambda o, _n: _containers(o, "image"), priority=1),
        _col("Selector", "string", lambda o, _n: _selector_text(_get(o, "spec", "selector")),
             priority=1),
    ]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _terminated_text(term: dict[str, Any]) -> str:
    if term.get("reason"):
        return str(term["reason"])
    if term.get("signal"):
        return f"Signal:{term['signal']}"
    return f"ExitCode:{_int(term.get('exitCode'))}"


def _init_status(status: dict[str, Any], total: int) -> str | None:
    """`Init:...` while an init container has not completed (kube's pod printer)."""
    for i, cs in enumerate(_list(status.get("initContainerStatuses"))):
        state = _dict(_dict(cs).get("state"))
        term = _dict(state.get("terminated"))
        waiting = _dict(state.get("waiting"))
        if term and _int(term.get("exitCode")) == 0:
            continue
        if term:
            return "Init:" + _terminated_text(term)
        if waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return f"Init:{waiting['reason']}"
        return f"Init:{i}/{total}"
    return None


def _pod_status(o: dict[str, Any]) -> str:
    status = _dict(o.get("status"))
    reason = str(status.get("reason") or status.get("phase") or "Pending")
    init = _init_status(status, len(_list(_get(o, "spec", "initContainers"))))
    running = False
    if init is not None:
        reason = init
    else:
        for cs in reversed(_list(status.get("containerStatuses"))):
            state = _dict(_dict(cs).get("state"))
            waiting = _dict(state.get("waiting"))
            terminated = _dict(state.get("terminated"))
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated:
                reason = _terminated_text(terminated)
            elif "running" in state and _dict(cs).get("ready"):
                running = True
        if reason == "Completed" and running:
            ready = any(_dict(c).get("type") == "Ready" and _dict(c).get("status") == "True"
                        for c in _list(status.get("conditions")))
            reason = "Running" if ready else "NotReady"
    if _meta(o).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_ready(o: dict[str, Any]) -> str:
    total = len(_list(_get(o, "spec", "containers")))
    ready = sum(1 for cs in _list(_get(o, "status", "containerStatuses")) if _dict(cs).get("ready"))
    return f"{ready}/{total}"


def _pod_restarts(o: dict[str, Any]) -> str:
    statuses = _list(_get(o, "status", "containerStatuses"))
    return str(sum(_int(_dict(cs).get("restartCount")) for cs in statuses))


def _pods() -> list[Column]:
    return [
        name_column(),
        _col("Ready", "string", lambda o, _n: _pod_ready(o)),
        _col("Status", "string", lambda o, _n: _pod_status(o)),
        _col("Restarts", "string", lambda o, _n: _pod_restarts(o)),
        age_column(),
        _col("IP", "string", lambda o, _n: _get(o, "status", "podIP") or "<none>", priority=1),
        _col("Node", "string", lambda o, _n: _get(o, "spec", "nodeName") or "<none>", priority=1),
        _col("Nominated Node", "string",
             lambda o, _n: _get(o, "status", "nominatedNodeName") or "<none>", priority=1),
        _col("Readiness Gates", "string", lambda o, _n: "<none>", priority=1),
    ]


def _deployments() -> list[Column]:
    return [
        name_column(),
        _col("Ready", "string", lambda o, _n: (
            f"{_int(_get(o, 'status', 'readyReplicas'))}/{_int(_get(o, 'spec', 'replicas'))}")),
        _col("Up-to-date", "integer", lambda o, _n: _int(_get(o, "status", "updatedReplicas"))),
        _col("Available", "integer", lambda o, _n: _int(_get(o, "status", "availableReplicas"))),
        age_column(),
        *_workload_extra(),
    ]


def _replicasets() -> list[Column]:
    return [
        name_column(),
        _col("Desired", "integer", lambda o, _n: _int(_get(o, "spec", "replicas"))),
        _col("Current", "integer", lambda o, _n: _int(_get(o, "status", "replicas"))),
        _col("Ready", "integer", lambda o, _n: _int(_get(o, "status", "readyReplicas"))),
        age_column(),
        *_workload_extra(),
    ]


def _statefulsets() -> list[Column]:
    return [
        name_column(),
        _col("Ready", "string", lambda o, _n: (
            f"{_int(_get(o, 'status', 'readyReplicas'))}/{_int(_get(o, 'spec', 'replicas'))}")),
        age_column(),
        _col("Containers", "string", lambda o, _n: _containers(o, "name"), priority=1),
        _col("Images", "string", lambda o, _n: _containers(o, "image"), priority=1),
    ]


def _external_ip(o: dict[str, Any]) -> str:
    spec = _dict(o.get("spec"))
    ips = [str(ip) for ip in _list(spec.get("externalIPs"))]
    if spec.get("type") == "LoadBalancer":
        for ing in _list(_get(o, "status", "loadBalancer", "ingress")):
            ip = _dict(ing).get("ip") or _dict(ing).get("hostname")
            if ip:
                ips.append(str(ip))
        return ",".join(ips) or "<pending>"
    if spec.get("type") == "ExternalName":
        return str(spec.get("externalName") or "<none>")
    return ",".join(ips) or "<none>"


def _ports(o: dict[str, Any]) -> str:
    parts = []
    for p in _list(_get(o, "spec", "ports")):
        p = _dict(p)
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        parts.append(f"{p.get('port', '')}{node}/{p.get('protocol') or 'TCP'}")
    return ",".join(parts) or "<none>"


def _services() -> list[Column]:
    return [
        name_column(),
        _col("Type", "string", lambda o, _n: _get(o, "spec", "type") or "ClusterIP"),
        _col("Cluster-IP", "string", lambda o, _n: _get(o, "spec", "clusterIP") or "<none>"),
        _col("External-IP", "string", lambda o, _n: _external_ip(o)),
        _col("Port(s)", "string", lambda o, _n: _ports(o)),
        age_column(),
        _col("Selector", "string", lambda o, _n: ",".join(
            f"{k}={v}" for k, v in _dict(_get(o, "spec", "selector")).items()) or "<none>",
            priority=1),
    ]


def _namespaces() -> list[Column]:
    return [
        name_column(),
        _col("Status", "string", lambda o, _n: _get(o, "status", "phase") or "Active"),
        age_column(),
    ]


def _configmaps() -> list[Column]:
    return [
        name_column(),
        _col("Data", "integer", lambda o, _n: len(_dict(o.get("data")))
             + len(_dict(o.get("binaryData")))),
        age_column(),
    ]


def _secrets() -> list[Column]:
    return [
        name_column(),
        _col("Type", "string", lambda o, _n: o.get("type") or "Opaque"),
        _col("Data", "integer", lambda o, _n: len(_dict(o.get("data")))),
        age_column(),
    ]


def _serviceaccounts() -> list[Column]:
    return [
        name_column(),
        _col("Secrets", "integer", lambda o, _n: len(_list(o.get("secrets")))),
        age_column(),
    ]


def _event_last_seen(o: dict[str, Any], now: datetime) -> str:
    ts = (o.get("lastTimestamp") or o.get("deprecatedLastTimestamp")
          or _get(o, "series", "lastObservedTime") or o.get("eventTime")
          or _meta(o).get("creationTimestamp"))
    return human_age(ts, now)


def _event_object(o: dict[str, Any]) -> str:
    ref = _dict(o.get("involvedObject") or o.get("regarding"))
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _events() -> list[Column]:
    return [
        _col("Last Seen", "string", _event_last_seen),
        _col("Type", "string", lambda o, _n: o.get("type") or ""),
        _col("Reason", "string", lambda o, _n: o.get("reason") or ""),
        _col("Object", "string", lambda o, _n: _event_object(o)),
        _col("Message", "string", lambda o, _n: o.get("message") or o.get("note") or ""),
        Column("Name", "string", lambda o, _n: _meta(o).get("name", ""), "name", _NAME_DESC, 1),
    ]


def _leases() -> list[Column]:
    return [
        name_column(),
        _col("Holder", "string", lambda o, _n: _get(o, "spec", "holderIdentity") or ""),
        age_column(),
    ]


def _created_at() -> list[Column]:
    return [
        name_column(),
        Column("Created At", "date", lambda o, _n: _meta(o).get("creationTimestamp"), "",
               _AGE_DESC),
    ]


def _bindings() -> list[Column]:
    def role(o: dict[str, Any], _n: datetime) -> str:
        ref = _dict(o.get("roleRef"))
        return f"{ref.get('kind', '')}/{ref.get('name', '')}"

    return [name_column(), _col("Role", "string", role), age_column()]


BUILTIN_TABLES: dict[tuple[str, str], Callable[[], list[Column]]] = {
    ("", "pods"): _pods,
    ("apps", "deployments"): _deployments,
    ("apps", "replicasets"): _replicasets,
    ("apps", "statefulsets"): _statefulsets,
    ("", "services"): _services,
    ("", "namespaces"): _namespaces,
    ("", "configmaps"): _configmaps,
    ("", "secrets"): _secrets,
    ("", "serviceaccounts"): _serviceaccounts,
    ("", "events"): _events,
    ("events.k8s.io", "events"): _events,
    ("coordination.k8s.io", "leases"): _leases,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _created_at,
    ("rbac.authorization.k8s.io", "roles"): _created_at,
    ("rbac.authorization.k8s.io", "clusterroles"): _created_at,
    ("rbac.authorization.k8s.io", "rolebindings"): _bindings,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): _bindings,
}
