"""pods/binding: how kube assigns a pod to a node (pkg/registry/core/pod/storage: the
BindingREST's Create, assignPod and setPodHostAndAnnotations).

A scheduler POSTs a `Binding` (`metadata.name` = the pod, `target` = the Node). kube checks
the name against the URL (400), validates the target (ValidatePodBinding: kind Node or
empty, a name), then rewrites the stored pod directly — below the pod strategy, so neither
the update rules nor `metadata.generation` are involved: `spec.nodeName` set, the
Binding's annotations merged, condition PodScheduled=True. The Binding's uid and
resourceVersion, when given, are preconditions on the pod. A deleting pod, or one already
bound, is a 409 Conflict on `pods/binding`. kube answers a target error with a 500 (an
aggregate error, its TODO); here it is a 422 with the same causes.
Invariant: `bound` is pure — it returns the new pod or raises, the caller commits.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from asyncop.api import ApiError
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_list,
    as_str,
    not_supported,
    required,
)
from asyncop.apiserver.core import errors
from asyncop.apiserver.core.resources import ResourceType

BINDING_RESOURCE = "pods/binding"


def bound(rt: ResourceType, pod: Obj | None, binding: Any, *, name: str, now: str) -> Obj:
    """The pod as kube leaves it after binding `binding`, or the ApiError kube answers."""
    if not isinstance(binding, dict):
        raise errors.bad_request("the request body is not a JSON object")
    meta = as_dict(binding.get("metadata"))
    if as_str(meta.get("name")) != name:
        raise errors.bad_request("name in URL does not match name in Binding object")
    target = as_dict(binding.get("target"))
    causes = []
    kind = as_str(target.get("kind"))
    if kind and kind != "Node":
        causes.append(not_supported("target.kind", kind, ("Node", "<empty>")))
    if not as_str(target.get("name")):
        causes.append(required("target.name"))
    if causes:
        raise errors.invalid(_binding_type(rt), name, causes)
    if pod is None:
        raise errors.not_found(rt, name)
    old_meta = pod["metadata"]
    uid, rv = as_str(meta.get("uid")), as_str(meta.get("resourceVersion"))
    if uid and uid != old_meta.get("uid"):
        raise errors.conflict(rt, name, f"Precondition failed: UID in precondition: {uid}, "
                              f"UID in object meta: {old_meta.get('uid', '')}")
    if rv and rv != old_meta.get("resourceVersion"):
        raise errors.conflict(rt, name, "Precondition failed: ResourceVersion in "
                              f"precondition: {rv}, ResourceVersion in object meta: "
                              f"{old_meta.get('resourceVersion', '')}")
    spec = as_dict(pod.get("spec"))
    if old_meta.get("deletionTimestamp"):
        raise _conflict(rt, name, f"pod {name} is being deleted, cannot be assigned to a host")
    if as_str(spec.get("nodeName")):
        raise _conflict(rt, name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
    new_meta = dict(old_meta)
    annotations = as_dict(meta.get("annotations"))
    if annotations:
        new_meta["annotations"] = {**as_dict(old_meta.get("annotations")), **annotations}
    status = dict(as_dict(pod.get("status")))
    scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": now}
    conditions = [as_dict(c) for c in as_list(status.get("conditions"))]
    for i, cond in enumerate(conditions):
        if cond.get("type") == "PodScheduled":
            if cond.get("status") == "True":
                scheduled["lastTransitionTime"] = cond.get("lastTransitionTime")
            conditions[i] = scheduled
            break
    else:
        conditions.append(scheduled)
    status["conditions"] = conditions
    return {**pod, "metadata": new_meta, "spec": {**spec, "nodeName": target["name"]},
            "status": status}


def _conflict(rt: ResourceType, name: str, why: str) -> ApiError:
    """assignPod's Conflict: `Operation cannot be fulfilled on pods/binding "p": why`."""
    err = errors.conflict(rt, name, why)
    err.status["message"] = f'Operation cannot be fulfilled on {BINDING_RESOURCE} "{name}": {why}'
    err.status.setdefault("details", {})["kind"] = BINDING_RESOURCE
    return err


def _binding_type(rt: ResourceType) -> ResourceType:
    """The Binding kind, for the 422's `Binding "p" is invalid`."""
    return replace(rt, kind="Binding")


def success() -> dict[str, Any]:
    """kube's answer to a binding: a Status of Success (HTTP 201)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "code": 201}
