"""Benchmark of the embedded API server, run in its own process.

Cases (one JSON line each on stdout):
- `create_c1`, `create_c32`: ConfigMap creates/s with 1 and 32 concurrent aiohttp clients;
- `watch_live_w1`, `watch_live_w10`: events/s delivered (aggregate over watchers) while 32
  clients create objects as fast as they can;
- `watch_replay_w1`, `watch_replay_w10`: events/s delivered when watchers resume from an old
  resourceVersion and the server replays its history (fan-out without the write cost).

Usage: `python bench/apiserver.py [--n 4000]`. Targets (SPEC §8): >= 2,000 creates/s and
>= 20,000 watch events/s aggregate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from typing import Any

import aiohttp


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "asyncop.apiserver.main", "--port", "0", "--no-simulators"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("asyncop apiserver listening on "):
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[-1]


async def ensure_namespace(http: aiohttp.ClientSession, url: str, name: str) -> None:
    async with http.post(url + "/api/v1/namespaces", json={"metadata": {"name": name}}) as r:
        assert r.status in (201, 409), await r.text()


async def create_many(http: aiohttp.ClientSession, url: str, ns: str, n: int,
                      concurrency: int, prefix: str) -> float:
    path = f"{url}/api/v1/namespaces/{ns}/configmaps"
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            body = {"metadata": {"name": f"{prefix}-{i}", "labels": {"bench": "yes"}},
                    "data": {"key": "value", "index": str(i)}}
            async with http.post(path, json=body) as r:
                if r.status != 201:
                    raise RuntimeError(f"create failed: {r.status} {await r.text()}")
                await r.read()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start


async def current_rv(http: aiohttp.ClientSession, url: str, ns: str) -> str:
    async with http.get(f"{url}/api/v1/namespaces/{ns}/configmaps?limit=1") as r:
        body: dict[str, Any] = await r.json()
        return str(body["metadata"]["resourceVersion"])


async def count_events(http: aiohttp.ClientSession, url: str, ns: str, rv: str,
                       expected: int, ready: asyncio.Event | None = None) -> float:
    """Read a watch until `expected` events arrived; returns the monotonic finish time."""
    path = f"{url}/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}"
    seen = 0
    async with http.get(path, timeout=aiohttp.ClientTimeout(total=None)) as resp:
        if ready is not None:
            ready.set()
        async for chunk in resp.content.iter_any():
            seen += chunk.count(b"\n")
            if seen >= expected:
                return time.perf_counter()
    raise RuntimeError(f"watch ended after {seen}/{expected} events")


async def bench_creates(url: str, n: int, concurrency: int) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        ns = f"create-c{concurrency}"
        await ensure_namespace(http, url, ns)
        elapsed = await create_many(http, url, ns, n, concurrency, "cm")
    return {"case": f"create_c{concurrency}", "objects": n, "seconds": round(elapsed, 3),
            "creates_per_s": round(n / elapsed)}


async def bench_watch_live(url: str, n: int, watchers: int) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=watchers + 32)
    async with aiohttp.ClientSession(connector=connector) as http:
        ns = f"live-w{watchers}"
        await ensure_namespace(http, url, ns)
        rv = await current_rv(http, url, ns)
        readies = [asyncio.Event() for _ in range(watchers)]
        tasks = [asyncio.create_task(count_events(http, url, ns, rv, n, ready))
                 for ready in readies]
        await asyncio.gather(*(r.wait() for r in readies))
        start = time.perf_counter()
        await create_many(http, url, ns, n, 32, "cm")
        finished = await asyncio.gather(*tasks)
        elapsed = max(finished) - start
    return {"case": f"watch_live_w{watchers}", "events_per_watcher": n,
            "seconds": round(elapsed, 3), "events_per_s": round(n * watchers / elapsed)}


async def bench_watch_replay(url: str, n: int, watchers: int) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=watchers + 32)
    async with aiohttp.ClientSession(connector=connector) as http:
        ns = f"replay-w{watchers}"
        await ensure_namespace(http, url, ns)
        rv = await current_rv(http, url, ns)
        await create_many(http, url, ns, n, 32, "cm")
        start = time.perf_counter()
        finished = await asyncio.gather(*(count_events(http, url, ns, rv, n)
                                          for _ in range(watchers)))
        elapsed = max(finished) - start
    return {"case": f"watch_replay_w{watchers}", "events_per_watcher": n,
            "seconds": round(elapsed, 3), "events_per_s": round(n * watchers / elapsed)}


async def run(n: int) -> None:
    proc, url = start_server()
    try:
        cases = [
            bench_creates(url, n, 1),
            bench_creates(url, n, 32),
            bench_watch_live(url, n, 1),
            bench_watch_live(url, n, 10),
            bench_watch_replay(url, n, 1),
            bench_watch_replay(url, n, 10),
        ]
        for case in cases:
            result = await case
            print(json.dumps(result), flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000, help="objects / events per case")
    args = parser.parse_args()
    asyncio.run(run(args.n))


if __name__ == "__main__":
    main()
