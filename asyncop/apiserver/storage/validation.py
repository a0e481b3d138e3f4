"""Validation of built-in kinds: the rules operators and tools trip over (422 with causes).

`validate(rt, obj, old)` runs on create (old is None) and update, after defaults and
admission. Covered: Pod containers; Deployment/ReplicaSet/StatefulSet selectors (required,
matching the template labels, immutable); ConfigMap/Secret keys and `immutable`; Secret
`type` immutability; core/v1 Event namespace rules; Lease MicroTime normalisation. Invariant:
pure; it never mutates `old` and only normalises timestamps in `obj`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.core import webhookconfig as webhook_config
from asyncop.apiserver.core.errors import cause, quote
from asyncop.apiserver.core.resources import ResourceType

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def validate(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None,
             ) -> list[StatusCause]:
    gr = rt.gr
    if gr == ("", "pods"):
        return _pod(obj) + (_pod_update(obj, old) if old is not None else [])
    if gr in (("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"),
              ("apps", "daemonsets")):
        return _workload(obj, old)
    if gr in (("", "configmaps"), ("", "secrets")):
        return _config(obj, old, secret=gr == ("", "secrets"))
    if gr == ("", "events"):
        return _event(obj)
    if gr == ("coordination.k8s.io", "leases"):
        _lease(obj)
    if gr in webhook_config.CONFIG_GRS:
        return webhook_config.validate(obj, gr == webhook_config.MUTATING_GR)
    return []


def _pod(obj: dict[str, Any]) -> list[StatusCause]:
    spec = _dict(obj.get("spec"))
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
        elif not isinstance(name, str) or len(name) > 63 or not _DNS_LABEL.match(name):
            out.append(cause(f"spec.containers[{i}].name", "FieldValueInvalid",
                             f"Invalid value: {quote(name)}: a lowercase RFC 1123 label must "
                             "consist of lower case alphanumeric characters or '-', and must "
                             "start and end with an alphanumeric character"))
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


def _pod_update(obj: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
    """Most of a pod's spec is immutable. Binding (setting `nodeName` once, which the
    scheduler does through pods/binding) is allowed here for the simulated scheduler."""
    new_spec = dict(_dict(obj.get("spec")))
    old_spec = dict(_dict(old.get("spec")))
    for key in _POD_MUTABLE:
        new_spec.pop(key, None)
        old_spec.pop(key, None)
    if not old_spec.get("nodeName"):
        new_spec.pop("nodeName", None)
        old_spec.pop("nodeName", None)
    for field in ("containers", "initContainers"):
        new_list = [dict(c, image=None) if isinstance(c, dict) else c
                    for c in _list(new_spec.get(field))]
        old_list = [dict(c, image=None) if isinstance(c, dict) else c
                    for c in _list(old_spec.get(field))]
        new_spec[field], old_spec[field] = new_list, old_list
    if new_spec != old_spec:
        return [cause("spec", "FieldValueForbidden", _POD_UPDATE_MSG)]
    return []


def _dict(value: Any) -> dict[str, Any]:
    """`value` if it is an object, else {} (a wrong type then fails the rule that reads it,
    never the server: the fuzz tests send every type everywhere)."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    for label, value in _dict(selector.get("matchLabels")).items():
        if labels.get(label) != value:
            return False
    for expr in _list(selector.get("matchExpressions")):
        expr = _dict(expr)
        key, op = expr.get("key"), expr.get("operator")
        values = _list(expr.get("values"))
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


def _workload(obj: dict[str, Any], old: dict[str, Any] | None) -> list[StatusCause]:
    spec = _dict(obj.get("spec"))
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (selector.get("matchLabels")
                                               or selector.get("matchExpressions")):
        return [cause("spec.selector", "FieldValueRequired", "Required value")]
    labels = _dict(_dict(_dict(spec.get("template")).get("metadata")).get("labels"))
    out: list[StatusCause] = []
    if not _matches(selector, labels):
        rendered = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
        out.append(cause("spec.template.metadata.labels", "FieldValueInvalid",
                         f"Invalid value: map[string]string{{{rendered}}}: `selector` does not "
                         "match template `labels`"))
    if old is not None:
        old_selector = (old.get("spec") or {}).get("selector")
        if old_selector is not None and old_selector != selector:
            out.append(cause("spec.selector", "FieldValueInvalid",
                             "Invalid value: field is immutable"))
    replicas = spec.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or replicas < 0):
        out.append(cause("spec.replicas", "FieldValueInvalid",
                         f"Invalid value: {quote(replicas)}: must be greater than or equal to 0"))
    return out


def _config(obj: dict[str, Any], old: dict[str, Any] | None, *, secret: bool,
            ) -> list[StatusCause]:
    out: list[StatusCause] = []
    data = obj.get("data") or {}
    binary = obj.get("binaryData") or {}
    for field, values in (("data", data), ("binaryData", binary)):
        if not isinstance(values, dict):
            out.append(cause(field, "FieldValueTypeInvalid", "Invalid value: must be a map"))
            continue
        for key in values:
            if len(key) > 253 or not _CONFIG_KEY.match(key):
                out.append(cause(f"{field}[{key}]", "FieldValueInvalid",
                                 f"Invalid value: {quote(key)}: a valid config key must consist "
                                 "of alphanumeric characters, '-', '_' or '.'"))
    if isinstance(data, dict) and isinstance(binary, dict):
        for key in set(data) & set(binary):
            out.append(cause(f"data[{key}]", "FieldValueInvalid",
                             f"Invalid value: {quote(key)}: duplicate of key present in "
                             "binaryData"))
    if old is None:
        return out
    if old.get("immutable") is True:
        if obj.get("immutable") is not True:
            out.append(cause("immutable", "FieldValueForbidden",
                             "Forbidden: field is immutable when `immutable` is set"))
        for field in ("data", "binaryData"):
            if (old.get(field) or {}) != (obj.get(field) or {}):
                out.append(cause(field, "FieldValueForbidden",
                                 "Forbidden: field is immutable when `immutable` is set"))
    if secret and old.get("type") != obj.get("type"):
        out.append(cause("type", "FieldValueInvalid",
                         f"Invalid value: {quote(obj.get('type'))}: field is immutable"))
    return out


def _event(obj: dict[str, Any]) -> list[StatusCause]:
    if obj.get("eventTime"):
        out: list[StatusCause] = []
        for field in ("reportingComponent", "reportingInstance", "action", "reason"):
            if not obj.get(field):
                name = "reportingController" if field == "reportingComponent" else field
                out.append(cause(name, "FieldValueRequired", "Required value"))
        return out
    namespace = (obj.get("metadata") or {}).get("namespace") or ""
    involved = _dict(obj.get("involvedObject"))
    involved_ns = involved.get("namespace") or ""
    if involved_ns and involved_ns != namespace:
        return [cause("involvedObject.namespace", "FieldValueInvalid",
                      f"Invalid value: {quote(involved_ns)}: does not match event.namespace")]
    if not involved_ns and namespace not in ("", "default") and involved.get("kind") in (
            "Node", "Namespace", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
            "CustomResourceDefinition"):
        return [cause("involvedObject.namespace", "FieldValueInvalid",
                      f"Invalid value: {quote(involved_ns)}: does not match event.namespace")]
    return []


def _lease(obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("acquireTime", "renewTime"):
        value = spec.get(field)
        if isinstance(value, str) and value:
            spec[field] = micro_time(value)


def micro_time(value: str) -> str:
    """Normalise an RFC 3339 time to metav1.MicroTime (UTC, 6 fractional digits, `Z`)."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
