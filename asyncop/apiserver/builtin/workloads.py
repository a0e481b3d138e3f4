"""apps/v1 workloads: Deployment, ReplicaSet, StatefulSet, DaemonSet — defaults and validation.

Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import Obj, as_dict, as_list, spec_of
from asyncop.apiserver.builtin.pods import template_defaults
from asyncop.apiserver.core.errors import cause, quote

DEPLOYMENTS = ("apps", "deployments")
REPLICASETS = ("apps", "replicasets")
STATEFULSETS = ("apps", "statefulsets")
DAEMONSETS = ("apps", "daemonsets")


def _workload_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    template_defaults(spec)


def _statefulset_defaults(obj: Obj, old: Obj | None) -> None:
    _workload_defaults(obj, old)
    spec = spec_of(obj)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if isinstance(strategy, dict) and strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        strategy.setdefault("rollingUpdate", {"partition": 0})


def _daemonset_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if isinstance(strategy, dict) and strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        strategy.setdefault("rollingUpdate", {"maxUnavailable": 1, "maxSurge": 0})
    template_defaults(spec)


def _deployment_defaults(obj: Obj, old: Obj | None) -> None:
    _workload_defaults(obj, old)
    spec = spec_of(obj)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if isinstance(strategy, dict) and strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        rolling = strategy.setdefault("rollingUpdate", {})
        if isinstance(rolling, dict):
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")


def _replicaset_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    template_defaults(spec)


def selector_matches(selector: Obj, labels: Obj) -> bool:
    for label, value in as_dict(selector.get("matchLabels")).items():
        if labels.get(label) != value:
            return False
    for expr in as_list(selector.get("matchExpressions")):
        expr = as_dict(expr)
        key, op = expr.get("key"), expr.get("operator")
        values = as_list(expr.get("values"))
        if not isinstance(key, str):
            return False
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _workload(obj: Obj, old: Obj | None) -> list[StatusCause]:
    spec = as_dict(obj.get("spec"))
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (selector.get("matchLabels")
                                               or selector.get("matchExpressions")):
        return [cause("spec.selector", "FieldValueRequired", "Required value")]
    labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    out: list[StatusCause] = []
    if not selector_matches(selector, labels):
        rendered = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
        out.append(cause("spec.template.metadata.labels", "FieldValueInvalid",
                         f"Invalid value: map[string]string{{{rendered}}}: `selector` does not "
                         "match template `labels`"))
    if old is not None:
        old_selector = as_dict(old.get("spec")).get("selector")
        if old_selector is not None and old_selector != selector:
            out.append(cause("spec.selector", "FieldValueInvalid",
                             "Invalid value: field is immutable"))
    replicas = spec.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or replicas < 0):
        out.append(cause("spec.replicas", "FieldValueInvalid",
                         f"Invalid value: {quote(replicas)}: must be greater than or equal to 0"))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {
    DEPLOYMENTS: _deployment_defaults,
    REPLICASETS: _replicaset_defaults,
    STATEFULSETS: _statefulset_defaults,
    DAEMONSETS: _daemonset_defaults,
}
VALIDATORS: dict[tuple[str, str], Any] = {
    DEPLOYMENTS: _workload, REPLICASETS: _workload, STATEFULSETS: _workload,
    DAEMONSETS: _workload,
}
