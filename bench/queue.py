"""Work queue micro-benchmark: add -> get -> done throughput (bench/README.md, "Work queue
and typed access").

For each worker count, N distinct keys are added, and `workers` coroutines get and done them
until the queue is empty; prints one JSON line per case. Runs on the RealClock, with and
without metrics, and in two worker styles: "tight" (get/done back to back; a worker never
suspends while keys are queued) and "yield" (the worker yields to the loop once per key, as
any real reconcile does, so 64 workers really interleave).
A second set of lines ("bench": "controller") pushes the same keys through a full
Controller (watch handler -> queue -> worker -> reconcile with structlog context, metrics,
outcome bookkeeping) with a no-op reconciler, to show the per-reconcile framework overhead.
Usage: `python bench/queue.py [--keys N] [--workers 1,64] [--repeat R]`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time

import orjson
import structlog
from _fakes import FakeCache

from asyncop.api import Kind, RawObject, Request
from asyncop.clock import RealClock
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.reconcile import reconciler
from asyncop.runtime.workqueue import ShutDown, WorkQueue

FOO = Kind("bench.asyncop.io", "v1", "foos", "Foo")


async def run_controller(*, keys: int, workers: int) -> tuple[float, float]:
    cache = FakeCache()
    processed = 0
    all_done = asyncio.get_running_loop().create_future()

    async def reconcile(req: Request) -> None:
        nonlocal processed
        processed += 1
        if processed == keys and not all_done.done():
            all_done.set_result(None)

    ctrl = Controller("bench", reconciler(reconcile), watches=[for_(FOO)], workers=workers)
    task = asyncio.create_task(ctrl.run(cache=cache, clock=RealClock(), metrics=Metrics()))
    await asyncio.sleep(0)
    objs: list[RawObject] = [
        {"metadata": {"name": f"obj-{i}", "namespace": "ns", "resourceVersion": "1"}}
        for i in range(keys)
    ]
    handler = cache.inf.handlers[0]
    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(0, keys, 1000):
        for obj in objs[i : i + 1000]:
            handler.on_add(obj)
        await asyncio.sleep(0)
    await all_done
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return keys / elapsed, keys / cpu


async def run_case(
    *, keys: int, workers: int, metrics: bool, yield_: bool
) -> tuple[float, float]:
    clock = RealClock()
    queue: WorkQueue[str] = WorkQueue(
        clock=clock, name="bench", metrics=Metrics().queue_metrics("bench") if metrics else None
    )
    names = [f"ns/obj-{i}" for i in range(keys)]
    processed = 0
    all_done = asyncio.get_running_loop().create_future()

    async def worker() -> None:
        nonlocal processed
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            if yield_:
                await asyncio.sleep(0)
            queue.done(key)
            processed += 1
            if processed == keys and not all_done.done():
                all_done.set_result(None)

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    await asyncio.sleep(0)  # every worker parks on get()
    start, cpu_start = time.perf_counter(), time.process_time()
    # Producer: adds in batches and yields, like informer handlers between socket reads.
    for i in range(0, keys, 1000):
        for name in names[i : i + 1000]:
            queue.add(name)
        await asyncio.sleep(0)
    await all_done
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    queue.shutdown()
    await asyncio.gather(*tasks)
    return keys / elapsed, keys / cpu


def _summary(what: str, rates: list[tuple[float, float]]) -> dict[str, int]:
    """Best and median wall-clock rate, and the best rate per CPU-second of this process
    (the latter stays meaningful on a loaded machine)."""
    wall = sorted(r[0] for r in rates)
    return {
        f"{what}_per_s": round(wall[-1]),
        f"{what}_per_s_median": round(wall[len(wall) // 2]),
        f"{what}_per_cpu_s": round(max(r[1] for r in rates)),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--workers", default="1,64")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = [
        (style, metrics, int(workers))
        for style in ("tight", "yield")
        for metrics in (False, True)
        for workers in args.workers.split(",")
    ]
    for style, metrics, workers in cases:
        yield_ = style == "yield"
        rates = [
            await run_case(keys=args.keys, workers=workers, metrics=metrics, yield_=yield_)
            for _ in range(args.repeat)
        ]
        line = {
            "bench": "workqueue",
            "workers": workers,
            "keys": args.keys,
            "style": style,
            "metrics": metrics,
            **_summary("keys", rates),
        }
        print(orjson.dumps(line).decode(), flush=True)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    for workers in (int(w) for w in args.workers.split(",")):
        keys = args.keys // 4
        rates = [await run_controller(keys=keys, workers=workers) for _ in range(args.repeat)]
        line = {
            "bench": "controller",
            "workers": workers,
            "keys": keys,
            **_summary("reconciles", rates),
        }
        print(orjson.dumps(line).decode(), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
