"""Controller behaviour on a virtual clock, with a fake cache whose informers we drive by hand."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from asyncop.api import AlreadyExists, Conflict, Kind, OwnerReference, RawObject, Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.api.status import status_body
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.clock import Clock
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import Controller, WriteListener
from asyncop.runtime.handlers import for_, generation_changed, label_selector, owns
from asyncop.runtime.listeners import EventHandler as Handler
from asyncop.runtime.listeners import Registration
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.reconcile import Result, TerminalError, reconciler
from asyncop.testing import FakeClock, eventually

FOO = Kind("samplecontroller.k8s.io", "v1alpha1", "foos", "Foo")
DEP = Kind("apps", "v1", "deployments", "Deployment")


@pytest.fixture(autouse=True)
def _capture_logs() -> Iterator[None]:
    """Keep logs in memory: rendering tracebacks to the terminal is slow and noisy."""
    with capture_logs():
        yield


def foo(name: str, namespace: str = "ns") -> RawObject:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"}}


class FakeInformer:
    def __init__(self) -> None:
        self.handlers: list[Handler] = []

    def add_handler(self, handler: Handler) -> Registration:
        self.handlers.append(handler)
        return Registration(handler, self.remove_handler)

    def remove_handler(self, handler: object) -> bool:
        kept = [h for h in self.handlers if h is not handler]
        removed = len(kept) < len(self.handlers)
        self.handlers = kept
        return removed

    def add(self, obj: RawObject) -> None:
        for h in self.handlers:
            h.on_add(obj)

    def delete(self, obj: RawObject) -> None:
        for h in self.handlers:
            h.on_delete(obj)


class FakeCache:
    """Informers fed by hand; `observed` is the resourceVersion the cache has seen per key."""

    def __init__(self) -> None:
        self.informers: dict[Kind, FakeInformer] = {}
        self.synced = asyncio.Event()
        self.synced.set()
        self.observed: dict[tuple[Kind, str], int | None] = {}
        self._changed = asyncio.Event()

    def informer(self, kind: Kind) -> FakeInformer:
        return self.informers.setdefault(kind, FakeInformer())

    async def wait_for_sync(self) -> None:
        await self.synced.wait()

    def observe(self, kind: Kind, key: str, rv: int | None) -> None:
        self.observed[(kind, key)] = rv
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for_resource_version(
        self, kind: Kind, key: str, rv: str | None, *, timeout: float
    ) -> None:
        def caught_up() -> bool:
            seen = self.observed.get((kind, key), 0)
            if rv is None:
                return (kind, key) in self.observed and seen is None
            return seen is not None and seen >= int(rv)

        while not caught_up():
            await self._changed.wait()


class FakeClient:
    """Writes assign increasing resourceVersions and notify the write listeners."""

    def __init__(self) -> None:
        self.listeners: list[WriteListener] = []
        self.rv = 100

    def add_write_listener(self, cb: WriteListener) -> None:
        self.listeners.append(cb)

    def write(self, kind: Kind, key: str) -> int:
        self.rv += 1
        obj: RawObject = {"metadata": {"name": key, "resourceVersion": str(self.rv)}}
        for cb in self.listeners:
            cb(kind, obj, key)
        return self.rv

    def delete(self, kind: Kind, key: str) -> None:
        for cb in self.listeners:
            cb(kind, None, key)


@contextlib.asynccontextmanager
async def running(
    ctrl: Controller, cache: FakeCache, clock: Clock, **kw: Any
) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(ctrl.run(cache=cache, clock=clock, **kw))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def recording(
    times: dict[str, list[float]], clock: Clock, behaviour: Callable[[Request], Result | None]
) -> Controller:
    async def fn(req: Request) -> Result | None:
        times.setdefault(req.key, []).append(clock.monotonic())
        return behaviour(req)

    return Controller("foo", reconciler(fn), watches=[for_(FOO)])


async def test_errors_requeue_with_exponential_backoff_on_the_clock() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}

    def fail(req: Request) -> Result:
        raise RuntimeError("boom")

    ctrl = recording(times, clock, fail)
    async with running(ctrl, cache, clock):
        cache.informer(FOO).add(foo("a"))
        await clock.run_until(1.0)
    calls = times["ns/a"]
    gaps = [b - a for a, b in itertools.pairwise(calls)]
    assert gaps == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32])
    assert ctrl.queue is not None and ctrl.queue.num_requeues(Request("a", "ns")) == 8


async def test_terminal_error_is_counted_and_not_retried() -> None:
    clock, cache, metrics = FakeClock(), FakeCache(), Metrics()
    times: dict[str, list[float]] = {}

    def fail(req: Request) -> Result:
        raise TerminalError(ValueError("bad spec"))

    ctrl = recording(times, clock, fail)
    async with running(ctrl, cache, clock, metrics=metrics):
        cache.informer(FOO).add(foo("a"))
        await clock.advance(3600.0)
        assert ctrl.queue is not None and ctrl.queue.delayed == 0
    assert len(times["ns/a"]) == 1
    value = metrics.registry.get_sample_value
    assert value("controller_runtime_terminal_reconcile_errors_total", {"controller": "foo"}) == 1
    assert value("controller_runtime_reconcile_errors_total", {"controller": "foo"}) == 1
    errors = {"controller": "foo", "result": "error"}
    assert value("controller_runtime_reconcile_total", errors) == 1


async def test_requeue_after_is_honoured_exactly() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}
    ctrl = recording(times, clock, lambda req: Result(requeue_after=30.0))
    async with running(ctrl, cache, clock):
        cache.informer(FOO).add(foo("a"))
        await clock.settle()
        assert times["ns/a"] == [0.0]
        await clock.advance(29.999)
        assert times["ns/a"] == [0.0]  # not a tick early
        await clock.advance(0.001)
        assert times["ns/a"] == [0.0, 30.0]
        await clock.advance(30.0)
        assert times["ns/a"] == [0.0, 30.0, 60.0]


async def test_requeue_after_forgets_earlier_failures() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}
    def behaviour(req: Request) -> None:
        if len(times[req.key]) <= 3:
            raise ZeroDivisionError

    ctrl = recording(times, clock, behaviour)
    async with running(ctrl, cache, clock):
        cache.informer(FOO).add(foo("a"))
        await clock.advance(1.0)
        assert ctrl.queue is not None and ctrl.queue.num_requeues(Request("a", "ns")) == 0
    assert len(times["ns/a"]) == 4


async def test_n_workers_reconcile_n_keys_concurrently_but_never_one_key_twice() -> None:
    clock, cache = FakeClock(), FakeCache()
    active: list[str] = []
    peak: list[int] = []
    release = asyncio.Event()

    async def fn(req: Request) -> None:
        assert req.key not in active
        active.append(req.key)
        peak.append(len(active))
        await release.wait()
        active.remove(req.key)

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=4)
    async with running(ctrl, cache, clock):
        for name in ["a", "b", "c", "d", "a", "b"]:
            cache.informer(FOO).add(foo(name))
        await clock.settle()
        assert sorted(active) == ["ns/a", "ns/b", "ns/c", "ns/d"]
        release.set()
        await clock.settle()
        assert active == []
    assert max(peak) == 4


async def test_no_task_per_event_or_per_delayed_key() -> None:
    clock, cache = FakeClock(), FakeCache()
    release = asyncio.Event()

    async def fn(req: Request) -> Result:
        await release.wait()
        return Result(requeue_after=60.0)

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=3)
    before = len(asyncio.all_tasks())
    async with running(ctrl, cache, clock):
        for i in range(500):
            cache.informer(FOO).add(foo(f"k{i}"))
        await clock.settle()
        assert len(asyncio.all_tasks()) == before + 1 + 3  # run() and its 3 workers
        release.set()
        for _ in range(100):  # workers yield to the loop between reconciles: a turn per key
            await clock.settle()
        assert ctrl.queue is not None and ctrl.queue.delayed == 500
        assert len(asyncio.all_tasks()) == before + 1 + 3
        assert clock.pending == 1  # one timer for all 500 delayed keys


async def test_reconciles_that_never_suspend_still_let_the_loop_run() -> None:
    """A replay of keys with nothing to do (no await in the reconcile) must not hold the
    event loop until the queue is empty: watch streams, lease renewals and probes run in
    between, and a live change can be read and put first (asyncop.runtime.worker)."""
    clock, cache = FakeClock(), FakeCache()
    trace: list[str] = []

    async def fn(req: Request) -> None:
        trace.append("reconcile")

    async def other_task() -> None:
        while True:
            trace.append("loop turn")
            await asyncio.sleep(0)

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=2)
    async with running(ctrl, cache, clock):
        for i in range(200):
            cache.informer(FOO).add(foo(f"k{i}"))
        ticker = asyncio.create_task(other_task())
        for _ in range(30):
            await clock.settle()
        ticker.cancel()
    reconciles = [i for i, step in enumerate(trace) if step == "reconcile"]
    assert len(reconciles) == 200
    between = trace[reconciles[0]:reconciles[-1]].count("loop turn")
    assert between >= 90  # about one turn per two reconciles (two workers), none without


async def test_a_poison_key_does_not_slow_the_others() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}

    def behaviour(req: Request) -> None:
        if req.name == "poison":
            raise RuntimeError("always")

    ctrl = recording(times, clock, behaviour)
    async with running(ctrl, cache, clock):
        cache.informer(FOO).add(foo("poison"))
        await clock.advance(60.0)  # poison backs off to ~33 s between attempts
        start = clock.monotonic()
        for i in range(20):
            cache.informer(FOO).add(foo(f"good{i}"))
        await clock.settle()
        assert all(times[f"ns/good{i}"] == [start] for i in range(20))
        assert len(times["ns/poison"]) == 14  # 5 ms … 20.48 s: attempts stay capped by backoff


async def test_cancellation_drains_in_flight_reconciles_then_propagates() -> None:
    clock, cache = FakeClock(), FakeCache()
    started: list[str] = []
    finished: list[str] = []
    release = asyncio.Event()

    async def fn(req: Request) -> None:
        started.append(req.key)
        await release.wait()
        finished.append(req.key)

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=1)
    task = asyncio.create_task(ctrl.run(cache=cache, clock=clock))
    await clock.settle()
    cache.informer(FOO).add(foo("a"))
    cache.informer(FOO).add(foo("queued"))
    await clock.settle()
    task.cancel()
    await clock.settle()
    assert not task.done()  # waiting for "a" to finish
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished == ["ns/a"]
    assert started == ["ns/a"]  # nothing new starts while draining


async def test_cancellation_cancels_reconciles_after_the_grace_period() -> None:
    clock, cache = FakeClock(), FakeCache()
    outcome: list[str] = []

    async def fn(req: Request) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            outcome.append(f"cancelled at {clock.monotonic()}")
            raise

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], grace_period=10.0)
    task = asyncio.create_task(ctrl.run(cache=cache, clock=clock))
    await clock.settle()
    cache.informer(FOO).add(foo("stuck"))
    await clock.settle()
    task.cancel()
    await clock.advance(9.9)
    assert not task.done()
    await clock.advance(0.1)
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcome == ["cancelled at 10.0"]


async def test_a_stopped_controller_leaves_no_handlers_and_restarts_cleanly() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: list[float] = []

    async def fn(req: Request) -> None:
        times.append(clock.monotonic())

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO), owns(DEP)])
    for _ in range(3):  # e.g. a lease lost and regained, twice
        async with running(ctrl, cache, clock):
            assert len(cache.informer(FOO).handlers) == 1
            assert len(cache.informer(DEP).handlers) == 1
            cache.informer(FOO).add(foo("a"))
            await clock.settle()
        assert cache.informer(FOO).handlers == [] and cache.informer(DEP).handlers == []
    assert times == [0.0, 0.0, 0.0]  # one reconcile per run, none from stale handlers


async def test_workers_wait_for_cache_sync() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}
    cache.synced.clear()
    ctrl = recording(times, clock, lambda req: None)
    async with running(ctrl, cache, clock):
        cache.informer(FOO).add(foo("a"))
        await clock.settle()
        assert times == {}
        cache.synced.set()
        await clock.settle()
        assert times == {"ns/a": [0.0]}


async def test_owns_routes_owned_objects_to_the_owner_key() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}

    async def fn(req: Request) -> None:
        times.setdefault(req.key, []).append(clock.monotonic())

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO), owns(DEP)])
    async with running(ctrl, cache, clock):
        ref: OwnerReference = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                               "name": "f1", "uid": "u1", "controller": True}
        dep: RawObject = {"metadata": {"name": "f1-dep", "namespace": "ns",
                                       "ownerReferences": [ref]}}
        cache.informer(DEP).add(dep)
        await clock.settle()
    assert list(times) == ["ns/f1"]
    with pytest.raises(ValueError):
        Controller("bad", reconciler(fn), watches=[owns(DEP)])


async def test_log_lines_carry_the_reconcile_context() -> None:
    clock, cache = FakeClock(), FakeCache()

    async def fn(req: Request) -> None:
        structlog.get_logger("user").info("inside reconcile")
        if req.name == "bad":
            raise RuntimeError("boom")

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)])
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        async with running(ctrl, cache, clock):
            cache.informer(FOO).add(foo("good", "team"))
            cache.informer(FOO).add(foo("bad", "team"))
            await clock.settle()
    inside = [e for e in logs if e["event"] == "inside reconcile"]
    failed = [e for e in logs if e["event"] == "reconcile failed"]
    assert [(e["controller"], e["namespace"], e["name"]) for e in inside] == [
        ("foo", "team", "good"), ("foo", "team", "bad")]
    assert all(re.fullmatch(r"[0-9a-f]{32}", e["reconcile_id"]) for e in inside)
    assert inside[0]["reconcile_id"] != inside[1]["reconcile_id"]
    assert failed and failed[0]["name"] == "bad"
    assert failed[0]["reconcile_id"] == inside[1]["reconcile_id"]
    assert structlog.contextvars.get_contextvars() == {}


async def test_next_reconcile_waits_for_the_cache_to_see_own_writes() -> None:
    clock, cache, client = FakeClock(), FakeCache(), FakeClient()
    seen: list[int | None] = []

    async def fn(req: Request) -> None:
        seen.append(cache.observed.get((DEP, "ns/a-dep")))
        client.write(DEP, "ns/a-dep")

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)])
    async with running(ctrl, cache, clock, client=client):
        cache.informer(FOO).add(foo("a"))
        await clock.settle()
        assert seen == [None]
        cache.informer(FOO).add(foo("a"))  # e.g. the status update's own event
        await clock.settle()
        assert seen == [None]  # held back: the cache has not seen rv 101 yet
        cache.observe(DEP, "ns/a-dep", 101)
        await clock.settle()
        assert seen == [None, 101]
        # no wait for writes made outside any reconcile
        client.write(DEP, "ns/unrelated")
        cache.informer(FOO).add(foo("b"))
        await clock.settle()
        assert len(seen) == 3


async def test_an_object_deleted_after_our_write_costs_no_wait() -> None:
    """Real ApiServer, Client and Cache on a FakeClock: the reconcile writes the object, then
    it is deleted; the cache never shows the written version, yet the next reconcile runs at
    once (the informer's stream passed that version), not after `write_sync_timeout`."""
    clock = FakeClock()
    times: list[float] = []
    async with ApiServer(simulators=False) as server, \
            Client(ClientConfig(host=server.url), max_retries=0) as client, \
            Client(ClientConfig(host=server.url), max_retries=0) as other:
        cache = Cache(client, clock=clock)

        async def fn(req: Request) -> None:
            times.append(clock.monotonic())
            if len(times) == 1:
                await client.patch(CONFIGMAP, req.name, {"data": {"v": "1"}},
                                   namespace=req.namespace)
                # deleted by someone else before our informer saw the patch
                await other.delete(CONFIGMAP, req.name, namespace=req.namespace)

        # updates are filtered out: only the delete enqueues the next reconcile
        ctrl = Controller("deleter", reconciler(fn),
                          watches=[for_(CONFIGMAP, generation_changed)], write_sync_timeout=60.0)
        await cache.start()
        task = asyncio.create_task(ctrl.run(cache=cache, clock=clock, client=client))
        try:
            await client.create(CONFIGMAP, {"metadata": {"name": "a", "namespace": "default"}})
            await eventually(lambda: len(times) >= 2, timeout=10)
            assert cache.get(CONFIGMAP, "a", "default") is None
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await cache.stop()
    assert set(times) == {0.0}  # no virtual time passed: nothing waited for the timeout


async def test_own_write_wait_is_bounded_on_the_clock() -> None:
    clock, cache, client = FakeClock(), FakeCache(), FakeClient()
    times: list[float] = []

    async def fn(req: Request) -> None:
        times.append(clock.monotonic())
        client.delete(DEP, "ns/gone")

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], write_sync_timeout=5.0)
    with capture_logs() as logs:
        async with running(ctrl, cache, clock, client=client):
            cache.informer(FOO).add(foo("a"))
            await clock.settle()
            cache.informer(FOO).add(foo("a"))
            await clock.advance(4.9)
            assert times == [0.0]
            await clock.advance(0.1)
            assert times == [0.0, 5.0]
    assert any(e["event"] == "cache behind own write, proceeding" for e in logs)


