"""Sharded At operators: throughput with 1 and 2 replicas, watch traffic per replica, churn.

Cases (one JSON line each, `bench: "sharding"`):

- `scale`: N due Ats through `asyncop run --controllers at --sharding` with 1, then 2
  replicas (each on a fresh API server process; the replicas hold all 16 shards before the
  clock starts). Reports Ats/s, the replicas' CPU seconds per At (summed), the server's CPU
  separately, and per replica the watch events received for Ats and for pods
  (`asyncop_watch_events_total` from its /metrics) and the Ats in its cache. With the server
  sharding the list and watch (KEP-5866), each replica receives about 1/N of the At events;
  pods are owned objects, routed by their owner's uid, which a server cannot hash, so every
  replica still watches all of them. The end state is checked: every At DONE/Succeeded, one
  pod per At.
- `heavy`: the `scale` case for an operator whose own CPU is the bottleneck
  (bench/peers/heavy_at.py: the At controller, every reconcile first spending `--heavy-ms`
  of CPU, 4 by default), 1 then 2 replicas, N due Ats (`--heavy-ats`). Reports what `scale`
  does plus each process's CPU per At, the speed-up, and the concurrency check of `churn`.
  1 vs 2 replicas alternate `--rounds` times; the medians are reported with every round.
- `churn`: N Ats with 3 replicas, a fourth joining, one stopped (SIGTERM) and one SIGKILLed
  mid-run, Leases of 3 s; every At DONE, one pod each, and no At reconciled by two replicas
  at once (from the replicas' `reconcile done` debug traces, on the system-wide monotonic
  clock).

Usage: `python bench/sharding.py [--ats N] [--heavy-ats N] [--heavy-ms 4] [--churn-ats N]
[--only scale,heavy,churn]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from _harness import (
    Process,
    Server,
    Workdir,
    create,
    create_all,
    ensure_namespace,
    follow,
    list_items,
    list_rv,
    load,
    session,
)

NS = "default"
AT_PATH = "/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/{ns}/ats"
POD_PATH = "/api/v1/namespaces/{ns}/pods"
DUE = "2020-01-01T00:00:00Z"


def emit(line: dict[str, Any]) -> None:
    print(orjson.dumps({"bench": "sharding", **line, "load": load()}).decode(), flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


HEAVY = str(Path(__file__).resolve().parent / "peers" / "heavy_at.py") + ":OPERATOR"


class Replica:
    def __init__(self, name: str, work: Workdir, server: Server, *, fast: bool = False,
                 debug: bool = False, target: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.port = free_port()
        argv = [sys.executable, "-m", "asyncop", "run", *([target] if target else []),
                "--controllers", "at", "--sharding",
                "--kubeconfig", str(server.kubeconfig), "--log-format", "json",
                "--metrics-bind-address", f"127.0.0.1:{self.port}",
                "--health-probe-bind-address", "0"]
        if fast:
            argv += ["--lease-duration", "3", "--renew-deadline", "2", "--retry-period", "0.3"]
        if debug:
            argv += ["--log-level", "debug"]
        self.proc = Process(name, argv, log=work.path / f"{name}.log", env=env)

    async def metrics(self, http: aiohttp.ClientSession) -> dict[str, float]:
        async with http.get(f"http://127.0.0.1:{self.port}/metrics") as resp:
            text = await resp.text()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out


def at_body(name: str) -> dict[str, Any]:
    return {"apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
            "metadata": {"name": name}, "spec": {"schedule": DUE, "command": "true"}}


class DoneWatch:
    """Follows the Ats' watch from `rv` and counts the ones DONE (cheap for the server)."""

    def __init__(self, http: aiohttp.ClientSession, ats: str, rv: str) -> None:
        self.done: set[str] = set()
        self.target = -1
        self.reached = asyncio.Event()

        def on_event(event: dict[str, Any], _: float) -> bool:
            if (event["object"].get("status") or {}).get("phase") == "DONE":
                self.done.add(event["object"]["metadata"]["name"])
            if len(self.done) >= self.target >= 0:
                self.reached.set()
            return False

        self.task = asyncio.create_task(follow(http, ats, rv, on_event, timeout=3600))

    async def until(self, n: int, *, timeout: float, replicas: list[Replica]) -> None:
        self.target = n
        self.reached.clear()
        if len(self.done) >= n:
            return
        try:
            await asyncio.wait_for(self.reached.wait(), timeout)
        except TimeoutError:
            tails = "\n".join(r.proc.tail(5) for r in replicas)
            raise TimeoutError(f"{len(self.done)} of {n} Ats DONE after {timeout}s\n"
                               f"{tails}") from None

    def close(self) -> None:
        self.task.cancel()


