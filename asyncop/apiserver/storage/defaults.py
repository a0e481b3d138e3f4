"""Server-side defaults of built-in kinds (the subset operators and tools rely on).

`defaults(rt, obj, old)` runs on create (old is None) and on main-endpoint updates, before
admission. Invariant: only fields that are absent are filled in; a client-provided value is
never overwritten (except Secret `stringData`, which is write-only and folded into `data`).
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from asyncop.apiserver.core import crds
from asyncop.apiserver.core import webhookconfig as webhook_config
from asyncop.apiserver.core.resources import ResourceType


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


def _pod_spec(spec: dict[str, Any], *, restart_policy: bool = True) -> None:
    """kube's PodSpec defaults (SetDefaults_PodSpec/Container), shared by pods and templates.
    Job templates keep an absent restartPolicy absent: kube would default it to Always and
    then reject the Job, while these simulated Jobs would silently run with it."""
    if restart_policy:
        spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for container in _list(spec.get("containers")) + _list(spec.get("initContainers")):
        if not isinstance(container, dict):
            continue
        image = str(container.get("image", ""))
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})
        for port in _list(container.get("ports")):
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _pod(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Spec defaults apply to every write (as decoding does); status only on create."""
    spec = _spec(obj)
    _pod_spec(spec)
    spec.setdefault("serviceAccountName", "default")  # the ServiceAccount admission plugin
    if old is None:
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}


def _template(spec: dict[str, Any], *, restart_policy: bool = True) -> None:
    """Pod template defaults of a workload (its `spec.template.spec`, when present)."""
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        _pod_spec(template["spec"], restart_policy=restart_policy)


def _job_spec(spec: dict[str, Any]) -> None:
    """SetDefaults_Job (server 1.33): completions/parallelism 1 unless a work queue,
    backoffLimit 6, NonIndexed, not suspended, pods replaced once terminated or failed."""
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if not spec.get("podFailurePolicy"):
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    _template(spec, restart_policy=False)


def _job(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    _job_spec(_spec(obj))


def _cronjob(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """SetDefaults_CronJob; the Job template gets pod template defaults only (as in kube,
    where the Job-level defaults are applied when a Job is created from it)."""
    spec = _spec(obj)
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict) and isinstance(job_template.get("spec"), dict):
        _template(job_template["spec"], restart_policy=False)


def _workload(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _statefulset(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    _workload(obj, old)
    spec = _spec(obj)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if isinstance(strategy, dict) and strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        strategy.setdefault("rollingUpdate", {"partition": 0})


def _daemonset(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    spec = _spec(obj)
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if isinstance(strategy, dict) and strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        strategy.setdefault("rollingUpdate", {"maxUnavailable": 1, "maxSurge": 0})
    _template(spec)


def _deployment(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    _workload(obj, old)
    spec = _spec(obj)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if isinstance(strategy, dict) and strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        rolling = strategy.setdefault("rollingUpdate", {})
        if isinstance(rolling, dict):
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")


def _replicaset(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    _template(spec)


def _service(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    spec = _spec(obj)
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec.get("type") != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    for port in _list(spec.get("ports")):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])
    if old is None:
        obj["status"] = {"loadBalancer": {}}


def _crd(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    status = old.get("status") if old is not None else None
    obj["status"] = orjson.loads(orjson.dumps(status)) if isinstance(status, dict) else {}
    crds.default_crd(obj)


_DEFAULTS: dict[tuple[str, str], Any] = {
    ("", "namespaces"): _namespace,
    ("", "secrets"): _secret,
    ("", "pods"): _pod,
    ("", "services"): _service,
    ("apps", "deployments"): _deployment,
    ("apps", "statefulsets"): _statefulset,
    ("apps", "daemonsets"): _daemonset,
    ("apps", "replicasets"): _replicaset,
    ("batch", "jobs"): _job,
    ("batch", "cronjobs"): _cronjob,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _crd,
    webhook_config.VALIDATING_GR: lambda obj, _old: webhook_config.defaults(obj, False),
    webhook_config.MUTATING_GR: lambda obj, _old: webhook_config.defaults(obj, True),
}
