"""autoscaling/v2 HorizontalPodAutoscalers: kube's v2 defaults, registry steps, validation.

- SetDefaults_HorizontalPodAutoscaler (v2): minReplicas 1; no metrics means 80% average CPU
  utilization; a behavior gets kube's scale-up rules (no stabilization window, the larger
  of 4 pods or 100% per 15 s) and scale-down rules (100% per 15 s) for what it leaves out.
- The registry starts status empty (`desiredReplicas: 0`, `currentMetrics: null`) and
  drops the alpha `tolerance` (HPAConfigurableTolerance is off in 1.33) unless the stored
  object has one.
- ValidateHorizontalPodAutoscaler(Update): minReplicas >= 1 (0 only for an HPA that already
  had 0, HPAScaleToZero being alpha), maxReplicas >= 1 and >= minReplicas, scaleTargetRef
  kind and name (path segments), each metric's type and matching source, targets, behavior.
Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin import quantity
from asyncop.apiserver.builtin.checks import (
    is_dns1123_label,
    is_qualified_name,
    is_valid_path_segment_name,
)
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    each,
    forbidden,
    invalid,
    not_supported,
    required,
    spec_of,
)
from asyncop.apiserver.builtin.gofmt import GO_POINTER, Raw

HPAS = ("autoscaling", "horizontalpodautoscalers")
SOURCES = {"Object": "object", "Pods": "pods", "Resource": "resource",
           "External": "external", "ContainerResource": "containerResource"}
SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
PRESENT_ORDER = ("object", "external", "pods", "resource", "containerResource")
SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15},
    {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN = {"selectPolicy": "Max", "policies": [
    {"type": "Percent", "value": 100, "periodSeconds": 15}]}
MAX_PERIOD, MAX_WINDOW = 1800, 3600
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def _hpa_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not as_list(spec.get("metrics")):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for key, rules in (("scaleUp", SCALE_UP), ("scaleDown", SCALE_DOWN)):
            given = behavior.get(key)
            merged = copy.deepcopy(rules)
            if isinstance(given, dict):
                merged.update({k: v for k, v in given.items() if v is not None})
            behavior[key] = merged
    if not _uses_tolerance(old):
        for rules in as_dict(behavior).values():
            if isinstance(rules, dict):
                rules.pop("tolerance", None)
    if old is None:
        obj["status"] = {"currentMetrics": None, "desiredReplicas": 0}


def _uses_tolerance(obj: Obj | None) -> bool:
    behavior = as_dict(as_dict(as_dict(obj).get("spec")).get("behavior"))
    return any(as_dict(rules).get("tolerance") is not None for rules in behavior.values())


def _hpa(obj: Obj, old: Obj | None) -> list[StatusCause]:
    spec = as_dict(obj.get("spec"))
    lowest = 1
    if old is not None and as_dict(old.get("spec")).get("minReplicas") == 0:
        lowest = 0
    out: list[StatusCause] = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas", 0)
    if low is not None and (as_int(low) is None or low < lowest):
        out.append(invalid("spec.minReplicas", low,
                           f"must be greater than or equal to {lowest}"))
    if as_int(high) is None or high < 1:
        out.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if as_int(high) is not None and as_int(low) is not None and high < low:
        out.append(invalid("spec.maxReplicas", high,
                           "must be greater than or equal to `minReplicas`"))
    out += object_reference_errors(spec.get("scaleTargetRef"), "spec.scaleTargetRef")
    scale_to_zero_ok = False
    for i, metric in enumerate(as_list(spec.get("metrics"))):
        metric = as_dict(metric)
        out += _metric(metric, f"spec.metrics[{i}]")
        scale_to_zero_ok = scale_to_zero_ok or metric.get("type") in ("Object", "External")
    if low == 0 and not scale_to_zero_ok:
        out.append(forbidden("spec.metrics", "must specify at least one Object or "
                                             "External metric to support scaling to zero "
                                             "replicas"))
    behavior = spec.get("behavior")
    if behavior is not None:
        for key in ("scaleUp", "scaleDown"):
            rules = as_dict(behavior).get(key)
            if rules is not None:
                out += _scaling_rules(as_dict(rules), f"spec.behavior.{key}")
    return out


def object_reference_errors(ref: Any, path: str) -> list[StatusCause]:
    """ValidateCrossVersionObjectReference."""
    ref = as_dict(ref)
    out: list[StatusCause] = []
    for key in ("kind", "name"):
        value = as_str(ref.get(key))
        if not value:
            out.append(required(f"{path}.{key}"))
        else:
            out += each(f"{path}.{key}", value, is_valid_path_segment_name(value))
    return out


def _metric(metric: Obj, path: str) -> list[StatusCause]:
    """validateMetricSpec."""
    out: list[StatusCause] = []
    mtype = metric.get("type")
    if not mtype:
        out.append(required(f"{path}.type", "must specify a metric source type"))
    if mtype not in SOURCE_TYPES:
        out.append(not_supported(f"{path}.type", mtype, SOURCE_TYPES))
    present = [key for key in PRESENT_ORDER if metric.get(key) is not None]
    if present:  # only the first source present is checked, as kube does
        out += _SOURCE_CHECKS[present[0]](as_dict(metric[present[0]]), f"{path}.{present[0]}")
    expected = SOURCES.get(mtype) if isinstance(mtype, str) else None
    if expected is None:
        out.append(not_supported(f"{path}.type", mtype, SOURCE_TYPES))
    elif metric.get(expected) is None:
        out.append(required(f"{path}.{expected}",
                            "must populate information for the given metric source"))
    if len(present) != 1:
        out += [forbidden(f"{path}.{key}", "must populate the given metric source only")
                for key in sorted(present) if key != expected]
    return out


def _identifier(source: Obj, path: str) -> list[StatusCause]:
    """validateMetricIdentifier."""
    name = as_str(as_dict(source.get("metric")).get("name"))
    if not name:
        return [required(f"{path}.metric.name", "must specify a metric name")]
    return each(f"{path}.metric.name", name, is_valid_path_segment_name(name))


def _target(source: Obj, path: str) -> list[StatusCause]:
    """validateMetricTarget."""
    target = as_dict(source.get("target"))
    path = f"{path}.target"
    out: list[StatusCause] = []
    ttype = target.get("type")
    if not ttype:
        out.append(required(f"{path}.type", "must specify a metric target type"))
    if ttype not in ("Utilization", "Value", "AverageValue"):
        out.append(invalid(f"{path}.type", as_str(ttype),
                           "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        text = quantity.text_of(target.get(key))
        if text is not None and quantity.sign(text) != 1:  # printed as the struct (%#v)
            shown = quantity.go_struct(text, defaulted=False, dec=GO_POINTER) or text
            out.append(invalid(f"{path}.{key}", Raw(shown), "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and (as_int(utilization) is None or utilization < 1):
        out.append(invalid(f"{path}.averageUtilization", utilization,
                           "must be greater than 0"))
    return out


def _object(source: Obj, path: str) -> list[StatusCause]:
    out = object_reference_errors(source.get("describedObject"), f"{path}.describedObject")
    out += _identifier(source, path) + _target(source, path)
    target = as_dict(source.get("target"))
    if target.get("value") is None and target.get("averageValue") is None:
        out.append(required(f"{path}.target.averageValue",
                            "must set either a target value or averageValue"))
    return out


def _external(source: Obj, path: str) -> list[StatusCause]:
    out = _identifier(source, path) + _target(source, path)
    target = as_dict(source.get("target"))
    if target.get("value") is None and target.get("averageValue") is None:
        out.append(required(f"{path}.target.averageValue",
                            "must set either a target value for metric or a per-pod "
                            "target"))
    if target.get("value") is not None and target.get("averageValue") is not None:
        out.append(forbidden(f"{path}.target.value", "may not set both a target value "
                                                     "for metric and a per-pod target"))
    return out


def _pods(source: Obj, path: str) -> list[StatusCause]:
    out = _identifier(source, path) + _target(source, path)
    if as_dict(source.get("target")).get("averageValue") is None:
        out.append(required(f"{path}.target.averageValue",
                            "must specify a positive target averageValue"))
    return out


def _resource(source: Obj, path: str, *, container: bool = False) -> list[StatusCause]:
    out: list[StatusCause] = []
    name = as_str(source.get("name"))
    if not name:
        out.append(required(f"{path}.name", "must specify a resource name"))
    elif container:
        out += _container_resource_name(name, f"{path}.name")
    if container:
        name = as_str(source.get("container"))
        if not name:
            out.append(required(f"{path}.container", "must specify a container"))
        else:
            out += each(f"{path}.container", name, is_dns1123_label(name))
    out += _target(source, path)
    target = as_dict(source.get("target"))
    utilization, average = target.get("averageUtilization"), target.get("averageValue")
    if utilization is None and average is None:
        out.append(required(f"{path}.target.averageUtilization",
                            "must set either a target raw value or a target utilization"))
    if utilization is not None and average is not None:
        out.append(forbidden(f"{path}.target.averageValue",
                             "may not set both a target raw value and a target "
                             "utilization"))
    return out


def _container_resource_name(name: str, path: str) -> list[StatusCause]:
    """core/v1 ValidateContainerResourceName."""
    out = each(path, name, is_qualified_name(name))
    if "/" not in name and name not in STANDARD_CONTAINER_RESOURCES and \
            not name.startswith("hugepages-"):
        out.append(invalid(path, name, "must be a standard resource for containers"))
    return out


_SOURCE_CHECKS: dict[str, Callable[[Obj, str], list[StatusCause]]] = {
    "object": _object, "external": _external, "pods": _pods, "resource": _resource,
    "containerResource": lambda source, path: _resource(source, path, container=True),
}


def _scaling_rules(rules: Obj, path: str) -> list[StatusCause]:
    """validateScalingRules."""
    out: list[StatusCause] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None:
        if as_int(window) is None or window < 0:
            out.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                               "must be greater than or equal to zero"))
        elif window > MAX_WINDOW:
            out.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                               f"must be less than or equal to {MAX_WINDOW}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in ("Disabled", "Max", "Min"):
        out.append(not_supported(f"{path}.selectPolicy", select,
                                 ("Disabled", "Max", "Min")))
    policies = as_list(rules.get("policies"))
    if not policies:
        out.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        policy, at = as_dict(policy), f"{path}.policies[{i}]"
        if policy.get("type") not in ("Pods", "Percent"):
            out.append(not_supported(f"{at}.type", policy.get("type", ""),
                                     ("Percent", "Pods")))
        for key in ("value", "periodSeconds"):
            value = policy.get(key, 0)
            if as_int(value) is None or value <= 0:
                out.append(invalid(f"{at}.{key}", value, "must be greater than zero"))
            elif key == "periodSeconds" and value > MAX_PERIOD:
                out.append(invalid(f"{at}.{key}", value,
                                   f"must be less than or equal to {MAX_PERIOD}"))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {HPAS: _hpa_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {HPAS: _hpa}
