"""apps/v1 StatefulSet: kube's defaults (SetDefaults_StatefulSet) and validation
(ValidateStatefulSet, ValidateStatefulSetUpdate in pkg/apis/apps/validation).

A StatefulSet's name becomes its pods' hostnames, so it is a DNS-1123 label; new
StatefulSets' serviceName is one too (1.33). Its selector and template follow the
workload rules (`workloads.py`), but the template's pod spec is not validated (kube's TODO:
the claim templates supply volumes, so its pods are validated when created). Only replicas,
ordinals, template, updateStrategy, persistentVolumeClaimRetentionPolicy and
minReadySeconds may change. Claim templates get their PVC defaults and type meta.
Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import is_dns1123_label, is_dns1123_subdomain
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    dns1123_label,
    each,
    forbidden,
    invalid,
    labels,
    nonnegative,
    not_supported,
    required,
    spec_of,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_int_or_string, go_label_selector
from asyncop.apiserver.builtin.poddefaults import template_defaults
from asyncop.apiserver.builtin.workloads import (
    always_restart,
    int_or_percent,
    not_over_100,
    percent_value,
    selector_parses,
    selector_rules,
    template_labels_match,
)

STATEFULSETS = ("apps", "statefulsets")
UPDATE_MSG = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', "
              "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
              "'minReadySeconds' are forbidden")


def _statefulset_defaults(obj: Obj, old: Obj | None) -> None:
    """SetDefaults_StatefulSet: a rollingUpdate is only created when the type was empty;
    claim templates get their PVC defaults and type meta (kube's conversion sets it)."""
    spec = spec_of(obj)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            strategy.setdefault("rollingUpdate", {})
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            rolling.setdefault("partition", 0)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    for claim in as_list(spec.get("volumeClaimTemplates")):
        if isinstance(claim, dict):
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            claim_spec = claim.get("spec")
            if isinstance(claim_spec, dict):
                claim_spec.setdefault("volumeMode", "Filesystem")
            claim.setdefault("status", {"phase": "Pending"})
    template_defaults(spec)


# --- StatefulSet -------------------------------------------------------------------------------

def _statefulset(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateStatefulSet / ValidateStatefulSetUpdate."""
    spec = as_dict(obj.get("spec"))
    out: Causes = []
    if old is None:  # a StatefulSet's name becomes pods' hostnames: a DNS label
        name = as_str(as_dict(obj.get("metadata")).get("name"))
        if not is_dns1123_subdomain(name):
            out += each("metadata.name", name, is_dns1123_label(name))
    out += _statefulset_spec(spec, new=old is None)
    if old is None:
        return out
    old_spec = as_dict(old.get("spec"))
    mutable = ("replicas", "template", "updateStrategy", "minReadySeconds", "ordinals",
               "persistentVolumeClaimRetentionPolicy")
    if {k: v for k, v in spec.items() if k not in mutable} != \
            {k: v for k, v in old_spec.items() if k not in mutable}:
        out.append(forbidden("spec", UPDATE_MSG))
    return out


def _statefulset_spec(spec: Obj, *, new: bool) -> Causes:
    """ValidateStatefulSetSpec; `new`: a create (updates allow an invalid serviceName)."""
    out: Causes = []
    policy = as_str(spec.get("podManagementPolicy"))
    if not policy:
        out.append(required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        out.append(invalid("spec.podManagementPolicy", policy,
                           "must be 'OrderedReady' or 'Parallel'"))
    out += _statefulset_strategy(as_dict(spec.get("updateStrategy")))
    retention = as_dict(spec.get("persistentVolumeClaimRetentionPolicy"))
    for key in ("whenDeleted", "whenScaled"):
        if key in retention and retention[key] not in ("Retain", "Delete"):
            out.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{key}",
                                     as_str(retention[key]), ("Retain", "Delete")))
    out += nonnegative(spec.get("replicas"), "spec.replicas")
    out += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    out += nonnegative(as_dict(spec.get("ordinals")).get("start"), "spec.ordinals.start")
    service = as_str(spec.get("serviceName"))
    if new and service:  # 1.33: new StatefulSets' serviceName must be a DNS label
        out += dns1123_label(service, "spec.serviceName")
    out += selector_rules(spec, "statefulset")
    if selector_parses(spec.get("selector")):
        out += template_labels_match(spec)
        template = as_dict(spec.get("template"))
        out += labels(as_dict(template.get("metadata")).get("labels"), "spec.template.labels")
    else:
        out.append(invalid("spec.selector", go_label_selector(spec.get("selector")), ""))
    return out + always_restart(spec, "StatefulSet")


def _statefulset_strategy(strategy: Obj) -> Causes:
    path = "spec.updateStrategy"
    kind = as_str(strategy.get("type"))
    rolling = strategy.get("rollingUpdate")
    if not kind:
        return [required(path)]
    if kind == "OnDelete":
        if isinstance(rolling, dict):
            return [invalid(f"{path}.rollingUpdate", Raw(_sts_rolling(rolling)),
                            "only allowed for updateStrategy 'RollingUpdate'")]
        return []
    if kind != "RollingUpdate":
        shown = Raw(f'apps.StatefulSetUpdateStrategy{{Type:"{kind}", RollingUpdate:'
                    f'(*apps.RollingUpdateStatefulSetStrategy)(nil)}}')
        return [invalid(path, shown, "must be 'RollingUpdate' or 'OnDelete'")]
    if not isinstance(rolling, dict):
        return []
    out = nonnegative(rolling.get("partition"), f"{path}.rollingUpdate.partition")
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        at = f"{path}.rollingUpdate.maxUnavailable"
        out += int_or_percent(unavailable, at)
        if (percent_value(unavailable) or 0) == 0:
            out.append(invalid(at, go_int_or_string(unavailable), "cannot be 0"))
        out += not_over_100(unavailable, at)
    return out


def _sts_rolling(rolling: Obj) -> str:
    """`%#v` of the internal apps.RollingUpdateStatefulSetStrategy (a set maxUnavailable is
    a pointer, whose address Go prints; shown as its value here)."""
    unavailable = rolling.get("maxUnavailable")
    shown = "(*intstr.IntOrString)(nil)" if unavailable is None else go_int_or_string(unavailable)
    return (f"apps.RollingUpdateStatefulSetStrategy{{Partition:"
            f"{as_int(rolling.get('partition')) or 0}, MaxUnavailable:{shown}}}")


DEFAULTS: dict[tuple[str, str], Any] = {STATEFULSETS: _statefulset_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {STATEFULSETS: _statefulset}
