"""The chart's Grafana dashboard, drawn from real metrics of a bench run (docs/observability.md).

There is no Grafana or Prometheus here, so this does their part honestly and says so:

1. runs the embedded API server (bundled CRDs, pods that complete at once) and two replicas
   of the bundled `at` operator (`asyncop run --controllers at --sharding --shards 8`, each
   with its metrics on a loopback port), and drives a load: 3,000 due Ats at ~100/s, a burst
   of 2,000 Ats scheduled 30-60 s ahead (their timers fire later), and a window of 409
   Conflicts on Ats' status writes (the API server's fault injection) so errors and retries
   show;
2. scrapes both replicas' /metrics every second, adding the `namespace` and `pod` labels a
   ServiceMonitor scrape would add;
3. evaluates every panel's PromQL from helm/asyncop/files/grafana-dashboard.json with
   bench/_promql.py (dashboard variables set to All, `$__rate_interval` = 5 s) and draws the
   panels at their grid positions with matplotlib, in Grafana's dark colours.

Usage: `python bench/dashboard.py [--seconds 100] [--out docs/images/dashboard.png]
[--samples samples.json | --from-samples samples.json]` (needs matplotlib: `pip install
matplotlib`). The leader panel is
empty in this run: the replicas shard the work instead of electing a leader.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p != _HERE] + [_HERE]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402
from typing import Any  # noqa: E402

import aiohttp  # noqa: E402
from _harness import BENCH, Process, Workdir  # noqa: E402
from _promql import Store, evaluate, legend, parse  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from asyncop.apiserver import ApiServer  # noqa: E402
from asyncop.apiserver.main import apply_crd_dir  # noqa: E402
from asyncop.apiserver.simulators.config import SimulatorConfig  # noqa: E402

ROOT = BENCH.parent
DASHBOARD = ROOT / "helm" / "asyncop" / "files" / "grafana-dashboard.json"
AT_PATH = "/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/{ns}/ats"
NS = "default"
REPLICAS = 2
COLOURS = ["#73BF69", "#F2CC0C", "#8AB8FF", "#FF780A", "#F2495C", "#5794F2", "#B877D9",
           "#FADE2A", "#37872D", "#C4162A"]
BG, PANEL, TEXT, GRID = "#111217", "#181b1f", "#ccccdc", "#2c3235"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def at(name: str, when: datetime) -> dict[str, Any]:
    return {"apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"schedule": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "command": "true"}}


async def scrape(http: aiohttp.ClientSession, ports: list[int], store: Store, t: float,
                 raw: list[dict[str, Any]]) -> None:
    for i, port in enumerate(ports):
        try:
            async with http.get(f"http://127.0.0.1:{port}/metrics") as resp:
                text = await resp.text()
        except aiohttp.ClientError:
            continue
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                labels = {**s.labels, "namespace": "asyncop-system", "pod": f"asyncop-{i}"}
                store.add(s.name, labels, t, float(s.value))
                raw.append({"t": t, "name": s.name, "labels": labels, "value": s.value})


async def drive(server: ApiServer, seconds: float, ports: list[int], store: Store,
                raw: list[dict[str, Any]]) -> float:
    """The load, while scraping every second; returns the run's length in seconds."""
    url = server.url + AT_PATH.format(ns=NS)
    start = time.monotonic()
    async with aiohttp.ClientSession() as http:
        async def post(body: dict[str, Any]) -> None:
            async with http.post(url, json=body) as resp:
                await resp.read()

        async def load() -> None:
            past = datetime(2020, 1, 1, tzinfo=UTC)
            for i in range(3000):  # 0-30 s: due Ats at ~100/s
                await post(at(f"due-{i}", past))
                await asyncio.sleep(max(0.0, start + i / 100 - time.monotonic()))
            now = datetime.now(UTC)
            burst = [post(at(f"later-{i}", now + timedelta(seconds=30 + 30 * i / 2000)))
                     for i in range(2000)]  # 30 s: a burst, due 30-60 s later
            for k in range(0, len(burst), 64):
                await asyncio.gather(*burst[k:k + 64])
            await asyncio.sleep(max(0.0, start + 40 - time.monotonic()))
            server.faults.fail(verb="update", path="/status", status=409, count=400)
            for i in range(400):  # 40-50 s: due Ats whose status writes conflict
                await post(at(f"conflict-{i}", past))
                await asyncio.sleep(0.025)

        driver = asyncio.create_task(load())
        while time.monotonic() - start < seconds:
            t = time.monotonic() - start
            await scrape(http, ports, store, t, raw)
            await asyncio.sleep(max(0.0, start + math.floor(t) + 1 - time.monotonic()))
        await driver
    return time.monotonic() - start


