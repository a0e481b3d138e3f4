"""Pods and pod templates: kube's defaults (SetDefaults_PodSpec/Container) and validation.

`pod_spec_defaults` is shared by Pods and every template (workloads, Jobs, CronJobs).
Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import (
    DNS1123_LABEL,
    DNS1123_LABEL_MSG,
    Obj,
    as_dict,
    as_list,
    spec_of,
)
from asyncop.apiserver.core.errors import cause, quote

POD_GR = ("", "pods")


def pod_spec_defaults(spec: Obj, *, restart_policy: bool = True) -> None:
    """kube's PodSpec defaults (SetDefaults_PodSpec/Container), shared by pods and templates.
    Job templates keep an absent restartPolicy absent: kube would default it to Always and
    then reject the Job, while these simulated Jobs would silently run with it."""
    if restart_policy:
        spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for container in as_list(spec.get("containers")) + as_list(spec.get("initContainers")):
        if not isinstance(container, dict):
            continue
        image = str(container.get("image", ""))
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})
        for port in as_list(container.get("ports")):
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")


def template_defaults(spec: Obj, *, restart_policy: bool = True) -> None:
    """Pod template defaults of a workload (its `spec.template.spec`, when present)."""
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        pod_spec_defaults(template["spec"], restart_policy=restart_policy)


def _pod_defaults(obj: Obj, old: Obj | None) -> None:
    """Spec defaults apply to every write (as decoding does); status only on create."""
    spec = spec_of(obj)
    pod_spec_defaults(spec)
    spec.setdefault("serviceAccountName", "default")  # the ServiceAccount admission plugin
    if old is None:
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}


def _pod(obj: Obj, old: Obj | None) -> list[StatusCause]:
    causes = _pod_create(obj)
    return causes + (_pod_update(obj, old) if old is not None else [])


def _pod_create(obj: Obj) -> list[StatusCause]:
    spec = as_dict(obj.get("spec"))
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return [cause("spec.containers", "FieldValueRequired", "Required value")]
    out: list[StatusCause] = []
    for i, container in enumerate(containers):
        if not isinstance(container, dict):
            out.append(cause(f"spec.containers[{i}]", "FieldValueInvalid",
                             "Invalid value: must be an object"))
            continue
        name = container.get("name")
        if not name:
            out.append(cause(f"spec.containers[{i}].name", "FieldValueRequired",
                             "Required value"))
        elif not isinstance(name, str) or len(name) > 63 or not DNS1123_LABEL.match(name):
            out.append(cause(f"spec.containers[{i}].name", "FieldValueInvalid",
                             f"Invalid value: {quote(name)}: {DNS1123_LABEL_MSG}"))
        if not container.get("image"):
            out.append(cause(f"spec.containers[{i}].image", "FieldValueRequired",
                             "Required value"))
    return out


_POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds",
                "schedulingGates")
_POD_UPDATE_MSG = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)


def _pod_update(obj: Obj, old: Obj) -> list[StatusCause]:
    """Most of a pod's spec is immutable. Binding (setting `nodeName` once, which the
    scheduler does through pods/binding) is allowed here for the simulated scheduler."""
    new_spec = dict(as_dict(obj.get("spec")))
    old_spec = dict(as_dict(old.get("spec")))
    for key in _POD_MUTABLE:
        new_spec.pop(key, None)
        old_spec.pop(key, None)
    if not old_spec.get("nodeName"):
        new_spec.pop("nodeName", None)
        old_spec.pop("nodeName", None)
    for field in ("containers", "initContainers"):
        new_list = [dict(c, image=None) if isinstance(c, dict) else c
                    for c in as_list(new_spec.get(field))]
        old_list = [dict(c, image=None) if isinstance(c, dict) else c
                    for c in as_list(old_spec.get(field))]
        new_spec[field], old_spec[field] = new_list, old_list
    if new_spec != old_spec:
        return [cause("spec", "FieldValueForbidden", _POD_UPDATE_MSG)]
    return []


DEFAULTS: dict[tuple[str, str], Any] = {POD_GR: _pod_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {POD_GR: _pod}