async def test_shutdown_does_not_wait_for_a_pending_cache_catch_up() -> None:
    clock, cache, client = FakeClock(), FakeCache(), FakeClient()
    calls: list[float] = []

    async def fn(req: Request) -> None:
        calls.append(clock.monotonic())
        client.write(DEP, "ns/a-dep")

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], write_sync_timeout=60.0)
    task = asyncio.create_task(ctrl.run(cache=cache, clock=clock, client=client))
    await clock.settle()
    cache.informer(FOO).add(foo("a"))
    await clock.settle()
    cache.informer(FOO).add(foo("a"))  # now waits for the cache to see rv 101
    await clock.settle()
    assert ctrl.queue is not None and ctrl.queue.processing == 1
    task.cancel()
    await clock.settle()
    assert task.done()  # no virtual time passed: the catch-up wait was abandoned
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == [0.0]  # and the reconcile it guarded never started


async def test_metrics_count_reconciles_by_result() -> None:
    clock, cache, metrics = FakeClock(), FakeCache(), Metrics()
    outcomes = {"ok": None, "later": Result(requeue_after=10.0), "now": Result(requeue_after=0)}

    async def fn(req: Request) -> Result | None:
        if req.name == "bad":
            raise RuntimeError("boom")
        if req.name == "now" and req.namespace == "done":
            return None
        return outcomes[req.name]

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=3)
    async with running(ctrl, cache, clock, metrics=metrics):
        for name in ["ok", "later", "bad"]:
            cache.informer(FOO).add(foo(name))
        await clock.settle()

    def value(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, {"controller": "foo", **labels})

    assert value("controller_runtime_reconcile_total", result="success") == 1
    assert value("controller_runtime_reconcile_total", result="requeue_after") == 1
    assert value("controller_runtime_reconcile_total", result="error") == 1
    assert value("controller_runtime_reconcile_total", result="requeue") == 0
    assert value("controller_runtime_reconcile_errors_total") == 1
    assert value("controller_runtime_terminal_reconcile_errors_total") == 0
    assert value("controller_runtime_reconcile_time_seconds_count") == 3
    assert value("controller_runtime_max_concurrent_reconciles") == 3
    assert value("controller_runtime_active_workers") == 0
    assert metrics.registry.get_sample_value("workqueue_adds_total", {"name": "foo"}) == 3
    assert b'controller_runtime_reconcile_total{controller="foo",result="success"} 1.0' in (
        metrics.exposition()
    )


