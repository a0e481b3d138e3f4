"""The simple JSONPath subset of CRD `additionalPrinterColumns` (and kubectl-style paths).

`find(obj, path)` returns every value a path selects, in order. Supported forms: optional
`{...}` wrapper and leading `$`; `.a.b`; `['a.b']` / `["a"]` keys; `[0]`, `[-1]`, `[*]`,
`.*`; filters `[?(@.type=="Ready")]` (`==`, `!=`, with a string, number or bool literal,
or `[?(@.x)]` for existence) where `@.x` may itself be a dotted path.

Invariant: a path that selects nothing returns `[]` (never raises for missing data); only a
syntactically broken path raises `ValueError`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

_FILTER = re.compile(r"^\?\(\s*@((?:\.[^=!\s]+)*)\s*(?:(==|!=)\s*(.+?))?\s*\)$")
Step = tuple[str, Any]


@lru_cache(maxsize=256)
def parse(path: str) -> tuple[Step, ...]:
    p = path.strip()
    if p.startswith("{") and p.endswith("}"):
        p = p[1:-1].strip()
    if p.startswith("$"):
        p = p[1:]
    steps: list[Step] = []
    i = 0
    while i < len(p):
        ch = p[i]
        if ch == ".":
            j = i + 1
            while j < len(p) and p[j] not in ".[":
                if p[j] == "\\" and j + 1 < len(p):
                    j += 1
                j += 1
            name = p[i + 1 : j].replace("\\.", ".")
            if name == "*":
                steps.append(("all", None))
            elif name:
                steps.append(("key", name))
            i = j
        elif ch == "[":
            j = _closing(p, i)
            steps.append(_bracket(p[i + 1 : j].strip()))
            i = j + 1
        else:
            raise ValueError(f"unexpected {ch!r} at {i} in {path!r}")
    return tuple(steps)


def _closing(p: str, i: int) -> int:
    depth = 0
    quote = ""
    for j in range(i, len(p)):
        c = p[j]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unterminated [ in {p!r}")


def _literal(text: str) -> Any:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    try:
        return json.loads(t)
    except ValueError:
        return t


def _bracket(inner: str) -> Step:
    if inner == "*":
        return ("all", None)
    if inner.startswith("?"):
        m = _FILTER.match(inner)
        if not m:
            raise ValueError(f"unsupported filter {inner!r}")
        sub = parse(m.group(1)) if m.group(1) else ()
        op = m.group(2) or "exists"
        value = _literal(m.group(3)) if m.group(3) is not None else None
        return ("filter", (sub, op, value))
    if inner[:1] in "'\"":
        return ("key", _literal(inner))
    try:
        return ("index", int(inner))
    except ValueError:
        raise ValueError(f"unsupported subscript [{inner}]") from None


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _apply(values: list[Any], step: Step) -> list[Any]:
    kind, arg = step
    out: list[Any] = []
    for v in values:
        if kind == "key":
            if isinstance(v, dict) and arg in v:
                out.append(v[arg])
        elif kind == "index":
            if isinstance(v, list) and -len(v) <= arg < len(v):
                out.append(v[arg])
        elif kind == "all":
            if isinstance(v, list):
                out.extend(v)
            elif isinstance(v, dict):
                out.extend(v.values())
        else:
            sub, op, lit = arg
            items = v if isinstance(v, list) else [v]
            for item in items:
                found = _run([item], sub)
                if op == "exists":
                    ok = bool(found)
                elif op == "==":
                    ok = any(_equal(f, lit) for f in found)
                else:
                    ok = bool(found) and not any(_equal(f, lit) for f in found)
                if ok:
                    out.append(item)
    return out


def _run(values: list[Any], steps: tuple[Step, ...]) -> list[Any]:
    for step in steps:
        values = _apply(values, step)
        if not values:
            break
    return values


def find(obj: Any, path: str) -> list[Any]:
    """Every value `path` selects in `obj` (empty when nothing matches)."""
    return _run([obj], parse(path))
