"""A sharded Controller: which keys it enqueues and reconciles, and a lost shard's work.

Uses a hand-fed cache (objects with UUID uids picked to fall in chosen shards) and a real
ShardScope: only keys of active shards are enqueued (owned objects by their owner's uid),
a key whose shard was handed over while it waited is dropped, a newly acquired shard's
cached objects are enqueued at once, and losing a shard cancels its in-flight reconcile while
the worker goes on with other keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import AsyncIterator

from asyncop.api import Kind, RawObject, Request
from asyncop.api.kinds import POD
from asyncop.api.shards import ShardSpace
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, owns
from asyncop.runtime.listeners import EventHandler as Handler
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.runtime.shards import ShardScope
from asyncop.testing import FakeClock, eventually

FOO = Kind("samplecontroller.k8s.io", "v1alpha1", "foos", "Foo")
SPACE = ShardSpace(4)
_rng = random.Random(7)


def uid_in(shard: int) -> str:
    while True:
        uid = str(uuid.UUID(int=_rng.getrandbits(128), version=4))
        if SPACE.shard_of_uid(uid) == shard:
            return uid


def foo(name: str, shard: int) -> RawObject:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",  # type: ignore[return-value]
            "metadata": {"name": name, "namespace": "ns", "uid": uid_in(shard),
                         "resourceVersion": "1"}}


def pod_of(owner: RawObject, name: str) -> RawObject:
    ref = {"apiVersion": owner["apiVersion"], "kind": "Foo", "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], "controller": True}
    return {"apiVersion": "v1", "kind": "Pod",  # type: ignore[return-value]
            "metadata": {"name": name, "namespace": "ns", "uid": uid_in(0),
                         "ownerReferences": [ref]}}


class Informer:
    def __init__(self) -> None:
        self.handlers: list[Handler] = []
        self.objs: dict[str, RawObject] = {}

    def add_handler(self, handler: Handler) -> None:
        self.handlers.append(handler)

    def add(self, obj: RawObject) -> None:
        self.objs[obj["metadata"]["name"]] = obj
        for h in self.handlers:
            h.on_add(obj)


class Cache:
    def __init__(self) -> None:
        self.informers: dict[Kind, Informer] = {}

    def informer(self, kind: Kind) -> Informer:
        return self.informers.setdefault(kind, Informer())

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None:
        return self.informer(kind).objs.get(name)

    def list(self, kind: Kind, *, namespace: str | None = None,
             labels: dict[str, str] | None = None) -> list[RawObject]:
        return list(self.informer(kind).objs.values())

    async def wait_for_sync(self) -> None:
        return None

    async def wait_for_resource_version(self, kind: Kind, key: str, rv: str | None, *,
                                        timeout: float) -> bool:
        return True


@contextlib.asynccontextmanager
async def run(ctrl: Controller, cache: Cache, scope: ShardScope) -> AsyncIterator[None]:
    task = asyncio.create_task(ctrl.run(cache=cache, clock=scope.clock,  # type: ignore[arg-type]
                                        shards=scope))
    await asyncio.sleep(0)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_only_active_shards_are_enqueued_and_reconciled() -> None:
    scope = ShardScope(SPACE, clock=FakeClock())
    scope.activate([1])
    seen: list[str] = []

    async def fn(req: Request) -> Result:
        seen.append(req.name)
        return Result()

    cache = Cache()
    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO), owns(POD)], workers=2)
    async with run(ctrl, cache, scope):
        mine, theirs = foo("mine", 1), foo("theirs", 2)
        cache.informer(FOO).add(mine)
        cache.informer(FOO).add(theirs)
        await eventually(lambda: seen == ["mine"], timeout=5)
        cache.informer(POD).add(pod_of(theirs, "p-theirs"))  # owned: routes by the owner
        cache.informer(POD).add(pod_of(mine, "p-mine"))
        await eventually(lambda: seen == ["mine", "mine"], timeout=5)
        scope.activate([2])  # acquired: its cached objects are enqueued at once
        await eventually(lambda: "theirs" in seen, timeout=5)
    assert set(seen) == {"mine", "theirs"}


async def test_a_key_handed_over_while_queued_is_dropped() -> None:
    scope = ShardScope(SPACE, clock=FakeClock())
    scope.activate([1])
    release = asyncio.Event()
    seen: list[str] = []

    async def fn(req: Request) -> Result:
        seen.append(req.name)
        if req.name == "first":
            await release.wait()
        return Result()

    cache = Cache()
    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=1)
    async with run(ctrl, cache, scope):
        cache.informer(FOO).add(foo("first", 1))
        await eventually(lambda: seen == ["first"], timeout=5)
        cache.informer(FOO).add(foo("second", 1))  # queued behind the only worker
        drained = asyncio.create_task(scope.drain(1, grace=30))
        await asyncio.sleep(0)
        release.set()
        assert await drained is True  # the in-flight reconcile finished first
        queue = ctrl.queue
        assert queue is not None
        await eventually(lambda: len(queue) == 0 and queue.processing == 0, timeout=5)
    assert seen == ["first"]  # "second" was never reconciled here
    assert ctrl.queue is not None


async def test_a_lost_shard_cancels_its_reconcile_and_the_worker_goes_on() -> None:
    scope = ShardScope(SPACE, clock=FakeClock())
    scope.activate([1, 3])
    started, finished = [], []
    hang = asyncio.Event()

    async def fn(req: Request) -> Result:
        started.append(req.name)
        if req.name == "lost":
            await hang.wait()  # never set: only the revoke ends it
        finished.append(req.name)
        return Result()

    cache = Cache()
    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=1)
    async with run(ctrl, cache, scope):
        cache.informer(FOO).add(foo("lost", 1))
        await eventually(lambda: started == ["lost"], timeout=5)
        cache.informer(FOO).add(foo("kept", 3))
        scope.revoke([1])
        await eventually(lambda: finished == ["kept"], timeout=5)
    assert "lost" not in finished




async def test_an_acquired_shard_is_replayed_behind_live_events() -> None:
    """The keys a newly acquired shard brings are a replay: LOW_PRIORITY (as an initial
    list's; controller-runtime's handler.LowPriority), so a live change goes first."""
    scope = ShardScope(SPACE, clock=FakeClock())
    scope.activate([1])
    release = asyncio.Event()
    seen: list[str] = []

    async def fn(req: Request) -> Result:
        seen.append(req.name)
        if req.name == "blocker":
            await release.wait()
        return Result()

    cache = Cache()
    ctrl = Controller("foo", reconciler(fn), watches=[for_(FOO)], workers=1)
    async with run(ctrl, cache, scope):
        cache.informer(FOO).add(foo("blocker", 1))
        await eventually(lambda: seen == ["blocker"], timeout=5)
        for i in range(5):
            cache.informer(FOO).objs[f"theirs-{i}"] = foo(f"theirs-{i}", 2)  # cached only
        scope.activate([1, 2])
        cache.informer(FOO).add(foo("live", 1))
        release.set()
        await eventually(lambda: len(seen) == 7, timeout=5)
    assert seen[:2] == ["blocker", "live"]
    assert seen[2:] == [f"theirs-{i}" for i in range(5)]
