"""apps/v1 workloads: Deployment, ReplicaSet, DaemonSet — kube's defaults
(pkg/apis/apps/v1/defaults.go) and validation (pkg/apis/apps/validation); StatefulSets,
which share the selector and template rules below, are `statefulsets.py`.

Every workload needs a non-empty selector that matches its template's labels (immutable on
update), a template with `restartPolicy: Always` and no activeDeadlineSeconds, non-negative
counts; the template's pod spec is validated like a pod's (`podspec.pod_template`), its
errors under `spec.template.spec`. Rolling updates may not have both maxUnavailable and
maxSurge at zero, percentages are at most 100%, a Deployment's progress deadline exceeds
its minReadySeconds. Messages are kube's, in its order. A Deployment's or ReplicaSet's
spec outside its template found valid (selector parsing) is remembered by its JSON text,
and then only the template's rules run (`knownvalid`). Invariant: defaults fill only
absent fields; validation is pure.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import (
    IMMUTABLE_MSG,
    is_label_value,
    is_qualified_name,
    is_valid_percent,
)
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    each,
    forbidden,
    invalid,
    label_selector,
    nonnegative,
    not_supported,
    required,
    selector_is_empty,
    selector_matches,
    spec_of,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_int_or_string, go_label_selector, go_string_map
from asyncop.apiserver.builtin.knownvalid import KnownAnswers, KnownValid, memory_key
from asyncop.apiserver.builtin.poddefaults import template_defaults
from asyncop.apiserver.builtin.podspec import pod_template

DEPLOYMENTS = ("apps", "deployments")
REPLICASETS = ("apps", "replicasets")
DAEMONSETS = ("apps", "daemonsets")


# --- defaults ----------------------------------------------------------------------------------

def _rolling(strategy: Any, defaults: dict[str, Any]) -> None:
    """A rolling strategy's type (when empty) and its rollingUpdate fields."""
    if not isinstance(strategy, dict):
        return
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        if isinstance(rolling, dict):
            for key, value in defaults.items():
                rolling.setdefault(key, value)


def _deployment_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    _rolling(spec.setdefault("strategy", {}), {"maxUnavailable": "25%", "maxSurge": "25%"})
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    template_defaults(spec)


def _replicaset_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    template_defaults(spec)


def _daemonset_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    _rolling(spec.setdefault("updateStrategy", {}), {"maxUnavailable": 1, "maxSurge": 0})
    spec.setdefault("revisionHistoryLimit", 10)
    template_defaults(spec)


# --- shared rules ------------------------------------------------------------------------------

_PARSES: KnownAnswers[bool] = KnownAnswers()


def selector_parses(selector: Any) -> bool:
    """Whether metav1.LabelSelectorAsSelector accepts the selector (else kube skips the
    template checks and reports the selector). A pure function of the selector, which every
    write of a workload repeats: remembered by its JSON text (`knownvalid`)."""
    return _PARSES.answer(memory_key(selector), lambda: _selector_parses(selector))