async def test_a_cancelled_error_from_inside_the_reconciler_is_just_a_failure() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}

    def behaviour(req: Request) -> None:
        if len(times[req.key]) == 1:
            raise asyncio.CancelledError()

    ctrl = recording(times, clock, behaviour)
    async with running(ctrl, cache, clock) as task:
        cache.informer(FOO).add(foo("a"))
        await clock.advance(0.005)
        assert not task.done()
    assert times["ns/a"] == [0.0, 0.005]


async def test_recover_panic_false_lets_the_exception_end_run() -> None:
    clock, cache = FakeClock(), FakeCache()

    async def fn(req: Request) -> None:
        raise KeyError("crash")

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], recover_panic=False)
    task = asyncio.create_task(ctrl.run(cache=cache, clock=clock))
    await clock.settle()
    cache.informer(FOO).add(foo("a"))
    with pytest.raises(KeyError):
        await asyncio.wait_for(task, timeout=5)


async def test_read_your_own_writes_prevents_duplicate_creates_end_to_end() -> None:
    """Real ApiServer, Client and Cache: a reconciler that creates a child with generateName
    when the cache shows none, requeued at once five times, leaves exactly one child."""
    clock = FakeClock()
    rounds: list[int] = []
    async with ApiServer(simulators=False) as server, \
            Client(ClientConfig(host=server.url), max_retries=0) as client:
        cache = Cache(client, clock=clock)

        async def fn(req: Request) -> Result:
            children = cache.list(CONFIGMAP, namespace=req.namespace, labels={"parent": req.name})
            if not children:
                child = {"metadata": {"generateName": f"{req.name}-", "namespace": req.namespace,
                                      "labels": {"parent": req.name}}}
                await client.create(CONFIGMAP, child)  # type: ignore[arg-type]
            rounds.append(len(children))
            return Result(requeue_after=0) if len(rounds) < 5 else Result()

        ctrl = Controller("parents", reconciler(fn), watches=[for_(CONFIGMAP,
                          label_selector("role=parent"))])
        await cache.start()
        task = asyncio.create_task(ctrl.run(cache=cache, clock=clock, client=client))
        try:
            await client.create(CONFIGMAP, {"metadata": {"name": "p", "namespace": "default",
                                                         "labels": {"role": "parent"}}})
            await eventually(lambda: len(rounds) >= 5, timeout=10)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await cache.stop()
        listed = await client.list(CONFIGMAP, namespace="default", label_selector="parent=p")
    assert len(listed["items"]) == 1
    assert rounds == [0, 1, 1, 1, 1]


