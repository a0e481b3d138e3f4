"""Label selectors, parsed once and matched many times — the one implementation, shared by
the runtime (predicates, cache lookups) and the embedded API server (list/watch filters,
webhook selectors).

Forms accepted by `parse_selector`:
- the string grammar (comma = AND): `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
  `k` (exists), `!k` (absent), `k>n`, `k<n`; keys and values are checked as kube checks them
  and a bad one raises `SelectorError` with kube's message (the API server answers it as a
  400);
- a `metav1.LabelSelector` dict (`matchLabels` + `matchExpressions` with In, NotIn, Exists,
  DoesNotExist), or a plain `{key: value}` map.

Invariants: requirements are ANDed, an empty selector matches everything; `!=` and `notin`
also match objects that lack the key (as kube does); matching never raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_SET_RE = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_BIN_RE = re.compile(r"^\s*([^\s=!<>]+)\s*(==|=|!=|>|<)\s*(\S*)\s*$")
_EXPRESSION_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


class SelectorError(ValueError):
    """A selector that does not parse; the text is kube's message."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
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
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Do these labels match?"""
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        """Do the labels of this object (`metadata.labels`) match?"""
        return self.matches((obj.get("metadata") or {}).get("labels"))

    @property
    def empty(self) -> bool:
        return not self.requirements


EVERYTHING = LabelSelector()


def parse_selector(selector: str | Mapping[str, Any] | LabelSelector | None) -> LabelSelector:
    """A selector from any accepted form (see the module docstring); None/"" match all."""
    if selector is None:
        return EVERYTHING
    if isinstance(selector, LabelSelector):
        return selector
    if isinstance(selector, str):
        return _parse_string(selector)
    if "matchLabels" in selector or "matchExpressions" in selector:
        return from_label_selector(selector)
    return from_match_labels(selector)


def from_match_labels(match_labels: Mapping[str, str]) -> LabelSelector:
    return LabelSelector(tuple(Requirement(k, "=", (str(v),))
                               for k, v in sorted(match_labels.items())))


def from_label_selector(selector: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector dict; an unknown operator raises SelectorError."""
    if not selector:
        return EVERYTHING
    reqs = list(from_match_labels(selector.get("matchLabels") or {}).requirements)
    for expr in selector.get("matchExpressions") or ():
        op = _EXPRESSION_OPS.get(str(expr.get("operator")))
        if op is None:
            raise SelectorError(f'"{expr.get("operator")}" is not a valid label selector '
                                "operator")
        reqs.append(Requirement(str(expr.get("key", "")), op,
                                tuple(str(v) for v in expr.get("values") or ())))
    return LabelSelector(tuple(reqs))


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


def _parse_string(text: str) -> LabelSelector:
    if not text.strip():
        return EVERYTHING
    reqs: list[Requirement] = []
    for raw in _split_top(text):
        part = raw.strip()
        if not part:
            raise SelectorError(
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
                    raise SelectorError(f"unable to parse requirement: for 'gt', 'lt' "
                                        f"operators, exactly one value is required ({text})")
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
        raise SelectorError(f"unable to parse requirement: invalid label key \"{key}\": name "
                            f"part must consist of alphanumeric characters, '-', '_' or '.' "
                            f"({text})")


def _check_value(value: str, text: str) -> None:
    if len(value) > 63 or not _VALUE.match(value):
        raise SelectorError(f"unable to parse requirement: invalid label value: \"{value}\": "
                            f"a valid label must be an empty string or consist of "
                            f"alphanumeric characters, '-', '_' or '.' ({text})")


__all__ = ["EVERYTHING", "LabelSelector", "Requirement", "SelectorError", "from_label_selector",
           "from_match_labels", "parse_selector"]