async def shards_settled(http: aiohttp.ClientSession, replicas: list[Replica],
                         shards: int = 16) -> None:
    """Until the replicas hold every shard, each its fair share (no hand-over pending)."""
    share = {shards // len(replicas), -(-shards // len(replicas))}
    for _ in range(600):
        owned: list[float] = []
        for r in replicas:
            r.proc.check_alive()
            try:
                m = await r.metrics(http)
            except aiohttp.ClientError:
                break
            owned.append(sum(v for k, v in m.items() if k.startswith("asyncop_shards_owned")))
        else:
            if sum(owned) == shards and set(owned) <= share:
                return
        await asyncio.sleep(0.1)
    raise TimeoutError("the replicas never settled on their shares")


async def end_state(http: aiohttp.ClientSession, url: str, n: int) -> dict[str, int]:
    items = await list_items(http, url + AT_PATH.format(ns=NS))
    pods = await list_items(http, url + POD_PATH.format(ns=NS))
    per_at: dict[str, int] = {}
    for pod in pods:
        app = (pod["metadata"].get("labels") or {}).get("app", "")
        per_at[app] = per_at.get(app, 0) + 1
    return {"not_succeeded": sum((i.get("status") or {}).get("result") != "Succeeded"
                                 for i in items),
            "ats_without_one_pod": sum(1 for i in items
                                       if per_at.get(i["metadata"]["name"]) != 1),
            "ats_found": len(items)}


async def scale(n: int, replicas: int, *, heavy_ms: float | None = None) -> dict[str, Any]:
    """The `scale` case; with `heavy_ms`, the `heavy` one (debug logs: the overlap check)."""
    work = Workdir("sharding")
    server = Server(work.path)
    rs: list[Replica] = []
    heavy = heavy_ms is not None
    try:
        rs = [Replica(f"replica-{i}", work, server, debug=heavy,
                      target=HEAVY if heavy else None,
                      env={"HEAVY_MS": str(heavy_ms)} if heavy else None)
              for i in range(replicas)]
        async with session() as http:
            ats = server.url + AT_PATH.format(ns=NS)
            await ensure_namespace(http, server.url, NS)
            await shards_settled(http, rs)
            done = DoneWatch(http, ats, await list_rv(http, ats))
            await create(http, ats, at_body("warmup"))
            await done.until(1, timeout=60, replicas=rs)
            before = [await r.metrics(http) for r in rs]
            cpu0, server0 = [r.proc.cpu() for r in rs], server.proc.cpu()
            start = time.perf_counter()
            await create_all(http, ats, [at_body(f"at-{i}") for i in range(n)],
                             concurrency=16)
            await done.until(n + 1, timeout=60 + n * 0.1, replicas=rs)
            seconds = time.perf_counter() - start
            done.close()
            cpus = [r.proc.cpu() - c for r, c in zip(rs, cpu0, strict=True)]
            cpu = sum(cpus)
            after = [await r.metrics(http) for r in rs]
            per_replica = []
            for r, b, a in zip(rs, before, after, strict=True):
                def delta(key: str, a: dict[str, float] = a, b: dict[str, float] = b) -> int:
                    return round(a.get(key, 0) - b.get(key, 0))
                per_replica.append({
                    "replica": r.name,
                    "at_watch_events": delta(
                        'asyncop_watch_events_total{kind="ats.cnat.programming-kubernetes.info"}'),
                    "pod_watch_events": delta('asyncop_watch_events_total{kind="pods"}'),
                    "cached_ats": round(a.get(
                        'asyncop_cache_objects{kind="ats.cnat.programming-kubernetes.info"}', 0)),
                    "shards": round(sum(v for k, v in a.items()
                                        if k.startswith("asyncop_shards_owned"))),
                    "cpu_s": round(cpus[len(per_replica)], 2)})
            extra: dict[str, Any] = {}
            if heavy:
                extra = {"heavy_ms": heavy_ms,
                         "concurrent_reconciles": concurrent_keys([r.proc.log for r in rs])}
            return {"case": "heavy" if heavy else "scale", "replicas": replicas, "ats": n,
                    **extra,
                    "seconds": round(seconds, 2), "ats_per_s": round(n / seconds, 1),
                    "cpu_ms_per_at": round(cpu / n * 1000, 2),
                    "server_cpu_s": round(server.proc.cpu() - server0, 2),
                    "per_replica": per_replica, **(await end_state(http, server.url, n + 1))}
    finally:
        for r in rs:
            r.proc.stop()
        server.stop()
        work.cleanup()


def concurrent_keys(logs: list[Path]) -> int:
    spans: dict[str, list[tuple[float, float, str]]] = {}
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            if '"reconcile done"' in line:
                event = json.loads(line)
                spans.setdefault(event["key"], []).append(
                    (event["started"], event["ended"], log.stem))
    bad = 0
    for runs in spans.values():
        latest: dict[str, float] = {}
        for start, end, who in sorted(runs):
            if any(o != who and start < last for o, last in latest.items()):
                bad += 1
                break
            latest[who] = max(end, latest.get(who, end))
    return bad


async def churn(n: int) -> dict[str, Any]:
    work = Workdir("sharding-churn")
    server = Server(work.path)
    rs: list[Replica] = []
    try:
        rs = [Replica(f"replica-{i}", work, server, fast=True, debug=True) for i in range(3)]
        async with session() as http:
            ats = server.url + AT_PATH.format(ns=NS)
            await ensure_namespace(http, server.url, NS)
            await shards_settled(http, rs)
            done = DoneWatch(http, ats, await list_rv(http, ats))
            start = time.perf_counter()
            creator = asyncio.create_task(create_all(
                http, ats, [at_body(f"at-{i}") for i in range(n)], concurrency=16))
            events: list[str] = []

            async def progress(fraction: float) -> None:
                await done.until(int(n * fraction), timeout=120 + n * 0.05, replicas=rs)

            await progress(0.2)
            rs.append(Replica("replica-3", work, server, fast=True, debug=True))
            events.append(f"joined replica-3 at {time.perf_counter() - start:.1f}s")
            await progress(0.4)
            rs[0].proc.popen.send_signal(signal.SIGTERM)
            events.append(f"stopped replica-0 at {time.perf_counter() - start:.1f}s")
            await progress(0.6)
            rs[1].proc.popen.kill()
            events.append(f"killed replica-1 at {time.perf_counter() - start:.1f}s")
            await creator
            await progress(1.0)
            seconds = time.perf_counter() - start
            done.close()
            state = await end_state(http, server.url, n)
            return {"case": "churn", "ats": n, "seconds": round(seconds, 2),
                    "events": events, "concurrent_reconciles": concurrent_keys(
                        [r.proc.log for r in rs]), **state}
    finally:
        for r in rs:
            r.proc.stop()
        server.stop()
        work.cleanup()


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


async def heavy(n: int, ms: float, rounds: int) -> None:
    """1 and 2 replicas of the CPU-heavy operator, alternated; medians, and every round."""
    ones: list[dict[str, Any]] = []
    twos: list[dict[str, Any]] = []
    for _ in range(rounds):
        ones.append(await scale(n, 1, heavy_ms=ms))
        emit(ones[-1])
        twos.append(await scale(n, 2, heavy_ms=ms))
        twos[-1]["speedup_vs_1"] = round(twos[-1]["ats_per_s"] / ones[-1]["ats_per_s"], 2)
        emit(twos[-1])
    one, two = median([r["ats_per_s"] for r in ones]), median([r["ats_per_s"] for r in twos])
    emit({"case": "heavy_summary", "heavy_ms": ms, "ats": n, "rounds": rounds,
          "ats_per_s_1": one, "ats_per_s_2": two, "speedup": round(two / one, 2),
          "speedups": [r["speedup_vs_1"] for r in twos],
          "cpu_ms_per_at_1": median([r["cpu_ms_per_at"] for r in ones]),
          "cpu_ms_per_at_2": median([r["cpu_ms_per_at"] for r in twos]),
          "server_cpu_ms_per_at_1": round(median([r["server_cpu_s"] for r in ones]) / n * 1000,
                                          2),
          "server_cpu_ms_per_at_2": round(median([r["server_cpu_s"] for r in twos]) / n * 1000,
                                          2),
          "all_done": all(r["not_succeeded"] == 0 and r["ats_without_one_pod"] == 0
                          for r in ones + twos),
          "concurrent_reconciles": sum(r["concurrent_reconciles"] for r in ones + twos)})


async def run(args: argparse.Namespace) -> None:
    only = set(args.only.split(","))
    if "scale" in only:
        one = await scale(args.ats, 1)
        emit(one)
        two = await scale(args.ats, 2)
        two["speedup_vs_1"] = round(two["ats_per_s"] / one["ats_per_s"], 2)
        emit(two)
    if "heavy" in only:
        await heavy(args.heavy_ats, args.heavy_ms, args.rounds)
    if "churn" in only:
        emit(await churn(args.churn_ats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ats", type=int, default=1000)
    parser.add_argument("--churn-ats", type=int, default=3000)
    parser.add_argument("--heavy-ats", type=int, default=1000)
    parser.add_argument("--heavy-ms", type=float, default=4.0,
                        help="CPU milliseconds each reconcile of the heavy operator spends")
    parser.add_argument("--rounds", type=int, default=3, help="1-vs-2 rounds of `heavy`")
    parser.add_argument("--only", default="scale,heavy,churn")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
