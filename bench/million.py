"""One replica, many objects: the cost curve of the At operator at 10k / 100k / 1M Ats waiting.

Each point (`--points`, default 10,000, 100,000 and 1,000,000) runs on a fresh API server
(bench/_server.py) that first writes N Ats in-process, due in two hours over `--schedules`
distinct seconds (3,600 by default: a scheduled-jobs workload; N: every At its own time),
already in the status the At controller gives a waiting At, with the history ring at the
shipped default (10,000 events). Then `python -m asyncop run --controllers at` starts as shipped
(plus its metrics endpoint, which this benchmark reads), and one JSON line reports:

- `server_bytes_per_at`: the API server's RSS growth over the preload / N (after a
  `gc.collect()`), `server_rss_mib` at the end;
- `sync_s`: operator start to the controller's "controller started" log line (its informers
  listed every At and every Pod);
- the replay: the controller then reconciles every At once (the initial list; nothing to
  write, one timer each). `replay_s` from the sync until N reconciles are counted and the
  queue is empty (its metrics, read every 0.5 s), `replay_cpu_us_per_at` the operator's CPU
  over that span / N (with `--rate 0`, the replay alone);
- live changes during the replay (`--rate` per second, uniformly random preloaded Ats):
  a merge PATCH makes the At due now; latency = the arrival here of the watch event that
  shows it RUNNING minus the wall-clock time just before the PATCH (`during_replay_*`).
  This is the priority queue's case: a change must not wait behind the replay;
- `fresh_*`: the same latency after the replay, `--fresh` changes at 20/s;
- `cpu_ms_per_pending_at`: `--pending` new Ats (due in two hours) created by 16 clients,
  operator CPU until each is PENDING / their count;
- `rss_after_replay_mib` (VmRSS) and `peak_rss_mib` (VmHWM) of the operator;
- correctness, in the same run: every changed At ends DONE with exactly one pod
  (`pods`/`expected_pods`), `conflicts` = the operator's 409 answers (a reconcile acting on a
  cache older than its own writes would get one: read-your-own-writes), and
  `status_writes_per_change` = the operator's status writes / changes (2: RUNNING and DONE;
  the replay itself writes nothing).

Usage: `python bench/million.py [--points 10000,100000] [--rate 50] [--fresh 200]`.
The 1M point needs about 6 GB of memory and 10-15 minutes on 2 cores.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/queue.py would shadow the standard library's `queue`: search the bench dir last.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p != _HERE] + [_HERE]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import aiohttp  # noqa: E402
import orjson  # noqa: E402
from _harness import (  # noqa: E402
    _BY_CLIENT,
    DRIVER,
    Process,
    Server,
    Workdir,
    create_all,
    follow,
    list_items,
    list_rv,
    load,
    memory_bytes,
    percentile,
    requests_by_client,
    session,
)

AT_PATH = "/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/bench/ats"
POD_PATH = "/api/v1/namespaces/bench/pods"
MIB = 1024 * 1024
_RECONCILES = re.compile(r'^controller_runtime_reconcile_total\{controller="at",[^}]*\} (\S+)$',
                         re.M)
_DEPTH = re.compile(r'^workqueue_depth\{name="at"\} (\S+)$', re.M)


def emit(line: dict[str, Any]) -> None:
    print(orjson.dumps({"bench": "million", **line, "load": load()}).decode(), flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def rfc3339(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


async def queue_state(http: aiohttp.ClientSession, metrics: str) -> tuple[float, float]:
    """(reconciles of the at controller so far, its queue depth) from the operator."""
    async with http.get(metrics) as r:
        text = await r.text()
    reconciles = sum(float(v) for v in _RECONCILES.findall(text))
    depth = _DEPTH.search(text)
    return reconciles, float(depth.group(1)) if depth else 0.0


async def replay_over(http: aiohttp.ClientSession, metrics: str, op: Process, n: int, *,
                      timeout: float) -> float:
    """Seconds until the at controller has reconciled n times and its queue is empty."""
    start = time.perf_counter()
    while True:
        reconciled, depth = await queue_state(http, metrics)
        if reconciled >= n and depth == 0:
            return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"replay not over: {reconciled} reconciles")
        op.check_alive()
        await asyncio.sleep(0.5)  # a scrape costs the operator CPU too: not too often


async def wait_log(op: Process, needle: bytes, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while needle not in op.log.read_bytes():
        op.check_alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{needle!r} not logged in {timeout:.0f}s:\n{op.tail()}")
        await asyncio.sleep(0.05)


async def conflicts(http: aiohttp.ClientSession, url: str) -> int:
    """409 answers to everyone but the driver (the operator)."""
    async with http.get(url + "/metrics") as r:
        text = await r.text()
    total = 0
    for line in text.splitlines():
        m = _BY_CLIENT.match(line)
        if m and m.group(1) != DRIVER and m.group(2) == "409":
            total += int(m.group(6))
    return total


class Changes:
    """Makes preloaded Ats due with a merge PATCH and times each until it shows RUNNING."""

    def __init__(self, http: aiohttp.ClientSession, ats: str, n: int) -> None:
        self.http, self.ats = http, ats
        self.sent: dict[str, float] = {}
        self.seen: dict[str, float] = {}
        self.done: set[str] = set()
        self._pick = random.Random(19)
        self._n = n
        self._tasks: list[asyncio.Task[None]] = []
        self.all_done = asyncio.Event()

    def on_event(self, event: dict[str, Any], arrived: float) -> bool:
        name = event["object"]["metadata"]["name"]
        phase = (event["object"].get("status") or {}).get("phase")
        if name in self.sent and phase in ("RUNNING", "DONE"):
            self.seen.setdefault(name, arrived)
            if phase == "DONE":
                self.done.add(name)
                if len(self.done) == len(self.sent):
                    self.all_done.set()
        return False  # followed until cancelled

    def one(self) -> str:
        while True:
            name = f"pre-{self._pick.randrange(self._n)}"
            if name not in self.sent:
                break
        self.sent[name] = time.time()
        self.all_done.clear()
        self._tasks.append(asyncio.create_task(self._patch(name)))
        return name

    async def _patch(self, name: str) -> None:
        body = orjson.dumps({"spec": {"schedule": "2020-01-01T00:00:00Z"}})
        async with self.http.patch(f"{self.ats}/{name}", data=body, headers={
                "Content-Type": "application/merge-patch+json"}) as r:
            if r.status != 200:
                raise RuntimeError(f"patch {name}: {r.status} {await r.text()}")
            await r.read()

    async def settle(self) -> None:
        await asyncio.gather(*self._tasks)
        self._tasks.clear()

    def latencies(self, names: list[str]) -> dict[str, Any]:
        lat = [(self.seen[n] - self.sent[n]) * 1000 for n in names if n in self.seen]
        if not lat:
            return {"changes": len(names)}
        first = self.sent[names[0]]
        worst = sorted(((self.seen[n] - self.sent[n]) * 1000, self.sent[n] - first)
                       for n in names if n in self.seen)[-5:]
        return {"changes": len(names), "missing": len(names) - len(lat),
                "p50_ms": round(percentile(lat, 50), 1), "p99_ms": round(percentile(lat, 99), 1),
                "max_ms": round(max(lat), 1),
                # the slowest five: (ms, seconds after the first change was sent)
                "worst": [(round(ms), round(at, 1)) for ms, at in reversed(worst)]}


async def point(n: int, *, rate: float, fresh: int, pending: int, schedules: int) -> None:
    work = Workdir("million")
    stats_path = work.path / "preload.json"
    due = time.time() + 7200
    server = Server(work.path, start_timeout=120 + n / 2000, args=[
        "--preload-ats", str(n), "--preload-due", str(due), "--stats-out", str(stats_path),
        "--preload-schedules", str(schedules or n), "--history", "10000"])
    op: Process | None = None
    watcher: asyncio.Task[None] | None = None
    try:
        stats = orjson.loads(stats_path.read_bytes())
        port = free_port()
        metrics = f"http://127.0.0.1:{port}/metrics"
        kc = str(server.kubeconfig)
        async with session() as http:
            ats = server.url + AT_PATH
            rv = await list_rv(http, ats)
            requests0 = await requests_by_client(http, server.url)
            op = Process("asyncop", [
                sys.executable, "-m", "asyncop", "run", "--controllers", "at", "--kubeconfig", kc,
                "--log-format", "json", "--metrics-bind-address", f"127.0.0.1:{port}"],
                log=work.path / "operator.log", env={"KUBECONFIG": kc})
            changes = Changes(http, ats, n)
            watcher = asyncio.create_task(follow(http, ats, rv, changes.on_event,
                                                 timeout=3600 + n / 100))
            start = time.perf_counter()
            await wait_log(op, b'"controller started"', timeout=120 + n / 1000)
            sync_s = time.perf_counter() - start
            # The replay, with live changes at `rate` until every At was reconciled once
            # (the operator's metrics are polled apart: a busy operator answers late).
            cpu0, replay_start = op.cpu(), time.perf_counter()
            over = asyncio.create_task(replay_over(http, metrics, op, n,
                                                   timeout=600 + n / 200))
            during: list[str] = []
            next_change = replay_start
            while not over.done():
                if rate > 0:
                    during.append(changes.one())
                    next_change += 1 / rate
                await asyncio.wait([over], timeout=max(0.0, next_change - time.perf_counter())
                                   if rate > 0 else None)
            replay_s = await over
            replay_cpu = op.cpu() - cpu0
            rss_after_replay = memory_bytes(op.pid, "VmRSS")
            # Fresh changes after the replay.
            await asyncio.sleep(1.0)
            after: list[str] = []
            for _ in range(fresh):
                after.append(changes.one())
                await asyncio.sleep(1 / 20)
            await changes.settle()
            # Every changed At DONE.
            try:
                await asyncio.wait_for(changes.all_done.wait(), 120)
            except TimeoutError:
                pass  # reported: done < changed
            # CPU per PENDING At with N cached.
            later = rfc3339(due)
            names = [f"new-{i}" for i in range(pending)]
            pending_seen: set[str] = set()
            rv2 = await list_rv(http, ats)

            def on_pending(event: dict[str, Any], _: float) -> bool:
                name = event["object"]["metadata"]["name"]
                if name.startswith("new-") and \
                        (event["object"].get("status") or {}).get("phase") == "PENDING":
                    pending_seen.add(name)
                return len(pending_seen) == pending

            cpu1 = op.cpu()
            waiter = asyncio.create_task(follow(http, ats, rv2, on_pending,
                                                timeout=120 + pending * 0.05))
            await create_all(http, ats, [
                {"apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
                 "metadata": {"name": name}, "spec": {"schedule": later, "command": "true"}}
                for name in names], concurrency=16)
            await waiter
            cpu_pending = op.cpu() - cpu1
            requests = await requests_by_client(http, server.url)
            pods = await list_items(http, server.url + POD_PATH)
            status_writes = sum(v for k, v in (requests - requests0).items()
                                if not k.startswith(DRIVER) and k.endswith("PUT ats/status"))
            emit({
                "case": f"curve_{n}", "impl": "asyncop", "ats": n,
                "schedules": schedules or n,
                "server_bytes_per_at": round((stats["rss_after"] - stats["rss_before"]) / n),
                "server_preload_s": stats["preload_s"],
                "server_rss_mib": round(memory_bytes(server.proc.pid, "VmRSS") / MIB, 1),
                "sync_s": round(sync_s, 2), "replay_s": round(replay_s, 2),
                "replay_cpu_us_per_at": round(replay_cpu / n * 1e6, 1),
                "during_replay": changes.latencies(during),
                "fresh": changes.latencies(after),
                "cpu_ms_per_pending_at": round(cpu_pending / pending * 1000, 3),
                "rss_after_replay_mib": round(rss_after_replay / MIB, 1),
                "peak_rss_mib": round(op.peak_rss() / MIB, 1),
                "changed": len(changes.sent), "done": len(changes.done),
                "pods": len(pods), "expected_pods": len(changes.sent),
                "conflicts": await conflicts(http, server.url),
                "status_writes_per_change": round(
                    (status_writes - pending) / max(1, len(changes.sent)), 2),
            })
    finally:
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        if op is not None:
            op.stop()
        server.stop()
        work.cleanup()


async def run(args: argparse.Namespace) -> None:
    for n in args.points:
        await point(n, rate=args.rate, fresh=args.fresh, pending=args.pending,
                    schedules=args.schedules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=lambda v: [int(x) for x in v.split(",")],
                        default=[10_000, 100_000, 1_000_000],
                        help="Ats waiting in the cache at each point of the curve")
    parser.add_argument("--rate", type=float, default=50.0,
                        help="live changes per second during the replay (0: none)")
    parser.add_argument("--fresh", type=int, default=200, help="changes after the replay")
    parser.add_argument("--schedules", type=int, default=3600,
                        help="distinct due seconds among the preloaded Ats (0: one each)")
    parser.add_argument("--pending", type=int, default=5000,
                        help="new Ats made PENDING to measure CPU per PENDING At")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
