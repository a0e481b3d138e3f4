"""Launcher of the embedded API server for the operator benchmarks (its own process).

`python bench/_server.py --kubeconfig-out PATH [--pod-run-duration 0]`: like
`python -m asyncop.apiserver.main`, plus the bundled CRDs installed, pods that complete at
once (the pod simulator's run duration), and a watch history deep enough that a slow
watcher of a 10k-object run resumes instead of re-listing. Prints the same first stdout line
(`asyncop apiserver listening on URL`) once ready; stops cleanly on SIGTERM/SIGINT.

`--preload-ats N --stats-out FILE` (bench/million.py): before listening, N Ats are written
in-process through the Store's one write pipeline in namespace `bench`, At i due at
`--preload-due` (a Unix time) + (i mod `--preload-schedules`) seconds, each with the status
the At controller gives a waiting At (so an operator started afterwards replays them without
writing); FILE gets one JSON line with the server's RSS before and after (after
`gc.collect()`), the objects' count and the seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import structlog

from asyncop.apiserver.main import apply_crd_dir, serve
from asyncop.apiserver.server import ApiServer
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.clock import format_time
from asyncop.gcpolicy import GcPolicy

CRDS = Path(__file__).resolve().parent.parent / "crds"
AT_GROUP, AT_VERSION = "cnat.programming-kubernetes.info", "v1alpha1"
NS = "bench"


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("VmRSS not found")


def preload(server: ApiServer, n: int, due: float, schedules: int, stats_out: str) -> None:
    """N waiting Ats written in-process (the same Writer as HTTP); what they cost goes to
    `stats_out`."""
    store = server.store
    writer = store.writer
    store.writer.create(store.resolve("", "v1", "namespaces"), {"metadata": {"name": NS}})
    ats = store.resolve(AT_GROUP, AT_VERSION, "ats")
    gc.collect()
    before, start = rss(), time.perf_counter()
    for i in range(n):
        name = f"pre-{i}"
        when = datetime.fromtimestamp(int(due) + i % schedules, UTC)
        schedule = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        status = {"phase": "PENDING", "message": f"waiting until {format_time(when)}",
                  "observedGeneration": 1}
        stored = writer.create(ats, {
            "apiVersion": f"{AT_GROUP}/{AT_VERSION}", "kind": "At",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"schedule": schedule, "command": "true"}}, namespace=NS)
        writer.update(ats, {"metadata": {"name": name, "namespace": NS,
                                         "resourceVersion": stored["metadata"]["resourceVersion"]},
                            "status": status},
                      namespace=NS, name=name, subresource="status")
    seconds = time.perf_counter() - start
    gc.collect()
    # What GcPolicy does after a full collection (it cannot run during this synchronous
    # preload): otherwise the server's first full collection, 2 s at 1M objects, would fall
    # in the middle of the measured run.
    gc.freeze()
    Path(stats_out).write_bytes(orjson.dumps({
        "preloaded": n, "preload_s": round(seconds, 1), "rss_before": before,
        "rss_after": rss(), "history": len(store.hub.history)}))


async def serve_preloaded(args: argparse.Namespace, sims: Any) -> None:
    """`serve()`'s steps, with the preload between the CRDs and the listening line."""
    server = ApiServer(port=0, simulators=sims, history=args.history,
                       watch_queue_size=100_000)
    await server.start()
    policy = asyncio.create_task(GcPolicy(clock=server.clock).run())
    try:
        apply_crd_dir(server.store, str(CRDS))
        preload(server, args.preload_ats, args.preload_due, args.preload_schedules,
                args.stats_out)
        server.write_kubeconfig(args.kubeconfig_out)
        sys.stdout.write(f"asyncop apiserver listening on {server.url}\n")
        sys.stdout.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        policy.cancel()
        await asyncio.gather(policy, return_exceptions=True)
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig-out", required=True)
    parser.add_argument("--pod-run-duration", type=float, default=0.0)
    parser.add_argument("--history", type=int, default=200_000)
    parser.add_argument("--preload-ats", type=int, default=0)
    parser.add_argument("--preload-due", type=float, default=0.0)
    parser.add_argument("--preload-schedules", type=int, default=3600)
    parser.add_argument("--stats-out", default="")
    args = parser.parse_args()
    structlog.configure(
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
    )
    # serve() passes `simulators` on to ApiServer, which takes a SimulatorConfig too (its own
    # annotation says bool).
    sims: Any = SimulatorConfig(pod_run_duration=args.pod_run_duration)
    if args.preload_ats:
        asyncio.run(serve_preloaded(args, sims))
        return
    asyncio.run(serve(port=0, kubeconfig_out=args.kubeconfig_out, crds_dir=str(CRDS),
                      simulators=sims, history=args.history, watch_queue_size=100_000))


if __name__ == "__main__":
    main()
