"""The Pod kind: kube's defaults, create-time admission, status, and the pod update rule.

Defaults are `poddefaults` (SetDefaults_PodSpec and nested, SetDefaults_Pod). On create
the admission plugins kube enables by default fill what they own — ServiceAccount
(`serviceAccountName: default`), Priority (`priority`, `preemptionPolicy`),
DefaultTolerationSeconds (not-ready/unreachable tolerations for 300 s) — and the pod
strategy sets `status` (Pending, the QoS class computed as qos.ComputePodQOS does). The
service-account token volume is not added (nothing here mounts it).

Validation is ValidatePodCreate / ValidatePodUpdate (pkg/apis/core/validation): the spec
(`podspec.pod_spec`) plus the pod-only rules, and on update kube's immutability rule:
only container images, activeDeadlineSeconds (lowered), tolerations (added), scheduling
gates (removed) and a negative grace period (to 1) may change — `nodeName` is set through
pods/binding, never by an update. kube ends that message with a go-cmp diff of its
internal Go types; here the diff lists the changed fields by their JSON names.
Invariant: defaults fill only absent fields; validators never mutate `old`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import orjson

from asyncop.api import StatusCause
from asyncop.apiserver.builtin import quantity, specrecall
from asyncop.apiserver.builtin.checks import inclusive_range_error
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    forbidden,
    invalid,
    required,
    spec_of,
)
from asyncop.apiserver.builtin.knownvalid import KnownAnswers, memory_key
from asyncop.apiserver.builtin.poddefaults import pod_defaults, pod_spec_defaults
from asyncop.apiserver.builtin.podspec import pod_spec

POD_GR = ("", "pods")
_MAX_INT32 = 2**31 - 1
_SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
UPDATABLE = ("`spec.containers[*].image`,`spec.initContainers[*].image`,"
             "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
             "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if "
             "it was previously negative)")


# --- defaults, admission, status ---------------------------------------------------------------

def _admit(spec: Obj) -> None:
    """The create-time admission plugins kube-apiserver enables by default."""
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"] = "default"
    if spec.get("priority") is None:
        spec["priority"] = _SYSTEM_PRIORITIES.get(as_str(spec.get("priorityClassName")), 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.get("tolerations")
    if tolerations is not None and not isinstance(tolerations, list):
        return
    current = [as_dict(t) for t in tolerations or ()]
    added = []
    for key in _DEFAULT_TOLERATIONS:
        if not any(as_str(t.get("key")) in (key, "") and as_str(t.get("effect")) in
                   ("NoExecute", "") for t in current):
            added.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": 300})
    if added:
        spec["tolerations"] = (tolerations or []) + added


_QOS_KNOWN: KnownAnswers[str] = KnownAnswers()
_QOS_LISTS = ("containers", "initContainers")


def qos_class(spec: Obj) -> str:
    """ComputePodQOS: Guaranteed when every container limits cpu and memory and requests
    equal limits, BestEffort without any cpu/memory request or limit, else Burstable.
    Sums are exact, in nano units (`quantity.nanos_of`). The class depends on nothing but
    the containers' and init containers' `resources`, which replicas repeat: it is
    remembered by their JSON text (`knownvalid`)."""
    key = memory_key([[ctr.get("resources") if isinstance(ctr, dict) else None
                       for ctr in as_list(spec.get(lists))] for lists in _QOS_LISTS])
    return _QOS_KNOWN.answer(key, lambda: computed_qos_class(spec))


def computed_qos_class(spec: Obj) -> str:
    """`qos_class`, computed."""
    requests: dict[str, int | Fraction] = {}
    limits: dict[str, int | Fraction] = {}
    guaranteed = True
    for key in _QOS_LISTS:
        for ctr in as_list(spec.get(key)):
            resources = ctr.get("resources") if isinstance(ctr, dict) else None
            if not isinstance(resources, dict):
                guaranteed = False  # no cpu and memory limits
                continue
            _add_positive(resources.get("requests"), requests)
            if _add_positive(resources.get("limits"), limits) < 2:
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(name in limits and limits[name] == req
                          for name, req in requests.items()) and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


def _add_positive(values: Any, into: dict[str, int | Fraction]) -> int:
    """Add a resource list's positive cpu and memory quantities into `into`; how many
    there were."""
    found = 0
    if isinstance(values, dict):
        for name in ("cpu", "memory"):
            raw = values.get(name)
            if isinstance(raw, quantity.QUANTITY_JSON):  # (a bool is no quantity: nanos_of says so)
                nanos = quantity.nanos_of(raw)
                if nanos is not None and nanos > 0:
                    found += 1
                    into[name] = into.get(name, 0) + nanos
    return found


def _pod_defaults(obj: Obj, old: Obj | None) -> None:
    """Spec defaults apply to every write (as decoding does); admission and status only on
    create (the Writer restores the stored status on update)."""
    spec = spec_of(obj)
    key = None
    if old is None:  # a spec like one created before but for its plain env values: recalled
        known, key = specrecall.PODS.recall(spec)
        if known is not None:
            obj["spec"] = known
            obj["status"] = {"phase": "Pending", "qosClass": qos_class(known)}
            return
    pod_spec_defaults(spec)
    pod_defaults(spec)
    if old is None:
        _admit(spec)
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}
        if key is not None:
            specrecall.PODS.defaulted(spec, key)


# --- validation --------------------------------------------------------------------------------

def _pod(obj: Obj, old: Obj | None) -> list[StatusCause]:
    spec = as_dict(obj.get("spec"))
    if old is not None or not specrecall.PODS.handed(spec):  # (recalled: valid)
        out = pod_spec(spec, "spec", is_pod=True, strict_node_values=old is None,
                       pod_rules=_pod_only)
        if old is None and not out:
            specrecall.PODS.validated(spec)
    else:
        out = []
    if old is None:
        if as_list(spec.get("ephemeralContainers")):
            out.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
        if as_str(spec.get("nodeName")) and as_list(spec.get("schedulingGates")):
            out.append(forbidden("spec.nodeName",
                                 "cannot be set until all schedulingGates have been cleared"))
        return out
    return out + pod_update(spec, as_dict(old.get("spec")))


def _pod_only(spec: Obj) -> Causes:
    """validatePodMetadataAndSpec's additions for Pods (not templates). A pure function of
    the spec's serviceAccountName, volumes and images: `pod_spec` remembers it with the
    spec's own rules (`specmemo`)."""
    out: Causes = []
    if not as_str(spec.get("serviceAccountName")):
        for vi, volume in enumerate(as_list(spec.get("volumes"))):
            for si, source in enumerate(as_list(as_dict(as_dict(volume).get("projected"))
                                                .get("sources"))):
                if isinstance(as_dict(source).get("serviceAccountToken"), dict):
                    out.append(forbidden(f"spec.volumes[{vi}].projected.sources[{si}]."
                                         "serviceAccountToken",
                                         "must not be specified when serviceAccountName is "
                                         "not set"))
    for key in ("containers", "initContainers"):
        for i, ctr in enumerate(as_list(spec.get(key))):
            image = as_str(as_dict(ctr).get("image"))
            if image != image.strip():
                out.append(invalid(f"spec.{key}[{i}].image", image,
                                   "must not have leading or trailing whitespace"))
    return out


