"""core/v1 Events (events.k8s.io/v1 ones are stored as core/v1): the namespace rules.

Invariant: validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import Obj, as_dict
from asyncop.apiserver.core.errors import cause, quote

EVENTS = ("", "events")


def _event(obj: Obj, old: Obj | None) -> list[StatusCause]:
    if obj.get("eventTime"):
        out: list[StatusCause] = []
        for field in ("reportingComponent", "reportingInstance", "action", "reason"):
            if not obj.get(field):
                name = "reportingController" if field == "reportingComponent" else field
                out.append(cause(name, "FieldValueRequired", "Required value"))
        return out
    namespace = as_dict(obj.get("metadata")).get("namespace") or ""
    involved = as_dict(obj.get("involvedObject"))
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


DEFAULTS: dict[tuple[str, str], Any] = {}
VALIDATORS: dict[tuple[str, str], Any] = {EVENTS: _event}
