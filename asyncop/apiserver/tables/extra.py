"""Printer columns of the less common built-ins: jobs, cronjobs, daemonsets, nodes,
endpoints, persistentvolumeclaims and ingresses (kube's printers, simplified).

Invariant: like every printer column, cells never raise on partial objects.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from asyncop.apiserver.tables.cells import (
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
from asyncop.apiserver.tables.timefmt import human_duration, parse_time


def _condition(o: dict[str, Any], kind: str) -> bool:
    return any(as_dict(c).get("type") == kind and as_dict(c).get("status") == "True"
               for c in as_list(get(o, "status", "conditions")))


def _job_status(o: dict[str, Any]) -> str:
    for kind, text in (("Failed", "Failed"), ("Complete", "Complete"),
                       ("Suspended", "Suspended"), ("FailureTarget", "FailureTarget"),
                       ("SuccessCriteriaMet", "SuccessCriteriaMet")):
        if _condition(o, kind):
            return text
    return "Running"


def _job_duration(o: dict[str, Any], now: datetime) -> str:
    start = parse_time(get(o, "status", "startTime"))
    if start is None:
        return ""
    end = parse_time(get(o, "status", "completionTime")) or now
    return human_duration((end - start).total_seconds())


def _jobs() -> list[Column]:
    def completions(o: dict[str, Any], _n: datetime) -> str:
        want = get(o, "spec", "completions")
        succeeded = as_int(get(o, "status", "succeeded"))
        return f"{succeeded}/{as_int(want) if want is not None else 1}"

    return [
        name_column(),
        col("Status", "string", lambda o, _n: _job_status(o)),
        col("Completions", "string", completions),
        col("Duration", "string", _job_duration),
        age_column(),
        *workload_extra(),
    ]


def _cronjobs() -> list[Column]:
    def last(o: dict[str, Any], now: datetime) -> str:
        ts = get(o, "status", "lastScheduleTime")
        dt = parse_time(ts)
        return "<none>" if dt is None else human_duration((now - dt).total_seconds())

    return [
        name_column(),
        col("Schedule", "string", lambda o, _n: get(o, "spec", "schedule") or ""),
        col("Timezone", "string", lambda o, _n: get(o, "spec", "timeZone") or "<none>"),
        col("Suspend", "boolean", lambda o, _n: bool(get(o, "spec", "suspend"))),
        col("Active", "integer", lambda o, _n: len(as_list(get(o, "status", "active")))),
        col("Last Schedule", "string", last),
        age_column(),
        col("Containers", "string", lambda o, _n: _job_template(o, "name"), priority=1),
        col("Images", "string", lambda o, _n: _job_template(o, "image"), priority=1),
    ]


def _job_template(o: dict[str, Any], field: str) -> str:
    tpl = get(o, "spec", "jobTemplate")
    return containers(as_dict(tpl), field)


def _daemonsets() -> list[Column]:
    def node_selector(o: dict[str, Any], _n: datetime) -> str:
        sel = as_dict(get(o, "spec", "template", "spec", "nodeSelector"))
        return ",".join(f"{k}={v}" for k, v in sel.items()) or "<none>"

    def status(field: str) -> Callable[[dict[str, Any], datetime], int]:
        return lambda o, _n: as_int(get(o, "status", field))

    return [
        name_column(),
        col("Desired", "integer", status("desiredNumberScheduled")),
        col("Current", "integer", status("currentNumberScheduled")),
        col("Ready", "integer", status("numberReady")),
        col("Up-to-date", "integer", status("updatedNumberScheduled")),
        col("Available", "integer", status("numberAvailable")),
        col("Node Selector", "string", node_selector),
        age_column(),
        *workload_extra(),
    ]


def _nodes() -> list[Column]:
    def status(o: dict[str, Any], _n: datetime) -> str:
        for c in as_list(get(o, "status", "conditions")):
            if as_dict(c).get("type") == "Ready":
                text = {"True": "Ready", "False": "NotReady"}.get(str(as_dict(c).get("status")),
                                                                  "Unknown")
                break
        else:
            text = "Unknown"
        if get(o, "spec", "unschedulable"):
            text += ",SchedulingDisabled"
        return text

    def roles(o: dict[str, Any], _n: datetime) -> str:
        prefix = "node-role.kubernetes.io/"
        found = sorted(k[len(prefix):] for k in as_dict(meta(o).get("labels"))
                       if k.startswith(prefix) and k[len(prefix):])
        return ",".join(found) or "<none>"

    return [
        name_column(),
        col("Status", "string", status),
        col("Roles", "string", roles),
        age_column(),
        col("Version", "string", lambda o, _n: get(o, "status", "nodeInfo", "kubeletVersion")
            or ""),
    ]


def _endpoints() -> list[Column]:
    def endpoints(o: dict[str, Any], _n: datetime) -> str:
        out: list[str] = []
        for subset in as_list(o.get("subsets")):
            ports = [as_int(as_dict(p).get("port")) for p in as_list(as_dict(subset).get("ports"))]
            for addr in as_list(as_dict(subset).get("addresses")):
                ip = as_dict(addr).get("ip", "")
                out += [f"{ip}:{p}" for p in ports] if ports else [str(ip)]
        if len(out) > 3:
            return ",".join(out[:3]) + f" + {len(out) - 3} more..."
        return ",".join(out) or "<none>"

    return [name_column(), col("Endpoints", "string", endpoints), age_column()]


_ACCESS = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
           "ReadWriteOncePod": "RWOP"}


def _pvcs() -> list[Column]:
    def modes(o: dict[str, Any], _n: datetime) -> str:
        found = as_list(get(o, "status", "accessModes"))
        return ",".join(_ACCESS.get(str(m), str(m)) for m in found)

    return [
        name_column(),
        col("Status", "string", lambda o, _n: get(o, "status", "phase") or "Pending"),
        col("Volume", "string", lambda o, _n: get(o, "spec", "volumeName") or ""),
        col("Capacity", "string", lambda o, _n: get(o, "status", "capacity", "storage") or ""),
        col("Access Modes", "string", modes),
        col("StorageClass", "string", lambda o, _n: get(o, "spec", "storageClassName")
            or "<unset>"),
        col("VolumeAttributesClass", "string",
            lambda o, _n: get(o, "spec", "volumeAttributesClassName") or "<unset>"),
        age_column(),
        col("VolumeMode", "string", lambda o, _n: get(o, "spec", "volumeMode") or "Filesystem",
            priority=1),
    ]


def _ingresses() -> list[Column]:
    def hosts(o: dict[str, Any], _n: datetime) -> str:
        found = [str(as_dict(r).get("host")) for r in as_list(get(o, "spec", "rules"))
                 if as_dict(r).get("host")]
        return ",".join(found) or "*"

    def address(o: dict[str, Any], _n: datetime) -> str:
        found = []
        for ing in as_list(get(o, "status", "loadBalancer", "ingress")):
            value = as_dict(ing).get("ip") or as_dict(ing).get("hostname")
            if value:
                found.append(str(value))
        return ",".join(found)

    def ports(o: dict[str, Any], _n: datetime) -> str:
        return "80, 443" if as_list(get(o, "spec", "tls")) else "80"

    return [
        name_column(),
        col("Class", "string", lambda o, _n: get(o, "spec", "ingressClassName") or "<none>"),
        col("Hosts", "string", hosts),
        col("Address", "string", address),
        col("Ports", "string", ports),
        age_column(),
    ]


EXTRA_TABLES: dict[tuple[str, str], Callable[[], list[Column]]] = {
    ("batch", "jobs"): _jobs,
    ("batch", "cronjobs"): _cronjobs,
    ("apps", "daemonsets"): _daemonsets,
    ("", "nodes"): _nodes,
    ("", "endpoints"): _endpoints,
    ("", "persistentvolumeclaims"): _pvcs,
    ("networking.k8s.io", "ingresses"): _ingresses,
}