async def run(seconds: float) -> tuple[Store, list[dict[str, Any]], float]:
    work = Workdir("dashboard")
    server = ApiServer(simulators=SimulatorConfig(pod_run_duration=0.0),  # type: ignore[arg-type]
                       history=200_000, watch_queue_size=100_000)
    await server.start()
    ops: list[Process] = []
    try:
        apply_crd_dir(server.store, str(ROOT / "crds"))
        kc = str(server.write_kubeconfig(work.path / "kubeconfig"))
        ports = [free_port() for _ in range(REPLICAS)]
        for i, port in enumerate(ports):
            argv = [sys.executable, "-m", "asyncop", "run", "--controllers", "at",
                    "--kubeconfig", kc, "--sharding", "--shards", "8", "--lease-duration", "6",
                    "--renew-deadline", "4", "--retry-period", "1", "--log-format", "json",
                    "--metrics-bind-address", f"127.0.0.1:{port}"]
            ops.append(Process(f"asyncop-{i}", argv, log=work.path / f"op-{i}.log",
                               env={"POD_NAME": f"asyncop-{i}"}))
        await asyncio.sleep(8)  # both replicas up and sharing the shards
        store, raw = Store(), []  # type: ignore[var-annotated]
        length = await drive(server, seconds, ports, store, raw)
        return store, raw, length
    finally:
        for op in ops:
            op.stop()
        await server.stop()
        work.cleanup()


def render(store: Store, length: float, out: Path) -> list[str]:
    """Draw every panel at its grid position; returns one line per panel (series drawn)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dash = json.loads(DASHBOARD.read_text())
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in dash["panels"])
    unit_px = 0.42
    fig = plt.figure(figsize=(24 * 0.9, rows * unit_px), facecolor=BG)
    variables = {"namespace": ".*", "controller": ".*"}
    steps = [float(t) for t in range(5, int(length))]
    report = []
    for panel in dash["panels"]:
        g = panel["gridPos"]
        left, width = g["x"] / 24, g["w"] / 24
        top, height = g["y"] / rows, g["h"] / rows
        if panel["type"] == "row":
            fig.text(left + 0.004, 1 - top - height * 0.6, panel["title"], color=TEXT,
                     fontsize=13, fontweight="bold")
            continue
        ax = fig.add_axes((left + 0.026, 1 - top - height + 0.035, width - 0.032,
                           height - 0.075))
        ax.set_facecolor(PANEL)
        for side in ax.spines.values():
            side.set_color(GRID)
        ax.tick_params(colors=TEXT, labelsize=7)
        ax.grid(color=GRID, linewidth=0.6)
        ax.set_title(panel["title"], color=TEXT, fontsize=10, loc="left")
        drawn = 0
        for target in panel["targets"]:
            tree = parse(target["expr"], variables=variables, rate_interval=5)
            lines: dict[str, list[tuple[float, float]]] = {}
            for t in steps:
                for labels, value in evaluate(tree, store, t):
                    if not math.isnan(value):
                        lines.setdefault(legend(target["legendFormat"], labels), []).append(
                            (t, value))
            for name, points in sorted(lines.items()):
                colour = COLOURS[drawn % len(COLOURS)]
                ax.plot([p[0] for p in points], [p[1] for p in points], color=colour,
                        linewidth=1.1, label=name)
                drawn += 1
        unit = panel["fieldConfig"]["defaults"].get("unit", "short")
        if unit == "s":
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_seconds))
        elif unit == "ops":
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
                lambda v, _: f"{v:g}/s"))
        ax.set_xlim(0, length)
        ax.set_ylim(bottom=0)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:.0f}s"))
        if drawn:
            ax.legend(loc="upper left", fontsize=6, ncol=2, frameon=False, labelcolor=TEXT)
        else:
            ax.text(0.5, 0.5, "No data", color=TEXT, ha="center", va="center",
                    transform=ax.transAxes)
        report.append(f"{panel['title']}: {drawn} series")
    fig.text(0.995, 0.002, "rendered by bench/dashboard.py from a bench run's /metrics "
             "(no Grafana)", color="#8e8e8e", fontsize=7, ha="right")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=80, facecolor=BG)
    return report


def _seconds(v: float, _: Any) -> str:
    if v == 0:
        return "0"
    return f"{v * 1000:.3g} ms" if v < 1 else f"{v:.3g} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=100.0)
    parser.add_argument("--out", default=str(ROOT / "docs" / "images" / "dashboard.png"))
    parser.add_argument("--samples", default="", help="also write the scraped samples here")
    parser.add_argument("--from-samples", default="", metavar="PATH",
                        help="draw from samples written by --samples (no run)")
    args = parser.parse_args()
    if args.from_samples:
        raw = json.loads(Path(args.from_samples).read_text())
        store = Store()
        for s in raw:
            store.add(s["name"], s["labels"], s["t"], float(s["value"]))
        length = max(s["t"] for s in raw) + 1
    else:
        store, raw, length = asyncio.run(run(args.seconds))
    if args.samples:
        Path(args.samples).write_text(json.dumps(raw))
    for line in render(store, length, Path(args.out)):
        print(line)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
