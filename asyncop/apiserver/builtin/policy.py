"""policy/v1 PodDisruptionBudgets: the registry's status and kube's validation.

policy/v1 has no defaults of its own; the registry starts status at zero counts. kube's
ValidatePodDisruptionBudget: minAvailable and maxUnavailable are exclusive, each a
non-negative integer or a percentage of at most 100%, the selector a valid label selector
(invalid values the stored selector had stay allowed on update), unhealthyPodEvictionPolicy
IfHealthyBudget or AlwaysAllow. The name is only a path segment (kube's PDB strategy checks
none of its own; core/objectmeta.validate_name).
Invariant: status is set on create only; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    invalid,
    label_selector,
    not_supported,
)
from asyncop.apiserver.builtin.gofmt import GO_POINTER, Raw
from asyncop.apiserver.builtin.workloads import int_or_percent, not_over_100

PDBS = ("policy", "poddisruptionbudgets")
EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def _pdb_defaults(obj: Obj, old: Obj | None) -> None:
    if old is None:
        obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                         "expectedPods": 0}


def _spec_repr(spec: Obj) -> Raw:
    """%#v of the internal policy.PodDisruptionBudgetSpec (pointer fields only)."""
    def pointer(key: str, go_type: str) -> str:
        address = GO_POINTER if spec.get(key) is not None else "nil"
        return f"(*{go_type})({address})"
    return Raw(
        "policy.PodDisruptionBudgetSpec{"
        f"MinAvailable:{pointer('minAvailable', 'intstr.IntOrString')}, "
        f"Selector:{pointer('selector', 'v1.LabelSelector')}, "
        f"MaxUnavailable:{pointer('maxUnavailable', 'intstr.IntOrString')}, "
        "UnhealthyPodEvictionPolicy:"
        f"{pointer('unhealthyPodEvictionPolicy', 'policy.UnhealthyPodEvictionPolicyType')}}}")


def _pdb(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidatePodDisruptionBudget (create and update alike)."""
    spec = as_dict(obj.get("spec"))
    out: list[StatusCause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        out.append(invalid("spec", _spec_repr(spec),
                           "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            out += int_or_percent(spec[key], f"spec.{key}")
            out += not_over_100(spec[key], f"spec.{key}")
    allow = old is not None and bool(label_selector(
        as_dict(old.get("spec")).get("selector"), "spec.selector"))
    out += label_selector(spec.get("selector"), "spec.selector",
                          allow_invalid_values=allow)
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        out.append(not_supported("spec.unhealthyPodEvictionPolicy", policy,
                                 EVICTION_POLICIES))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {PDBS: _pdb_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {PDBS: _pdb}
