"""Work queue micro-benchmark (SPEC §8, scenario 5): add -> get -> done throughput.

For each worker count, N distinct keys are added, and `workers` coroutines get and done them
until the queue is empty; prints one JSON line per case. Runs on the RealClock, with and
without metrics, and in two worker styles: "tight" (get/done back to back; a worker never
suspends while keys are queued) and "yield" (the worker yields to the loop once per key, as
any real reconcile does, so 64 workers really interleave).
Usage: `python bench/queue.py [--keys N] [--workers 1,64] [--repeat R]`.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import orjson

from asyncop.clock import RealClock
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.workqueue import ShutDown, WorkQueue


async def run_case(*, keys: int, workers: int, metrics: bool, yield_: bool) -> float:
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
    start = time.perf_counter()
    # Producer: adds in batches and yields, like informer handlers between socket reads.
    for i in range(0, keys, 1000):
        for name in names[i : i + 1000]:
            queue.add(name)
        await asyncio.sleep(0)
    await all_done
    elapsed = time.perf_counter() - start
    queue.shutdown()
    await asyncio.gather(*tasks)
    return keys / elapsed


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
            "keys_per_s": round(max(rates)),
            "keys_per_s_median": round(sorted(rates)[len(rates) // 2]),
        }
        print(orjson.dumps(line).decode(), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
