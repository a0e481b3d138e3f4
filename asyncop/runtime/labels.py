"""Label selectors on the client side: parse once, match many objects.

Accepts the Kubernetes string syntax (`app=web,tier!=db,env in (a,b),env notin (c),owner,
!legacy`; `=` and `==` are the same) or a dict: either a `metav1.LabelSelector`
(`{"matchLabels": {...}, "matchExpressions": [{"key", "operator", "values"}]}`) or a plain
`{key: value}` map. Requirements are ANDed; an empty selector matches everything.
Invariant: `!=` and `notin` also match objects that lack the key, as on the API server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Op = Literal["In", "NotIn", "Exists", "DoesNotExist"]
_OPS: dict[str, Op] = {
    "in": "In", "notin": "NotIn", "exists": "Exists", "doesnotexist": "DoesNotExist",
}  # fmt: skip

_TOKEN = re.compile(r"\s*(\(|\)|,|!=|==|=|!|[^\s(),!=]+)")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: Op
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op == "Exists":
            return self.key in labels
        if self.op == "DoesNotExist":
            return self.key not in labels
        present = self.key in labels and labels[self.key] in self.values
        return present if self.op == "In" else not present


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)


def parse_selector(selector: str | Mapping[str, Any] | LabelSelector) -> LabelSelector:
    """Parse a selector string or dict; raises ValueError with the offending text."""
    if isinstance(selector, LabelSelector):
        return selector
    if isinstance(selector, str):
        return _parse_string(selector)
    if "matchLabels" in selector or "matchExpressions" in selector:
        reqs = [_eq(k, v) for k, v in (selector.get("matchLabels") or {}).items()]
        for expr in selector.get("matchExpressions") or []:
            op = _OPS.get(str(expr.get("operator", "")).lower())
            if op is None:
                raise ValueError(f"unknown label selector operator {expr.get('operator')!r}")
            reqs.append(Requirement(expr["key"], op, frozenset(expr.get("values") or ())))
        return LabelSelector(tuple(reqs))
    return LabelSelector(tuple(_eq(k, v) for k, v in selector.items()))


def _eq(key: str, value: str) -> Requirement:
    return Requirement(key, "In", frozenset((value,)))


def _parse_string(text: str) -> LabelSelector:
    tokens = _tokenize(text)
    reqs: list[Requirement] = []
    i = 0

    def take() -> str:
        nonlocal i
        if i >= len(tokens):
            raise ValueError(f"incomplete label selector {text!r}")
        i += 1
        return tokens[i - 1]

    while i < len(tokens):
        tok = take()
        if tok == "!":
            reqs.append(Requirement(_name(take(), text), "DoesNotExist"))
        else:
            key = _name(tok, text)
            nxt = tokens[i] if i < len(tokens) else ","
            if nxt == ",":
                reqs.append(Requirement(key, "Exists"))
            elif nxt in ("=", "==", "!="):
                take()
                value = take() if i < len(tokens) and tokens[i] != "," else ""
                req = _eq(key, value)
                reqs.append(req if nxt != "!=" else Requirement(key, "NotIn", req.values))
            elif nxt in ("in", "notin"):
                take()
                reqs.append(Requirement(key, _OPS[nxt], _value_set(take, text)))
            else:
                raise ValueError(f"unexpected {nxt!r} in label selector {text!r}")
        if i < len(tokens) and take() != ",":
            raise ValueError(f"expected ',' in label selector {text!r}")
    return LabelSelector(tuple(reqs))


def _value_set(take: Any, text: str) -> frozenset[str]:
    if take() != "(":
        raise ValueError(f"expected '(' in label selector {text!r}")
    values: set[str] = set()
    while True:
        tok = take()
        if tok == ")":
            return frozenset(values)
        if tok != ",":
            values.add(tok)


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"bad label selector {text!r}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def _name(tok: str, text: str) -> str:
    if tok in ("(", ")", ",", "=", "==", "!=", "!"):
        raise ValueError(f"expected a label key in selector {text!r}")
    return tok
