"""A small PromQL evaluator for the chart's dashboard queries, over scraped samples.

There is no Prometheus or Grafana here, so bench/dashboard.py evaluates the dashboard's own
queries itself: this module parses exactly the forms the dashboard uses —

    sum|max|min|avg by (labels) (expr)
    rate(selector[range]) · increase(selector[range])
    histogram_quantile(q, expr)
    metric{label=~"re", label="v", ...}

— and evaluates them at each step over samples scraped from the operators' /metrics.
Semantics follow Prometheus where it matters for a picture: regex matchers are anchored,
an instant selector takes the latest sample within 10 s, `rate` is the counter increase over
the window (resets handled) divided by the time between the window's first and last samples
(without Prometheus' extrapolation to the window's edges), and `histogram_quantile`
interpolates linearly inside the bucket that holds the rank, as Prometheus does. Anything
else raises ValueError: the picture never shows a query it could not evaluate.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

Labels = tuple[tuple[str, str], ...]
Vector = list[tuple[dict[str, str], float]]
LOOKBACK = 10.0

_TOKEN = re.compile(r'\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)'
                    r'|(?P<str>"(?:[^"\\]|\\.)*")|(?P<op>=~|!~|!=|[=(){}\[\],]))')


@dataclass
class Series:
    """Samples of one metric name, per label set, in time order."""

    points: dict[Labels, list[tuple[float, float]]] = field(default_factory=dict)

    def add(self, labels: dict[str, str], t: float, v: float) -> None:
        self.points.setdefault(tuple(sorted(labels.items())), []).append((t, v))


class Store:
    """Scraped samples by metric name."""

    def __init__(self) -> None:
        self.metrics: dict[str, Series] = {}

    def add(self, name: str, labels: dict[str, str], t: float, v: float) -> None:
        self.metrics.setdefault(name, Series()).add(labels, t, v)


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot parse {text[pos:]!r}")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        yield kind, m.group(kind)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = list(_tokens(text))
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise ValueError(f"expected {value!r}, got {tok!r}")
        self.i += 1
        return tok

    def expr(self) -> Any:
        kind, word = self.take()
        if kind != "ident":
            raise ValueError(f"unexpected {word!r}")
        if word in ("sum", "max", "min", "avg"):
            self.take("by")
            self.take("(")
            labels = []
            while self.peek() != ("op", ")"):
                labels.append(self.take()[1])
                if self.peek() == ("op", ","):
                    self.take(",")
            self.take(")")
            self.take("(")
            inner = self.expr()
            self.take(")")
            return ("agg", word, tuple(labels), inner)
        if word in ("rate", "increase"):
            self.take("(")
            sel = self.selector(self.take()[1])
            self.take(")")
            if sel[3] is None:
                raise ValueError(f"{word}() needs a range")
            return (word, sel)
        if word == "histogram_quantile":
            self.take("(")
            q = float(self.take()[1])
            self.take(",")
            inner = self.expr()
            self.take(")")
            return ("quantile", q, inner)
        return self.selector(word)

    def selector(self, name: str) -> Any:
        matchers = []
        if self.peek() == ("op", "{"):
            self.take("{")
            while self.peek() != ("op", "}"):
                label = self.take()[1]
                op = self.take()[1]
                value = self.take()[1][1:-1].encode().decode("unicode_escape")
                matchers.append((label, op, value))
                if self.peek() == ("op", ","):
                    self.take(",")
            self.take("}")
        window = None
        if self.peek() == ("op", "["):
            self.take("[")
            amount, unit = self.take()[1], self.take()[1]
            window = float(amount) * {"s": 1, "m": 60}[unit]
            self.take("]")
        return ("sel", name, tuple(matchers), window)


def parse(text: str, *, variables: dict[str, str], rate_interval: float) -> Any:
    """The query's tree, with Grafana's variables substituted ($__rate_interval included)."""
    text = text.replace("$__rate_interval", f"{rate_interval:g} s")
    for name, value in variables.items():
        text = text.replace(f"${name}", value)
    p = _Parser(text)
    tree = p.expr()
    if p.peek() is not None:
        raise ValueError(f"trailing {p.peek()!r}")
    return tree


def _matches(labels: Labels, matchers: tuple[tuple[str, str, str], ...]) -> bool:
    have = dict(labels)
    for label, op, value in matchers:
        got = have.get(label, "")
        if (op == "=" and got != value) or (op == "!=" and got == value):
            return False
        if op in ("=~", "!~") and (re.fullmatch(value, got) is not None) != (op == "=~"):
            return False
    return True


def _window(points: list[tuple[float, float]], t: float, w: float) -> list[tuple[float, float]]:
    times = [p[0] for p in points]
    return points[bisect_right(times, t - w):bisect_right(times, t)]


def evaluate(tree: Any, store: Store, t: float) -> Vector:
    kind = tree[0]
    if kind == "sel":
        _, name, matchers, _ = tree
        out: Vector = []
        for labels, points in (store.metrics.get(name) or Series()).points.items():
            if not _matches(labels, matchers):
                continue
            recent = _window(points, t, LOOKBACK)
            if recent:
                out.append((dict(labels), recent[-1][1]))
        return out
    if kind in ("rate", "increase"):
        _, (_, name, matchers, w) = tree
        out = []
        for labels, points in (store.metrics.get(name) or Series()).points.items():
            if not _matches(labels, matchers):
                continue
            win = _window(points, t, w)
            if len(win) < 2:
                continue
            grown = sum(b[1] - a[1] if b[1] >= a[1] else b[1] for a, b in pairwise(win))
            span = win[-1][0] - win[0][0]
            value = grown if kind == "increase" else (grown / span if span > 0 else 0.0)
            out.append((dict(labels), value))
        return out
    if kind == "agg":
        _, op, by, inner = tree
        groups: dict[Labels, list[float]] = {}
        for labels, value in evaluate(inner, store, t):
            key = tuple((k, labels.get(k, "")) for k in by)
            groups.setdefault(key, []).append(value)
        fn = {"sum": sum, "max": max, "min": min,
              "avg": lambda vs: sum(vs) / len(vs)}[op]
        return [(dict(key), float(fn(values))) for key, values in groups.items()]
    if kind == "quantile":
        _, q, inner = tree
        buckets: dict[Labels, list[tuple[float, float]]] = {}
        for labels, value in evaluate(inner, store, t):
            le = labels.pop("le", None)
            if le is None:
                continue
            buckets.setdefault(tuple(sorted(labels.items())), []).append((float(le), value))
        return [(dict(key), _quantile(q, sorted(bs))) for key, bs in buckets.items()]
    raise ValueError(f"cannot evaluate {kind}")


def _quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Prometheus' histogramQuantile over cumulative (upper bound, count) buckets."""
    if not buckets or buckets[-1][0] != math.inf:
        return math.nan
    total = buckets[-1][1]
    if total <= 0:
        return math.nan
    rank = q * total
    lower, below = 0.0, 0.0
    for upper, count in buckets:
        if count >= rank:
            if upper == math.inf:
                return lower
            if count == below:
                return upper
            return lower + (upper - lower) * (rank - below) / (count - below)
        lower, below = upper, count
    return math.nan


def legend(fmt: str, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt)