def _container_updates(new: list[Any], old: list[Any], path: str) -> tuple[Causes, bool]:
    """ValidateContainerUpdates: (causes, stop)."""
    if len(new) != len(old):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    out: Causes = []
    for i, ctr in enumerate(new):
        image = as_str(as_dict(ctr).get("image"))
        if not image:
            out.append(required(f"{path}[{i}].image"))
        if image.strip() != image:
            out.append(invalid(f"{path}[{i}].image", image,
                               "must not have leading or trailing whitespace"))
    return out, False


def pod_update(new: Obj, old: Obj) -> Causes:
    """ValidatePodUpdate's spec rules."""
    out: Causes = []
    for key in ("containers", "initContainers"):
        errs, stop = _container_updates(as_list(new.get(key)), as_list(old.get(key)),
                                        f"spec.{key}")
        out += errs
        if stop:
            return out
    deadline, old_deadline = as_int(new.get("activeDeadlineSeconds")), \
        as_int(old.get("activeDeadlineSeconds"))
    if deadline is not None:
        if not 0 <= deadline <= _MAX_INT32:
            out.append(invalid("spec.activeDeadlineSeconds", deadline,
                               inclusive_range_error(0, _MAX_INT32)))
            return out
        if old_deadline is not None and old_deadline < deadline:
            out.append(invalid("spec.activeDeadlineSeconds", deadline,
                               "must be less than or equal to previous value"))
            return out
    elif old_deadline is not None:
        out.append(invalid("spec.activeDeadlineSeconds", None,
                           "must not update from a positive integer to nil value"))
    out += _added_tolerations(as_list(new.get("tolerations")), as_list(old.get("tolerations")))
    old_gates = {as_str(as_dict(g).get("name")) for g in as_list(old.get("schedulingGates"))}
    for i, gate in enumerate(as_list(new.get("schedulingGates"))):
        name = as_str(as_dict(gate).get("name"))
        if name not in old_gates:
            out.append(forbidden(f"spec.schedulingGates[{i}].name", "only deletion is "
                                 f"allowed, but found new scheduling gate '{name}'"))
    if _semantic(new) == _semantic(old):
        return out
    munged = _munged(new, old)
    if _semantic(munged) != _semantic(old):
        out.append(forbidden("spec", f"pod updates may not change fields other than {UPDATABLE}"
                             f"\n{_diff(old, munged)}"))
    return out


