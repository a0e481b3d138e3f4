"""Events: kube's ValidateEventCreate / ValidateEventUpdate for both API versions.

Both versions store core/v1 Events (core/eventsv1.py renames the events.k8s.io/v1 fields),
and kube validates the stored form, so causes name the core fields (`involvedObject`,
`message`, `source`, `count`) except `reportingController`, kube's internal name of
`reportingComponent`.
- Every write passes the legacy checks (legacyValidateEvent): without an eventTime the
  event's namespace matches the involved object's (or is default/empty for a cluster-scoped
  one); with an eventTime, reportingController (a qualified name), reportingInstance, action
  and reason are required (at most 128 bytes each), the message at most 1024 bytes, and the
  involved object is namespaced unless the event is in default or kube-system.
- Writes through events.k8s.io/v1 are strict: eventTime required, type Normal or Warning,
  the deprecated fields unset, a series counted from 2 with a lastObservedTime; an update
  may change only the series (and metadata).
Invariant: pure; values of the wrong shape read as empty.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import IMMUTABLE_MSG, is_dns1123_subdomain, is_qualified_name
from asyncop.apiserver.builtin.fields import Obj, as_dict, as_int, as_str, each, invalid, required
from asyncop.apiserver.builtin.gofmt import Raw, go_quote, go_value

EVENTS = ("", "events")
EVENTS_V1 = ("events.k8s.io", "events")
LIMITS = (("reportingInstance", "reportingInstance", 128), ("action", "action", 128),
          ("reason", "reason", 128))


def _bytes(value: Any) -> int:
    return len(as_str(value).encode())


def legacy_errors(obj: Obj) -> list[StatusCause]:
    """legacyValidateEvent."""
    namespace = as_str(as_dict(obj.get("metadata")).get("namespace"))
    involved_ns = as_str(as_dict(obj.get("involvedObject")).get("namespace"))
    mismatch = invalid("involvedObject.namespace", involved_ns,
                       "does not match event.namespace")
    out: list[StatusCause] = []
    if not obj.get("eventTime"):
        if (not involved_ns and namespace not in ("", "default")) or (
                involved_ns and namespace != involved_ns):
            out.append(mismatch)
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            out.append(mismatch)
        controller = as_str(obj.get("reportingComponent"))
        if not controller:
            out.append(required("reportingController"))
        out += each("reportingController", controller, is_qualified_name(controller))
        for field, path, limit in LIMITS:
            if not obj.get(field):
                out.append(required(path))
            if _bytes(obj.get(field)) > limit:
                out.append(invalid(path, "", f"can have at most {limit} characters"))
        if _bytes(obj.get("message")) > 1024:
            out.append(invalid("message", "", "can have at most 1024 characters"))
    out += each("namespace", namespace, is_dns1123_subdomain(namespace))
    return out


def _series_errors(obj: Obj) -> list[StatusCause]:
    """validateV1EventSeries."""
    series = obj.get("series")
    if not isinstance(series, dict):
        return []
    out: list[StatusCause] = []
    if (as_int(series.get("count")) or 0) < 2:
        out.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        out.append(required("series.lastObservedTime"))
    return out


def _core_event(obj: Obj, old: Obj | None) -> list[StatusCause]:
    return legacy_errors(obj)


def _v1_event(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """The strict events.k8s.io/v1 checks (after the legacy ones)."""
    out = legacy_errors(obj)
    if old is not None:
        if obj.get("series") != old.get("series"):
            out += _series_errors(obj)
        return out + _immutable(obj, old)
    out += _series_errors(obj)
    if not obj.get("eventTime"):
        out.append(required("eventTime"))
    etype = obj.get("type")
    if etype not in ("Normal", "Warning"):
        out.append(invalid("type", "", f"has invalid value: {as_str(etype)}"))
    for field in ("firstTimestamp", "lastTimestamp"):
        if obj.get(field):
            out.append(invalid(field, "", "needs to be unset"))
    if obj.get("count"):
        out.append(invalid("count", "", "needs to be unset"))
    source = as_dict(obj.get("source"))
    if source.get("component") or source.get("host"):
        out.append(invalid("source", "", "needs to be unset"))
    return out


_REFERENCE_FIELDS = (("Kind", "kind"), ("Namespace", "namespace"), ("Name", "name"),
                     ("UID", "uid"), ("APIVersion", "apiVersion"),
                     ("ResourceVersion", "resourceVersion"), ("FieldPath", "fieldPath"))


def _reference(value: Any) -> str:
    """%#v of a core.ObjectReference."""
    ref = as_dict(value)
    return "core.ObjectReference{" + ", ".join(
        f"{go}:{go_quote(as_str(ref.get(key)))}" for go, key in _REFERENCE_FIELDS) + "}"


def _source(value: Any) -> str:
    """%#v of a core.EventSource."""
    source = as_dict(value)
    return (f"core.EventSource{{Component:{go_quote(as_str(source.get('component')))}, "
            f"Host:{go_quote(as_str(source.get('host')))}}}")


def _time(value: Any) -> str:
    """Go's time.Time String() of a metav1.Time / MicroTime (zero when unset)."""
    text = as_str(value)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return "0001-01-01 00:00:00 +0000 UTC"
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (f".{fraction}" if fraction else "") + \
        " +0000 UTC"


def _immutable(obj: Obj, old: Obj) -> list[StatusCause]:
    """ValidateEventUpdate's immutable fields, in kube's order (reason is checked twice)."""
    render: dict[str, Callable[[Any], str]] = {
        "involvedObject": _reference, "source": _source,
        "firstTimestamp": _time, "lastTimestamp": _time, "eventTime": _time,
        "count": lambda v: str(as_int(v) or 0),
        "related": lambda v: _reference(v) if isinstance(v, dict) else "null",
    }
    out: list[StatusCause] = []
    for field, path in (("involvedObject", "involvedObject"), ("reason", "reason"),
                        ("message", "message"), ("source", "source"),
                        ("firstTimestamp", "firstTimestamp"), ("lastTimestamp", "lastTimestamp"),
                        ("count", "count"), ("reason", "reason"), ("type", "type"),
                        ("eventTime", "eventTime"), ("action", "action"),
                        ("related", "related"), ("reportingComponent", "reportingController"),
                        ("reportingInstance", "reportingInstance")):
        new, before = obj.get(field), old.get(field)
        if (new or None) == (before or None):
            continue
        shown = render[field](new) if field in render else go_value(as_str(new))
        out.append(invalid(path, Raw(shown), IMMUTABLE_MSG))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {}
VALIDATORS: dict[tuple[str, str], Any] = {EVENTS: _core_event, EVENTS_V1: _v1_event}
