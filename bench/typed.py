"""Typed access (asyncop.crd) against raw dicts: what a typed view costs, and where.

The runtime's hot path — watch event -> informer -> Store -> handler -> queue — moves raw
dicts and is the same code whether or not an operator declares typed resources; typing
happens only inside a reconcile that asks for it. This benchmark measures that ask:

1. `micro`: microseconds per operation on an At as the cache holds it (status RUNNING,
   labels, annotations, an owner reference): `At.parse(raw)`, reading three fields through the
   typed view vs. through the dict, `to_raw()`, and the no-op check of `write_status` (the
   new status equals the stored one, so nothing is sent).
2. `controller`: a full Controller (handler -> queue -> worker -> reconcile with structlog
   context and metrics) over N cached Ats, with a reconciler that reads spec and status
   from the raw dict, and one that does `At.from_cache(cache, req)` and reads the same
   fields typed. Reconciles per second and per CPU-second, and the difference per reconcile.

Prints one JSON line per case. Usage: `python bench/typed.py [--keys N] [--repeat R]`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
import timeit
from typing import Any

import orjson
import structlog
from _fakes import FakeCache

from asyncop.api import Kind, RawObject, Request
from asyncop.clock import RealClock
from asyncop.controllers.at import At
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.reconcile import Result, reconciler

AT = At.KIND


def sample(i: int) -> RawObject:
    obj: dict[str, Any] = {
        "apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
        "metadata": {
            "name": f"at-{i}", "namespace": "default", "uid": f"2f1c0c7e-{i:08d}",
            "resourceVersion": str(1000 + i), "generation": 1,
            "creationTimestamp": "2026-11-24T10:00:00Z",
            "labels": {"app": "bench", "team": "ops"},
            "annotations": {"note": "a benchmark object"},
        },
        "spec": {"schedule": "2026-11-24T10:12:00Z", "command": "echo hello"},
        "status": {"phase": "RUNNING", "message": "running 'echo hello'",
                   "podName": f"at-{i}-pod", "startedAt": "2026-11-24T10:12:00Z",
                   "observedGeneration": 1},
    }
    return obj  # type: ignore[return-value]


class _NoClient:
    async def update_status(self, kind: Kind, obj: RawObject) -> RawObject:
        raise AssertionError("an unchanged status must not be written")


def micro(repeat: int) -> dict[str, float]:
    raw = sample(0)
    typed = At.parse(raw)
    assert typed.status is not None
    same = typed.status.model_copy()

    def raw_fields() -> object:
        return (raw["spec"]["command"], raw["status"]["phase"], raw["metadata"]["generation"])

    def typed_fields() -> object:
        assert typed.spec is not None and typed.status is not None
        return (typed.spec.command, typed.status.phase, typed.metadata.generation)

    def noop_write() -> object:
        coro = typed.write_status(_NoClient(), same)  # the unchanged path never suspends
        try:
            coro.send(None)
        except StopIteration as stop:
            return stop.value
        raise AssertionError("write_status suspended: it meant to send something")

    def per_op(fn: Any, n: int) -> float:
        return min(timeit.repeat(fn, number=n, repeat=repeat)) / n * 1e6

    out = {
        "parse_us": per_op(lambda: At.parse(raw), 5_000),
        "raw_field_reads_us": per_op(raw_fields, 200_000),
        "typed_field_reads_us": per_op(typed_fields, 200_000),
        "to_raw_us": per_op(typed.to_raw, 5_000),
        "write_status_unchanged_us": per_op(noop_write, 2_000),
    }
    return {k: round(v, 2) for k, v in out.items()}


async def controller(*, keys: int, typed: bool) -> tuple[float, float]:
    objs = [sample(i) for i in range(keys)]
    cache = FakeCache(objs)
    processed = 0
    done = asyncio.get_running_loop().create_future()

    async def reconcile(req: Request) -> Result:
        nonlocal processed
        if typed:
            at = At.from_cache(cache, req)
            assert at is not None and at.spec is not None and at.status is not None
            seen = (at.spec.command, at.status.phase, at.metadata.generation)
        else:
            raw = cache.get(AT, req.name, req.namespace)
            assert raw is not None
            seen = (raw["spec"]["command"], raw["status"]["phase"],
                    raw["metadata"]["generation"])
        assert seen[1] == "RUNNING"
        processed += 1
        if processed == keys and not done.done():
            done.set_result(None)
        return Result()

    ctrl = Controller("bench", reconciler(reconcile), watches=[for_(At)], workers=2)
    task = asyncio.create_task(ctrl.run(cache=cache, clock=RealClock(), metrics=Metrics()))
    await asyncio.sleep(0)
    handler = cache.inf.handlers[0]
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, keys, 1000):
        for obj in objs[i: i + 1000]:
            handler.on_add(obj)
        await asyncio.sleep(0)
    await done
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return keys / elapsed, keys / cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    print(orjson.dumps({"bench": "typed", "case": "micro", **micro(args.repeat)}).decode(),
          flush=True)
    best: dict[bool, tuple[float, float]] = {}
    for typed in (False, True):
        runs = [await controller(keys=args.keys, typed=typed) for _ in range(args.repeat)]
        best[typed] = (max(r[0] for r in runs), max(r[1] for r in runs))
        print(orjson.dumps({"bench": "typed", "case": "controller", "keys": args.keys,
                            "access": "typed" if typed else "raw",
                            "reconciles_per_s": round(best[typed][0]),
                            "reconciles_per_cpu_s": round(best[typed][1])}).decode(), flush=True)
    extra_us = (1 / best[True][1] - 1 / best[False][1]) * 1e6
    print(orjson.dumps({"bench": "typed", "case": "overhead",
                        "typed_extra_cpu_us_per_reconcile": round(extra_us, 1)}).decode(),
          flush=True)


if __name__ == "__main__":
    asyncio.run(main())