def _added_tolerations(new: list[Any], old: list[Any]) -> Causes:
    """validateOnlyAddedTolerations (tolerationSeconds may change)."""
    def bare(t: Any) -> Obj:
        return {k: v for k, v in as_dict(t).items() if k != "tolerationSeconds"}

    remaining = [bare(t) for t in new]
    for tol in old:
        if bare(tol) not in remaining:
            return [forbidden("spec.tolerations",
                              "existing toleration can not be modified except its "
                              "tolerationSeconds")]
    return []


def _munged(new: Obj, old: Obj) -> Obj:
    """The new spec with every field that may change set back to its old value."""
    munged = dict(new)
    for key in ("containers", "initContainers"):
        olds = as_list(old.get(key))
        if isinstance(new.get(key), list):
            munged[key] = [dict(c, image=as_dict(o).get("image")) if isinstance(c, dict) else c
                           for c, o in zip(new[key], olds, strict=False)]
    keys = ["activeDeadlineSeconds", "schedulingGates", "tolerations"]
    if as_list(old.get("schedulingGates")):
        keys += ["nodeSelector", "affinity"]  # gated pods may gain scheduling directives
    for key in keys:
        if key in old:
            munged[key] = old[key]
        else:
            munged.pop(key, None)
    old_grace, new_grace = as_int(old.get("terminationGracePeriodSeconds")), \
        as_int(new.get("terminationGracePeriodSeconds"))
    if old_grace is not None and old_grace < 0 and new_grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    return munged


def _semantic(spec: Obj) -> Obj:
    """kube compares with apiequality.Semantic, where an empty list or map equals nil."""
    return {k: v for k, v in spec.items() if v not in (None, [], {})}


def _diff(old: Obj, new: Obj) -> str:
    """The changed fields, `-` old and `+` new, by JSON name (kube's diff is go-cmp's)."""
    lines = ["  v1.PodSpec{"]
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            if key in old:
                lines.append(f"- \t{key}: {orjson.dumps(old[key]).decode()},")
            if key in new:
                lines.append(f"+ \t{key}: {orjson.dumps(new[key]).decode()},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


DEFAULTS: dict[tuple[str, str], Any] = {POD_GR: _pod_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {POD_GR: _pod}
