"""Which events queue keys with which priority: watch handlers and a Controller's replays.

kube: controller-runtime pkg/handler/eventhandler.go — `addToQueueCreate` gives
`LowPriority` to a CreateEvent with `IsInInitialList`, `addToQueueUpdate` to an update whose
old and new resourceVersion are equal (a resync); deletes keep the default priority. client-go
tools/cache shared_informer.go marks the adds of the initial list, and those a handler
registered later gets for what is already cached, as `isInInitialList`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from asyncop.api import Kind, RawObject, Request
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, owns
from asyncop.runtime.listeners import EventHandler as Handler
from asyncop.runtime.reconcile import reconciler
from asyncop.runtime.workqueue import LOW_PRIORITY, WorkQueue
from asyncop.testing import FakeClock

FOO = Kind("samplecontroller.k8s.io", "v1alpha1", "foos", "Foo")
POD = Kind("", "v1", "pods", "Pod")


def foo(name: str, rv: str = "1") -> RawObject:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",  # type: ignore[typeddict-item]
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv,
                         "uid": f"uid-{name}"}}


def pod_of(owner: str, rv: str = "1") -> RawObject:
    return {"apiVersion": "v1", "kind": "Pod",  # type: ignore[typeddict-item]
            "metadata": {"name": f"{owner}-pod", "namespace": "ns", "resourceVersion": rv,
                         "ownerReferences": [{
                             "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                             "name": owner, "uid": f"uid-{owner}", "controller": True}]}}


def priority(q: WorkQueue[Request], name: str) -> int | None:
    return q.state(Request(name, "ns")).priority


def test_initial_adds_are_low_and_live_adds_are_not() -> None:
    q: WorkQueue[Request] = WorkQueue(clock=FakeClock())
    replaying = True
    handler = for_(FOO).handler(q, initial=lambda: replaying)
    handler.on_add(foo("listed"))
    replaying = False
    handler.on_add(foo("created"))
    assert priority(q, "listed") == LOW_PRIORITY
    assert priority(q, "created") == 0


def test_resync_updates_are_low_and_changes_are_not() -> None:
    q: WorkQueue[Request] = WorkQueue(clock=FakeClock())
    handler = owns(POD).handler(q, primary=FOO, initial=lambda: False)
    handler.on_update(pod_of("a", "5"), pod_of("a", "5"))  # a resync: same resourceVersion
    handler.on_update(pod_of("b", "5"), pod_of("b", "6"))
    handler.on_delete(pod_of("c"))
    assert priority(q, "a") == LOW_PRIORITY
    assert priority(q, "b") == 0
    assert priority(q, "c") == 0


def test_a_change_during_the_replay_raises_the_key() -> None:
    q: WorkQueue[Request] = WorkQueue(clock=FakeClock())
    replaying = True
    handler = for_(FOO).handler(q, initial=lambda: replaying)
    for name in ["a", "b", "c"]:
        handler.on_add(foo(name))
    replaying = False
    handler.on_update(foo("c", "1"), foo("c", "2"))
    assert priority(q, "c") == 0
    assert len(q) == 3


def test_without_initial_every_key_is_priority_zero() -> None:
    q: WorkQueue[Request] = WorkQueue(clock=FakeClock())
    handler = for_(FOO).handler(q)
    handler.on_add(foo("a"))
    handler.on_update(foo("b", "3"), foo("b", "3"))
    assert priority(q, "a") == 0
    assert priority(q, "b") == 0


class Informer:
    """An informer stand-in: `has_synced`, and a registered handler first gets an add for
    every cached object (as `asyncop.runtime.informer.Informer.add_handler` does)."""

    def __init__(self, cached: list[RawObject], *, synced: bool) -> None:
        self.cached = cached
        self.has_synced = synced
        self.handlers: list[Handler] = []

    def add_handler(self, handler: Handler) -> None:
        self.handlers.append(handler)
        for obj in self.cached:
            handler.on_add(obj)

    def add(self, obj: RawObject) -> None:
        for h in self.handlers:
            h.on_add(obj)

    def update(self, old: RawObject, new: RawObject) -> None:
        for h in self.handlers:
            h.on_update(old, new)


class Cache:
    def __init__(self, informer: Informer) -> None:
        self.inf = informer
        self.synced = asyncio.Event()

    def informer(self, kind: Kind) -> Informer:
        return self.inf

    async def wait_for_sync(self) -> None:
        await self.synced.wait()

    async def wait_for_resource_version(self, kind: Kind, key: str, rv: str | None, *,
                                        timeout: float) -> bool:
        return True


@contextlib.asynccontextmanager
async def running(ctrl: Controller, cache: Cache, clock: FakeClock) -> AsyncIterator[None]:
    task = asyncio.create_task(ctrl.run(cache=cache, clock=clock))
    await clock.settle()
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_controller_reconciles_a_live_change_before_the_initial_list() -> None:
    clock = FakeClock()
    informer = Informer([], synced=False)
    cache = Cache(informer)
    order: list[str] = []

    async def fn(req: Request) -> None:
        order.append(req.name)

    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=1)
    async with running(ctrl, cache, clock):
        for i in range(50):
            informer.add(foo(f"k{i}"))  # the initial list, before the informer synced
        informer.has_synced = True
        informer.update(foo("k42", "1"), foo("k42", "2"))  # a live change
        informer.add(foo("new"))  # a live create
        cache.synced.set()
        for _ in range(10):
            await clock.settle()
    assert order[:2] == ["k42", "new"]
    assert sorted(order[2:]) == sorted(f"k{i}" for i in range(50) if i != 42)
    assert order[2:5] == ["k0", "k1", "k2"]  # the replay itself in list order


async def test_restarted_controller_replays_the_cache_at_low_priority() -> None:
    """A controller started on a synced cache (a regained lease) gets an add per cached
    object while its handler is registered: that replay is low, live events are not."""
    clock = FakeClock()
    informer = Informer([foo(f"k{i}") for i in range(20)], synced=True)
    cache = Cache(informer)  # not reporting synced yet: the workers wait
    ctrl = Controller("foo", reconciler(lambda req: None), watches=[for_(FOO)])
    async with running(ctrl, cache, clock):
        informer.add(foo("live"))
        assert ctrl.queue is not None
        assert priority(ctrl.queue, "k0") == LOW_PRIORITY
        assert priority(ctrl.queue, "k19") == LOW_PRIORITY
        assert priority(ctrl.queue, "live") == 0


async def test_priority_queue_off_keeps_one_fifo() -> None:
    clock = FakeClock()
    informer = Informer([foo(f"k{i}") for i in range(5)], synced=True)
    cache = Cache(informer)
    ctrl = Controller("foo", reconciler(lambda req: None), watches=[for_(FOO)],
                      priority_queue=False)
    async with running(ctrl, cache, clock):
        assert ctrl.queue is not None
        assert priority(ctrl.queue, "k0") == 0


async def test_requeues_keep_the_priority_the_key_was_reconciled_with() -> None:
    from asyncop.runtime.reconcile import Result

    clock = FakeClock()
    informer = Informer([foo("replayed")], synced=True)
    cache = Cache(informer)
    ctrl = Controller("foo", reconciler(lambda req: Result(requeue_after=30.0)),
                      watches=[for_(FOO)], workers=1)
    async with running(ctrl, cache, clock):
        informer.add(foo("live"))
        cache.synced.set()
        for _ in range(5):
            await clock.settle()
        assert ctrl.queue is not None
        assert ctrl.queue.delayed == 2
        assert priority(ctrl.queue, "replayed") == LOW_PRIORITY  # its timer stays low
        assert priority(ctrl.queue, "live") == 0
