"""bench/_promql.py, the evaluator that draws the dashboard picture: it parses every query of
the chart's dashboard, and computes rates, aggregations and quantiles as Prometheus does.

Prometheus' reference for `histogram_quantile` is `histogramQuantile` (promql/quantile.go):
linear interpolation inside the bucket holding the rank, the lower bound of the +Inf
bucket when the rank falls there, NaN without observations.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _promql import Store, _quantile, evaluate, legend, parse

DASHBOARD = Path(__file__).resolve().parents[2] / "helm/asyncop/files/grafana-dashboard.json"
VARS = {"namespace": ".*", "controller": ".*"}


def test_every_dashboard_query_parses() -> None:
    dash = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 20
    for expr in exprs:
        assert parse(expr, variables=VARS, rate_interval=5)[0] in ("agg", "quantile")


def test_rate_sum_by_and_matchers() -> None:
    store = Store()
    for t in range(11):
        store.add("reqs_total", {"controller": "a", "result": "success"}, t, 10.0 * t)
        store.add("reqs_total", {"controller": "a", "result": "error"}, t, 2.0 * t)
        store.add("reqs_total", {"controller": "b", "result": "success"}, t, 1.0 * t)
    tree = parse('sum by (controller) (rate(reqs_total{controller=~"a|b"}[$__rate_interval]))',
                 variables=VARS, rate_interval=5)
    assert sorted((v["controller"], r) for v, r in evaluate(tree, store, 10.0)) == [
        ("a", 12.0), ("b", 1.0)]
    only_a = parse('max by (result) (reqs_total{controller="a", result!="error"})',
                   variables=VARS, rate_interval=5)
    assert evaluate(only_a, store, 10.0) == [({"result": "success"}, 100.0)]
    # a counter reset inside the window counts what came after it
    reset = Store()
    for t, v in [(0, 5.0), (1, 8.0), (2, 1.0), (3, 4.0)]:
        reset.add("c_total", {}, t, v)
    inc = parse("sum by (x) (increase(c_total{}[10s]))", variables={}, rate_interval=5)
    assert evaluate(inc, reset, 3.0) == [({"x": ""}, 3.0 + 1.0 + 3.0)]


def test_histogram_quantile_interpolates_like_prometheus() -> None:
    buckets = [(0.1, 10.0), (0.5, 30.0), (1.0, 40.0), (math.inf, 40.0)]
    assert _quantile(0.5, buckets) == pytest.approx(0.1 + 0.4 * (20 - 10) / (30 - 10))
    assert _quantile(0.25, buckets) == pytest.approx(0.1 * 10 / 10)
    assert _quantile(0.99, [(1.0, 1.0), (math.inf, 2.0)]) == 1.0  # in +Inf: its lower bound
    assert math.isnan(_quantile(0.5, [(1.0, 0.0), (math.inf, 0.0)]))
    store = Store()
    for le, count in [("0.1", 10.0), ("0.5", 30.0), ("1.0", 40.0), ("+Inf", 40.0)]:
        store.add("d_bucket", {"name": "q", "le": le}, 0.0, 0.0)
        store.add("d_bucket", {"name": "q", "le": le}, 5.0, count)
    tree = parse("histogram_quantile(0.5, sum by (name, le) (rate(d_bucket{}[10s])))",
                 variables={}, rate_interval=5)
    [(labels, value)] = evaluate(tree, store, 5.0)
    assert labels == {"name": "q"} and value == pytest.approx(0.3)


def test_legends_and_unsupported_queries() -> None:
    assert legend("{{controller}} p99", {"controller": "at"}) == "at p99"
    with pytest.raises(ValueError, match="cannot parse"):
        parse("a{x='y'}", variables={}, rate_interval=5)
    with pytest.raises(ValueError, match="needs a range"):
        parse("rate(a{})", variables={}, rate_interval=5)
