"""The asyncop side of the operator benchmarks that need more than `asyncop run`.

- `probe`: a Manager with one tiny controller on the ConfigMaps of a namespace whose
  reconcile records `time.time()` at its start (first reconcile of each name only). A
  ConfigMap named `dump-*` makes it write everything recorded so far, as JSON
  `{name: wall_time}`, to the path in that ConfigMap's `data.path` (written to a temporary
  file and renamed, so the reader never sees half a file). Stops on SIGTERM.
- `cache`: one ConfigMap Informer over a namespace; prints one JSON line with the initial
  sync time, the object count and the RSS before and after the sync (after a gc), then exits.
Run by bench/operator.py as `python bench/_asyncop_side.py probe|cache --kubeconfig K ...`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import time
from pathlib import Path

import orjson

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.client import Client, load_config
from asyncop.clock import RealClock
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.informer import Informer
from asyncop.runtime.logs import configure_logging
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import reconciler


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("VmRSS not found")


async def probe(*, kubeconfig: str, namespace: str, workers: int) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    seen: dict[str, float] = {}
    mgr = Manager(config=config, namespaces=[namespace], install_signal_handlers=True)

    async def reconcile(req: Request) -> None:
        seen.setdefault(req.name, time.time())
        if req.name.startswith("dump-"):
            obj = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
            if obj is None:
                return
            path = Path(obj["data"]["path"])
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(orjson.dumps(seen))
            os.replace(tmp, path)

    mgr.add(Controller("probe", reconciler(reconcile), watches=[for_(CONFIGMAP)],
                       workers=workers))
    async with mgr:
        await mgr.wait()


async def cache(*, kubeconfig: str, namespace: str) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    async with Client(config) as client:
        informer = Informer(client, CONFIGMAP, clock=RealClock(), namespace=namespace)
        gc.collect()
        before = rss()
        start, cpu_start = time.perf_counter(), time.process_time()
        task = asyncio.create_task(informer.run())
        await informer.wait_for_sync()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        objects = len(informer.store.keys())
        gc.collect()
        after = rss()
        line = {"sync_s": seconds, "objects": objects, "rss_before": before, "rss_after": after,
                "cpu_s": cpu}
        print(orjson.dumps(line).decode(), flush=True)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["probe", "cache"])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    configure_logging(format="json", level="info")
    if args.mode == "probe":
        asyncio.run(probe(kubeconfig=args.kubeconfig, namespace=args.namespace,
                          workers=args.workers))
    else:
        asyncio.run(cache(kubeconfig=args.kubeconfig, namespace=args.namespace))


if __name__ == "__main__":
    main()
