"""Printer columns of the built-in kinds, as kube-apiserver's table printers show them.

Each entry of `BUILTIN_TABLES` (keyed by (group, plural)) builds the `Column`s for one kind:
pods, deployments, replicasets, statefulsets, services, namespaces, configmaps, secrets,
serviceaccounts, core and events.k8s.io events, leases, CRDs and RBAC objects (plus the
kinds of `extra`).

Invariant: a column's `cell(obj, now)` never raises on partial objects: missing data prints
as kube prints it (`<none>`, `0`, `<unknown>`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from asyncop.apiserver.tables.cells import (
    AGE_DESC,
    NAME_DESC,
    Column,
    age_column,
    as_dict,
    as_int,
    as_list,
    col,
    containers,
    get,
    meta,
    name_column,
    workload_extra,
)
from asyncop.apiserver.tables.extra import EXTRA_TABLES
from asyncop.apiserver.tables.timefmt import human_age


def _terminated_text(term: dict[str, Any]) -> str:
    if term.get("reason"):
        return str(term["reason"])
    if term.get("signal"):
        return f"Signal:{term['signal']}"
    return f"ExitCode:{as_int(term.get('exitCode'))}"


def _init_status(status: dict[str, Any], total: int) -> str | None:
    """`Init:...` while an init container has not completed (kube's pod printer)."""
    for i, cs in enumerate(as_list(status.get("initContainerStatuses"))):
        state = as_dict(as_dict(cs).get("state"))
        term = as_dict(state.get("terminated"))
        waiting = as_dict(state.get("waiting"))
        if term and as_int(term.get("exitCode")) == 0:
            continue
        if term:
            return "Init:" + _terminated_text(term)
        if waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return f"Init:{waiting['reason']}"
        return f"Init:{i}/{total}"
    return None


def _pod_status(o: dict[str, Any]) -> str:
    status = as_dict(o.get("status"))
    reason = str(status.get("reason") or status.get("phase") or "Pending")
    init = _init_status(status, len(as_list(get(o, "spec", "initContainers"))))
    running = False
    if init is not None:
        reason = init
    else:
        for cs in reversed(as_list(status.get("containerStatuses"))):
            state = as_dict(as_dict(cs).get("state"))
            waiting = as_dict(state.get("waiting"))
            terminated = as_dict(state.get("terminated"))
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated:
                reason = _terminated_text(terminated)
            elif "running" in state and as_dict(cs).get("ready"):
                running = True
        if reason == "Completed" and running:
            ready = any(as_dict(c).get("type") == "Ready" and as_dict(c).get("status") == "True"
                        for c in as_list(status.get("conditions")))
            reason = "Running" if ready else "NotReady"
    if meta(o).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_ready(o: dict[str, Any]) -> str:
    total = len(as_list(get(o, "spec", "containers")))
    statuses = as_list(get(o, "status", "containerStatuses"))
    ready = sum(1 for cs in statuses if as_dict(cs).get("ready"))
    return f"{ready}/{total}"


def _pod_restarts(o: dict[str, Any]) -> str:
    statuses = as_list(get(o, "status", "containerStatuses"))
    return str(sum(as_int(as_dict(cs).get("restartCount")) for cs in statuses))


def _pods() -> list[Column]:
    return [
        name_column(),
        col("Ready", "string", lambda o, _n: _pod_ready(o)),
        col("Status", "string", lambda o, _n: _pod_status(o)),
        col("Restarts", "string", lambda o, _n: _pod_restarts(o)),
        age_column(),
        col("IP", "string", lambda o, _n: get(o, "status", "podIP") or "<none>", priority=1),
        col("Node", "string", lambda o, _n: get(o, "spec", "nodeName") or "<none>", priority=1),
        col("Nominated Node", "string",
             lambda o, _n: get(o, "status", "nominatedNodeName") or "<none>", priority=1),
        col("Readiness Gates", "string", lambda o, _n: "<none>", priority=1),
    ]


def _deployments() -> list[Column]:
    return [
        name_column(),
        col("Ready", "string", lambda o, _n: (
            f"{as_int(get(o, 'status', 'readyReplicas'))}/{as_int(get(o, 'spec', 'replicas'))}")),
        col("Up-to-date", "integer", lambda o, _n: as_int(get(o, "status", "updatedReplicas"))),
        col("Available", "integer", lambda o, _n: as_int(get(o, "status", "availableReplicas"))),
        age_column(),
        *workload_extra(),
    ]


def _replicasets() -> list[Column]:
    return [
        name_column(),
        col("Desired", "integer", lambda o, _n: as_int(get(o, "spec", "replicas"))),
        col("Current", "integer", lambda o, _n: as_int(get(o, "status", "replicas"))),
        col("Ready", "integer", lambda o, _n: as_int(get(o, "status", "readyReplicas"))),
        age_column(),
        *workload_extra(),
    ]


def _statefulsets() -> list[Column]:
    return [
        name_column(),
        col("Ready", "string", lambda o, _n: (
            f"{as_int(get(o, 'status', 'readyReplicas'))}/{as_int(get(o, 'spec', 'replicas'))}")),
        age_column(),
        col("Containers", "string", lambda o, _n: containers(o, "name"), priority=1),
        col("Images", "string", lambda o, _n: containers(o, "image"), priority=1),
    ]


def _external_ip(o: dict[str, Any]) -> str:
    spec = as_dict(o.get("spec"))
    ips = [str(ip) for ip in as_list(spec.get("externalIPs"))]
    if spec.get("type") == "LoadBalancer":
        for ing in as_list(get(o, "status", "loadBalancer", "ingress")):
            ip = as_dict(ing).get("ip") or as_dict(ing).get("hostname")
            if ip:
                ips.append(str(ip))
        return ",".join(ips) or "<pending>"
    if spec.get("type") == "ExternalName":
        return str(spec.get("externalName") or "<none>")
    return ",".join(ips) or "<none>"


def _ports(o: dict[str, Any]) -> str:
    parts = []
    for p in as_list(get(o, "spec", "ports")):
        p = as_dict(p)
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        parts.append(f"{p.get('port', '')}{node}/{p.get('protocol') or 'TCP'}")
    return ",".join(parts) or "<none>"


def _services() -> list[Column]:
    return [
        name_column(),
        col("Type", "string", lambda o, _n: get(o, "spec", "type") or "ClusterIP"),
        col("Cluster-IP", "string", lambda o, _n: get(o, "spec", "clusterIP") or "<none>"),
        col("External-IP", "string", lambda o, _n: _external_ip(o)),
        col("Port(s)", "string", lambda o, _n: _ports(o)),
        age_column(),
        col("Selector", "string", lambda o, _n: ",".join(
            f"{k}={v}" for k, v in as_dict(get(o, "spec", "selector")).items()) or "<none>",
            priority=1),
    ]


def _namespaces() -> list[Column]:
    return [
        name_column(),
        col("Status", "string", lambda o, _n: get(o, "status", "phase") or "Active"),
        age_column(),
    ]


def _configmaps() -> list[Column]:
    return [
        name_column(),
        col("Data", "integer", lambda o, _n: len(as_dict(o.get("data")))
             + len(as_dict(o.get("binaryData")))),
        age_column(),
    ]


def _secrets() -> list[Column]:
    return [
        name_column(),
        col("Type", "string", lambda o, _n: o.get("type") or "Opaque"),
        col("Data", "integer", lambda o, _n: len(as_dict(o.get("data")))),
        age_column(),
    ]


def _serviceaccounts() -> list[Column]:
    return [
        name_column(),
        col("Secrets", "integer", lambda o, _n: len(as_list(o.get("secrets")))),
        age_column(),
    ]


def _event_last_seen(o: dict[str, Any], now: datetime) -> str:
    ts = (o.get("lastTimestamp") or o.get("deprecatedLastTimestamp")
          or get(o, "series", "lastObservedTime") or o.get("eventTime")
          or meta(o).get("creationTimestamp"))
    return human_age(ts, now)


def _event_object(o: dict[str, Any]) -> str:
    ref = as_dict(o.get("involvedObject") or o.get("regarding"))
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _events() -> list[Column]:
    return [
        col("Last Seen", "string", _event_last_seen),
        col("Type", "string", lambda o, _n: o.get("type") or ""),
        col("Reason", "string", lambda o, _n: o.get("reason") or ""),
        col("Object", "string", lambda o, _n: _event_object(o)),
        col("Message", "string", lambda o, _n: o.get("message") or o.get("note") or ""),
        Column("Name", "string", lambda o, _n: meta(o).get("name", ""), "name", NAME_DESC, 1),
    ]


def _leases() -> list[Column]:
    return [
        name_column(),
        col("Holder", "string", lambda o, _n: get(o, "spec", "holderIdentity") or ""),
        age_column(),
    ]


def _created_at() -> list[Column]:
    return [
        name_column(),
        Column("Created At", "date", lambda o, _n: meta(o).get("creationTimestamp"), "",
               AGE_DESC),
    ]


def _bindings() -> list[Column]:
    def role(o: dict[str, Any], _n: datetime) -> str:
        ref = as_dict(o.get("roleRef"))
        return f"{ref.get('kind', '')}/{ref.get('name', '')}"

    return [name_column(), col("Role", "string", role), age_column()]


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
    **EXTRA_TABLES,
}
