"""Label and field selectors: parsing (400 on bad syntax) and matching raw objects.

Label grammar (comma = AND): `k=v`, `k==v`, `k!=v` (matches objects lacking k), `k in (a,b)`,
`k notin (a,b)` (matches objects lacking k), `k` (exists), `!k` (absent), `k>n`, `k<n`.
Field grammar: `path=v`, `path==v`, `path!=v`, comma = AND, `\\` escapes `,` `=` `\\`. The
fields a kind supports are listed in `FIELDS`; an unsupported field is a 400 like the real
server's. Invariant: parsing happens once per request; matching never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from asyncop.apiserver import eventsv1
from asyncop.apiserver.errors import bad_request
from asyncop.apiserver.resources import ResourceType

_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        has = self.key in labels
        value = labels.get(self.key)
        op = self.op
        if op == "=":
            return has and value == self.values[0]
        if op == "!=":
            return not has or value != self.values[0]
        if op == "in":
            return has and value in self.values
        if op == "notin":
            return not has or value not in self.values
        if op == "exists":
            return has
        if op == "!":
            return not has
        try:
            number = int(value or "")
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if op == ">" else number < bound


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...]

    def matches(self, obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


_SET_RE = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_BIN_RE = re.compile(r"^\s*([^\s=!<>]+)\s*(==|=|!=|>|<)\s*(\S*)\s*$")


def parse_label_selector(text: str | None) -> LabelSelector:
    if not text or not text.strip():
        return LabelSelector(())
    reqs: list[Requirement] = []
    for raw in _split_top(text):
        part = raw.strip()
        if not part:
            raise bad_request(
                f"unable to parse requirement: found '', expected: identifier ({text})")
        m = _SET_RE.match(part)
        if m:
            key, op, inner = m.group(1), m.group(2), m.group(3)
            values = tuple(v.strip() for v in inner.split(",") if v.strip() or inner.strip())
            _check_key(key, text)
            for v in values:
                _check_value(v, text)
            reqs.append(Requirement(key, op, values))
            continue
        m = _BIN_RE.match(part)
        if m:
            key, op, value = m.group(1), m.group(2), m.group(3)
            _check_key(key, text)
            if op in (">", "<"):
                if not value.lstrip("-").isdigit():
                    raise bad_request(f"unable to parse requirement: for 'gt', 'lt' operators, "
                                      f"exactly one value is required ({text})")
            else:
                _check_value(value, text)
            reqs.append(Requirement(key, "=" if op == "==" else op, (value,)))
            continue
        if part.startswith("!"):
            key = part[1:].strip()
            _check_key(key, text)
            reqs.append(Requirement(key, "!"))
            continue
        _check_key(part, text)
        reqs.append(Requirement(part, "exists"))
    return LabelSelector(tuple(reqs))


def _check_key(key: str, text: str) -> None:
    name = key.rsplit("/", 1)[-1]
    if not _KEY.match(key) or len(name) > 63:
        raise bad_request(f"unable to parse requirement: invalid label key \"{key}\": name part "
                          f"must consist of alphanumeric characters, '-', '_' or '.' ({text})")


def _check_value(value: str, text: str) -> None:
    if len(value) > 63 or not _VALUE.match(value):
        raise bad_request(f"unable to parse requirement: invalid label value: \"{value}\": "
                          f"a valid label must be an empty string or consist of alphanumeric "
                          f"characters, '-', '_' or '.' ({text})")


def selector_from_match_labels(match_labels: dict[str, str]) -> LabelSelector:
    return LabelSelector(tuple(Requirement(k, "=", (v,)) for k, v in sorted(match_labels.items())))


_EXPRESSION_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def selector_from_label_selector(selector: dict[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector (matchLabels + matchExpressions); empty or None matches all.
    Unknown operators raise ValueError (configurations are validated before they are stored)."""
    if not selector:
        return LabelSelector(())
    reqs = list(selector_from_match_labels(selector.get("matchLabels") or {}).requirements)
    for expr in selector.get("matchExpressions") or ():
        op = _EXPRESSION_OPS.get(str(expr.get("operator")))
        if op is None:
            raise ValueError(f"{expr.get('operator')!r} is not a valid label selector operator")
        reqs.append(Requirement(str(expr.get("key", "")), op,
                                tuple(str(v) for v in expr.get("values") or ())))
    return LabelSelector(tuple(reqs))


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
        return labels.matches
    if labels.empty:
        return fields.matches
    return lambda obj: labels.matches(obj) and fields.matches(obj)
