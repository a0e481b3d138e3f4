"""Server-side defaults of built-in kinds (the subset operators and tools rely on).

`defaults(rt, obj, old)` runs on create (old is None) and on main-endpoint updates, before
admission. Invariant: only fields that are absent are filled in; a client-provided value is
never overwritten (except Secret `stringData`, which is write-only and folded into `data`).
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from asyncop.apiserver import extensions
from asyncop.apiserver.resources import ResourceType


def defaults(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    fn = _DEFAULTS.get(rt.gr)
    if fn is not None:
        fn(obj, old)


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _namespace(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    meta = obj["metadata"]
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    labels["kubernetes.io/metadata.name"] = meta["name"]
    if old is None:
        spec = _spec(obj)
        spec.setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
    else:
        obj["spec"] = old.get("spec", {})
        obj["status"] = old.get("status", {})


def _secret(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = obj["data"] = {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def _pod(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Spec defaults apply to every write (as decoding does); status only on create."""
    spec = _spec(obj)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("serviceAccountName", "default")
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if not isinstance(container, dict):
            continue
        image = str(container.get("image", ""))
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})
    if old is None:
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}


def _workload(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)


def _deployment(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    _workload(obj, old)
    spec = _spec(obj)
    spec.setdefault("progressDeadlineSeconds", 600)
    spec.setdefault("strategy", {"type": "RollingUpdate",
                                 "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})


def _replicaset(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    _spec(obj).setdefault("replicas", 1)


def _service(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    spec = _spec(obj)
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])
    if old is None:
        obj["status"] = {"loadBalancer": {}}


def _crd(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    status = old.get("status") if old is not None else None
    obj["status"] = orjson.loads(orjson.dumps(status)) if isinstance(status, dict) else {}
    extensions.default_crd(obj)


_DEFAULTS: dict[tuple[str, str], Any] = {
    ("", "namespaces"): _namespace,
    ("", "secrets"): _secret,
    ("", "pods"): _pod,
    ("", "services"): _service,
    ("apps", "deployments"): _deployment,
    ("apps", "statefulsets"): _workload,
    ("apps", "replicasets"): _replicaset,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _crd,
}