def _selector_parses(selector: Any) -> bool:
    """`selector_parses`, computed."""
    sel = as_dict(selector)
    for key, value in as_dict(sel.get("matchLabels")).items():
        if is_qualified_name(str(key)) or is_label_value(as_str(value)):
            return False
    for expr in as_list(sel.get("matchExpressions")):
        expr = as_dict(expr)
        op, values = expr.get("operator"), as_list(expr.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                return False
        elif op in ("Exists", "DoesNotExist"):
            if values:
                return False
        else:
            return False
        if is_qualified_name(as_str(expr.get("key"))) or any(
                is_label_value(as_str(v)) for v in values):
            return False
    return True


def selector_rules(spec: Obj, kind: str) -> Causes:
    """The selector rules of Deployments, ReplicaSets and StatefulSets."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [required("spec.selector")]
    out = label_selector(selector, "spec.selector")
    if selector_is_empty(selector):
        out.append(invalid("spec.selector", go_label_selector(selector),
                           f"empty selector is invalid for {kind}"))
    return out


def template_labels_match(spec: Obj, path: str = "spec.template") -> Causes:
    """The template must carry the labels the selector asks for (a missing selector selects
    nothing; an empty one everything)."""
    selector = spec.get("selector")
    template_labels = as_dict(as_dict(spec.get("template")).get("metadata")).get("labels")
    if isinstance(selector, dict) and selector_is_empty(selector):
        return []
    if isinstance(selector, dict) and selector_matches(selector, template_labels):
        return []
    return [invalid(f"{path}.metadata.labels", Raw(go_string_map(template_labels)),
                    "`selector` does not match template `labels`")]


def always_restart(spec: Obj, kind: str, *, deadline_forbidden: bool = True) -> Causes:
    pod = as_dict(as_dict(spec.get("template")).get("spec"))
    out: Causes = []
    restart = as_str(pod.get("restartPolicy"))
    if restart != "Always":
        out.append(not_supported("spec.template.spec.restartPolicy", restart, ("Always",)))
    if pod.get("activeDeadlineSeconds") is not None and deadline_forbidden:
        out.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                             f"activeDeadlineSeconds in {kind} is not Supported"))
    return out


def _replica_set_spec(spec: Obj, kind: str) -> tuple[Causes, Causes]:
    """ValidateReplicaSetSpec's checks (shared by Deployments through
    ValidatePodTemplateSpecForReplicaSet): (the selector's causes, the template's), the
    template checked only when the selector parses."""
    out = selector_rules(spec, kind)
    if selector_parses(spec.get("selector")):
        return out, _template_rules(spec)
    out.append(invalid("spec.selector", go_label_selector(spec.get("selector")),
                       "invalid label selector"))
    return out, []


def _template_rules(spec: Obj) -> Causes:
    """ValidatePodTemplateSpecForReplicaSet, the selector parsing."""
    out = template_labels_match(spec)
    out += pod_template(spec.get("template"), "spec.template")
    return out + always_restart(spec, "ReplicaSet")


_OUTSIDE_TEMPLATE_VALID = KnownValid()


def _outside_template_key(spec: Obj, kind: str) -> Hashable | None:
    """The key of a Deployment's or ReplicaSet's spec without its template: every rule but
    the template's reads nothing else (replicas, selector, strategy, counts), and every
    write of a workload repeats it (`knownvalid`). Remembered when all of those rules
    passed and the selector parses: the template's rules are then the only ones left."""
    return memory_key({k: v for k, v in spec.items() if k != "template"}, kind)


def _immutableselector_rules(spec: Obj, old: Obj | None) -> Causes:
    if old is None:
        return []
    old_selector = as_dict(old.get("spec")).get("selector")
    if old_selector != spec.get("selector"):
        return [invalid("spec.selector", go_label_selector(spec.get("selector")), IMMUTABLE_MSG)]
    return []


def percent_value(value: Any) -> int | None:
    """getIntOrPercentValue of an IntOrString (None: neither)."""
    if isinstance(value, str):
        return int(value[:-1]) if not is_valid_percent(value) else 0
    return as_int(value)


def int_or_percent(value: Any, path: str) -> Causes:
    """ValidatePositiveIntOrPercent (an absent value is the internal type's zero, 0)."""
    if isinstance(value, str):
        return each(path, go_int_or_string(value), is_valid_percent(value))
    if value is None or as_int(value) is not None:
        return nonnegative(value, path)
    return [invalid(path, go_int_or_string(value), "must be an integer or percentage (e.g '5%')")]


def not_over_100(value: Any, path: str) -> Causes:
    """IsNotMoreThan100Percent."""
    if isinstance(value, str) and not is_valid_percent(value) and int(value[:-1]) > 100:
        return [invalid(path, go_int_or_string(value), "must not be greater than 100%")]
    return []


# --- Deployment, ReplicaSet --------------------------------------------------------------------

def _deployment_strategy(strategy: Obj) -> Causes:
    path = "spec.strategy"
    kind = as_str(strategy.get("type"))
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        return [forbidden(f"{path}.rollingUpdate", "may not be specified when strategy `type` "
                          "is 'Recreate'")] if isinstance(rolling, dict) else []
    if kind == "RollingUpdate":
        if not isinstance(rolling, dict):
            return [required(f"{path}.rollingUpdate", "this should be defaulted and never be "
                             "nil")]
        unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
        out = int_or_percent(unavailable, f"{path}.rollingUpdate.maxUnavailable")
        out += int_or_percent(surge, f"{path}.rollingUpdate.maxSurge")
        if (percent_value(unavailable) or 0) == 0 and (percent_value(surge) or 0) == 0:
            out.append(invalid(f"{path}.rollingUpdate.maxUnavailable",
                               go_int_or_string(unavailable), "may not be 0 when `maxSurge` is 0"))
        return out + not_over_100(unavailable, f"{path}.rollingUpdate.maxUnavailable")
    shown = Raw(f'apps.DeploymentStrategy{{Type:"{kind}", RollingUpdate:'
                f'(*apps.RollingUpdateDeployment)(nil)}}')
    return [not_supported(path, shown, ("Recreate", "RollingUpdate"))]


