"""Label and field selectors: parsing (400 on bad syntax) and matching raw objects.

Label selectors are `asyncop.api.labels` (the one implementation, shared with the runtime);
this module turns their parse errors into kube's 400. Field grammar: `path=v`, `path==v`,
`path!=v`, comma = AND, `\\` escapes `,` `=` `\\`. The fields a kind supports are listed in
`FIELDS`; an unsupported field is a 400 like the real server's. Invariant: parsing happens
once per request; matching never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from asyncop.api.labels import (
    LabelSelector,
    SelectorError,
    parse_selector,
)
from asyncop.apiserver.core import eventsv1
from asyncop.apiserver.core.errors import bad_request
from asyncop.apiserver.core.resources import ResourceType


def parse_label_selector(text: str | None) -> LabelSelector:
    """`asyncop.api.labels.parse_selector`, a bad selector answered as kube's 400."""
    try:
        return parse_selector(text)
    except SelectorError as exc:
        raise bad_request(str(exc)) from None


# --- field selectors -------------------------------------------------------------------------

_META_FIELDS = ("metadata.name", "metadata.namespace")
#: Extra field selector paths per (group, plural), beyond metadata.name/namespace.
FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                   "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                   "status.podIP", "status.nominatedNodeName"),
    ("", "events"): ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                     "involvedObject.uid", "involvedObject.apiVersion",
                     "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                     "reportingComponent", "source", "type"),
    ("events.k8s.io", "events"): ("regarding.kind", "regarding.namespace", "regarding.name",
                                  "regarding.uid", "regarding.apiVersion",
                                  "regarding.resourceVersion", "regarding.fieldPath", "reason",
                                  "reportingController", "type"),
    ("", "namespaces"): ("status.phase",),
    ("", "secrets"): ("type",),
    ("", "nodes"): ("spec.unschedulable",),
    ("apps", "replicasets"): ("status.replicas",),
    ("batch", "jobs"): ("status.successful",),
}


@dataclass(frozen=True, slots=True)
class FieldSelector:
    terms: tuple[tuple[str, bool, str], ...]  # (path, equal?, value)

    def matches(self, obj: dict[str, Any]) -> bool:
        for path, equal, value in self.terms:
            actual = _field_value(obj, path)
            if (actual == value) != equal:
                return False
        return True

    @property
    def empty(self) -> bool:
        return not self.terms

    def value_of(self, path: str) -> str | None:
        """The value required by an `=` term on `path` (e.g. metadata.name), if any."""
        for p, equal, v in self.terms:
            if p == path and equal:
                return v
        return None


def _field_value(obj: dict[str, Any], path: str) -> str:
    if path == "source":
        src = obj.get("source") or {}
        return str(src.get("component", "")) if isinstance(src, dict) else ""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def _split_escaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    buf: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            buf.append(text[i : i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_field_selector(text: str | None, rt: ResourceType) -> FieldSelector:
    if not text or not text.strip():
        return FieldSelector(())
    allowed = set(_META_FIELDS) | set(FIELDS.get((rt.group, rt.plural), ()))
    terms: list[tuple[str, bool, str]] = []
    for part in _split_escaped(text, ","):
        if not part:
            continue
        m = re.match(r"^((?:[^=!\\]|\\.)+?)(==|!=|=)(.*)$", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        path, op, value = m.group(1).strip(), m.group(2), _unescape(m.group(3))
        if path not in allowed:
            if rt.is_custom:
                raise bad_request(f'"{path}" is not a known field selector: only '
                                  f'"metadata.name", "metadata.namespace"')
            raise bad_request(f"field label not supported: {path}")
        if rt.storage_group is not None:  # a view of another group's storage
            path = eventsv1.core_field(path)
        terms.append((path, op != "!=", value))
    return FieldSelector(tuple(terms))


Matcher = Callable[[dict[str, Any]], bool]


def matcher(labels: LabelSelector, fields: FieldSelector) -> Matcher | None:
    """One predicate for both selectors, or None when nothing filters."""
    if labels.empty and fields.empty:
        return None
    if fields.empty:
        return labels.matches_object
    if labels.empty:
        return fields.matches
    return lambda obj: labels.matches_object(obj) and fields.matches(obj)