async def test_a_conflict_is_retried_with_backoff_and_logged_without_a_traceback() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}
    conflicts = {"left": 3}

    def stale(req: Request) -> Result:
        if conflicts["left"]:
            conflicts["left"] -= 1
            raise Conflict(status_body(409, "the object has been modified"))
        return Result()

    ctrl = recording(times, clock, stale)
    with capture_logs() as logs:
        async with running(ctrl, cache, clock):
            cache.informer(FOO).add(foo("a"))
            await clock.run_until(1.0)
    gaps = [b - a for a, b in itertools.pairwise(times["ns/a"])]
    assert gaps == pytest.approx([0.005, 0.01, 0.02])  # re-read and retried, then done
    assert ctrl.queue is not None and ctrl.queue.num_requeues(Request("a", "ns")) == 0  # forgotten
    retried = [e for e in logs if e["event"] == "conflict, retrying on fresh data"]
    assert len(retried) == 3 and all("exc_info" not in e for e in retried)
    assert all(e["log_level"] == "info" for e in retried)


async def test_already_exists_is_an_ordinary_failure() -> None:
    clock, cache = FakeClock(), FakeCache()
    times: dict[str, list[float]] = {}

    def exists(req: Request) -> Result:
        raise AlreadyExists(status_body(409, "exists", reason="AlreadyExists"))

    ctrl = recording(times, clock, exists)
    with capture_logs() as logs:
        async with running(ctrl, cache, clock):
            cache.informer(FOO).add(foo("a"))
            await clock.run_until(0.02)
    assert len(times["ns/a"]) == 3  # 0, 5 ms, 15 ms
    assert {e["event"] for e in logs if e["log_level"] == "error"} == {"reconcile failed"}


async def test_a_reconciler_replaced_after_construction_is_the_one_called() -> None:
    """Wrapping `controller.reconciler` (as bench/soak_chaos.py does to trace overlaps)
    takes effect: the workers call whatever the attribute holds."""
    clock, cache = FakeClock(), FakeCache()
    calls: list[str] = []

    async def original(req: Request) -> None:
        calls.append("original " + req.name)

    ctrl = Controller("foo", reconciler(original), watches=[for_(FOO)], workers=1)
    inner = ctrl.reconciler

    class Wrapped:
        async def reconcile(self, req: Request) -> Result | None:
            calls.append("wrapper " + req.name)
            return await inner.reconcile(req)

    ctrl.reconciler = Wrapped()
    async with running(ctrl, cache, clock):
        cache.informer(FOO).add(foo("a"))
        await clock.settle()
    assert calls == ["wrapper a", "original a"]
