"""The Grafana dashboard the chart ships: rendered by Helm, and every query checked against
what a running operator exports.

The ConfigMap is off by default and labelled for the Grafana sidecar when on; its JSON is
the chart's files/grafana-dashboard.json, identical in the chart `asyncop init` writes. Two
Managers run against the embedded API server — one with leader election, one sharded (the
shard metrics exist only there) — and their /metrics are scraped over HTTP; every metric a
panel or variable query names must be among the exported series, with every label the
query filters or groups by (labels Prometheus adds at scrape time excepted).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import ClientConfig
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.leader import LeaderElectionConfig
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.runtime.sharding import ShardingConfig
from asyncop.testing import eventually
from tests.helm.test_chart import CHART, ROOT, of_kind, render

DASHBOARD = CHART / "files" / "grafana-dashboard.json"
SCAFFOLD = ROOT / "asyncop/project/templates/chart/files/grafana-dashboard.json.tmpl"
SCRAPE_LABELS = {"namespace", "pod", "job", "instance", "service", "container", "endpoint"}
"""Labels a Prometheus ServiceMonitor scrape adds to every series."""


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def queries(dash: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, PromQL) of every panel target and every query variable."""
    out = [(f"panel {p['title']!r}", t["expr"]) for p in dash["panels"]
           for t in p.get("targets", [])]
    out += [(f"variable {v['name']!r}", v["query"]["query"])
            for v in dash["templating"]["list"] if v["type"] == "query"]
    return out


def selectors(expr: str) -> list[tuple[str, set[str]]]:
    """(metric, labels it matches on) for every vector selector in `expr`: panel queries
    always carry label matchers (the $namespace filter at least), and a variable's
    `label_values(metric, label)` names its metric first."""
    found = [(m.group(1), set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*[=!]~?", m.group(2))))
             for m in re.finditer(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", expr)]
    bare = re.match(r"label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,", expr)
    if bare:
        found.append((bare.group(1), set()))
    return found


def grouping(expr: str) -> set[str]:
    return {label.strip() for group in re.findall(r"\bby\s*\(([^)]*)\)", expr)
            for label in group.split(",") if label.strip()}


def test_the_dashboard_is_off_by_default_and_labelled_for_the_sidecar_when_on() -> None:
    assert not [d for d in of_kind(render(), "ConfigMap")]
    docs = render({"grafana": {"dashboard": {"enabled": True,
                                             "annotations": {"grafana_folder": "Operators"},
                                             "namespace": "monitoring"}}})
    [cm] = of_kind(docs, "ConfigMap")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "Operators"}
    assert cm["metadata"]["namespace"] == "monitoring"
    assert json.loads(cm["data"]["asyncop-operator.json"]) == dashboard()
    # the chart `asyncop init` writes ships the very same dashboard
    assert SCAFFOLD.read_text() == DASHBOARD.read_text()


def test_the_dashboard_covers_what_the_issue_asks_for() -> None:
    exprs = " ".join(q for _, q in queries(dashboard()))
    for metric in ("controller_runtime_reconcile_total",
                   "controller_runtime_reconcile_errors_total", "workqueue_depth",
                   "workqueue_queue_duration_seconds_bucket",
                   "workqueue_work_duration_seconds_bucket", "asyncop_cache_objects",
                   "asyncop_shards_owned", "leader_election_master_status"):
        assert metric in exprs, metric
    assert "histogram_quantile(0.5, sum by (name, le) (rate(workqueue_work_duration" in exprs
    assert "histogram_quantile(0.99, sum by (name, le) (rate(workqueue_work_duration" in exprs


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


def counting(name: str, mgr: Manager) -> Controller:
    async def reconcile(req: Request) -> Result:
        if req.name.startswith("fail"):
            raise RuntimeError("no")
        return Result(requeue_after=3600) if req.name.startswith("later") else Result()

    return Controller(name, reconciler(reconcile), watches=[for_(CONFIGMAP)], workers=2)


async def scrape(port: int | None) -> dict[str, set[str]]:
    """Every exported sample name with the labels it carries."""
    async with aiohttp.ClientSession() as s, \
            s.get(f"http://127.0.0.1:{port}/metrics") as resp:
        text = await resp.text()
    series: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            series.setdefault(sample.name, set()).update(sample.labels)
    return series


async def test_every_query_names_a_metric_the_operator_exports(server: ApiServer) -> None:
    cfg = ClientConfig(host=server.url)
    leader = Manager(config=cfg, metrics_bind_address="127.0.0.1:0",
                     leader_election=LeaderElectionConfig(name="dash", namespace="default",
                                                          retry_period=0.2, renew_deadline=1,
                                                          lease_duration=2))
    sharded = Manager(config=cfg, metrics_bind_address="127.0.0.1:0",
                      sharding=ShardingConfig(name="dash-shards", namespace="default",
                                              shards=4, retry_period=0.2, renew_deadline=1,
                                              lease_duration=2))
    leader.add(counting("leader-ctl", leader))
    sharded.add(counting("sharded-ctl", sharded))
    async with leader, sharded:
        for name in ("ok", "fail", "later"):
            await leader.client.create(CONFIGMAP, {"metadata": {"name": name,
                                                                "namespace": "default"}})
        # one refused request, so the 401/403 counter has a series to show
        server.faults.fail(verb="get", path="configmaps/refused", status=403)
        with pytest.raises(Exception, match="403"):
            await leader.client.get(CONFIGMAP, "refused", namespace="default")
        await eventually(lambda: leader.is_leader and bool(sharded.shards
                                                           and sharded.shards.held),
                         timeout=20)
        exported: dict[str, set[str]] = {}
        for mgr in (leader, sharded):
            for name, labels in (await scrape(mgr.metrics_port)).items():
                exported.setdefault(name, set()).update(labels)
    checked = 0
    for where, expr in queries(dashboard()):
        if where.startswith("panel"):
            assert 'namespace=~"$namespace"' in expr, f"{where}: not filtered by $namespace"
        found = selectors(expr)
        assert found, f"{where}: no metric in {expr!r}"
        for metric, labels in found:
            assert metric in exported, f"{where}: {metric} is not exported"
            own = labels - SCRAPE_LABELS
            assert own <= exported[metric], f"{where}: {metric} has no label {own}"
            wanted = grouping(expr) - SCRAPE_LABELS - {"le"}
            assert wanted <= exported[metric] | {"le"}, f"{where}: {metric} lacks {wanted}"
            checked += 1
    assert checked >= 25