def _deployment(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateDeploymentSpec, and the apps/v1 selector immutability (deploymentStrategy)."""
    spec = as_dict(obj.get("spec"))
    key = _outside_template_key(spec, "deployment")
    if key in _OUTSIDE_TEMPLATE_VALID:
        return _template_rules(spec) + _immutableselector_rules(spec, old)
    head = nonnegative(spec.get("replicas"), "spec.replicas")
    selector, template = _replica_set_spec(spec, "deployment")
    tail = _deployment_strategy(as_dict(spec.get("strategy")))
    tail += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    tail += nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
    deadline = as_int(spec.get("progressDeadlineSeconds"))
    if deadline is not None:
        tail += nonnegative(deadline, "spec.progressDeadlineSeconds")
        if deadline <= (as_int(spec.get("minReadySeconds")) or 0):
            tail.append(invalid("spec.progressDeadlineSeconds", deadline,
                                "must be greater than minReadySeconds"))
    if not head and not selector and not tail:
        _OUTSIDE_TEMPLATE_VALID.remember(key)
    return head + selector + template + tail + _immutableselector_rules(spec, old)


def _replicaset(obj: Obj, old: Obj | None) -> list[StatusCause]:
    spec = as_dict(obj.get("spec"))
    key = _outside_template_key(spec, "replicaset")
    if key in _OUTSIDE_TEMPLATE_VALID:
        return _template_rules(spec) + _immutableselector_rules(spec, old)
    head = nonnegative(spec.get("replicas"), "spec.replicas")
    head += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    selector, template = _replica_set_spec(spec, "deployment")
    if not head and not selector:
        _OUTSIDE_TEMPLATE_VALID.remember(key)
    return head + selector + template + _immutableselector_rules(spec, old)


# --- DaemonSet ---------------------------------------------------------------------------------

def _daemonset(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateDaemonSetSpec (selector values lenient only for old objects)."""
    spec = as_dict(obj.get("spec"))
    selector = spec.get("selector")
    out = label_selector(selector, "spec.selector", allow_invalid_values=old is not None)
    if selector_parses(selector):
        out += template_labels_match(spec)
    if isinstance(selector, dict) and selector_is_empty(selector):
        out.append(invalid("spec.selector", go_label_selector(selector),
                           "empty selector is invalid for daemonset"))
    out += pod_template(spec.get("template"), "spec.template")
    out += always_restart(spec, "DaemonSet")
    out += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    out += _daemonset_strategy(as_dict(spec.get("updateStrategy")))
    out += nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
    return out + _immutableselector_rules(spec, old)


def _daemonset_strategy(strategy: Obj) -> Causes:
    path = "spec.updateStrategy"
    kind = as_str(strategy.get("type"))
    if kind == "OnDelete":
        return []
    if kind != "RollingUpdate":
        shown = Raw(f'apps.DaemonSetUpdateStrategy{{Type:"{kind}", RollingUpdate:'
                    f'(*apps.RollingUpdateDaemonSet)(nil)}}')
        return [not_supported(path, shown, ("RollingUpdate", "OnDelete"))]
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, dict):
        return [required(f"{path}.rollingUpdate")]
    path += ".rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    out = int_or_percent(unavailable, f"{path}.maxUnavailable")
    out += int_or_percent(surge, f"{path}.maxSurge")
    out += not_over_100(unavailable, f"{path}.maxUnavailable")
    out += not_over_100(surge, f"{path}.maxSurge")
    has_unavailable = (percent_value(unavailable) or 0) != 0
    has_surge = (percent_value(surge) or 0) != 0
    if has_unavailable and has_surge:
        out.append(invalid(f"{path}.maxSurge", go_int_or_string(surge),
                           "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        out.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {
    DEPLOYMENTS: _deployment_defaults,
    REPLICASETS: _replicaset_defaults,
    DAEMONSETS: _daemonset_defaults,
}
VALIDATORS: dict[tuple[str, str], Any] = {
    DEPLOYMENTS: _deployment, REPLICASETS: _replicaset, DAEMONSETS: _daemonset,
}
