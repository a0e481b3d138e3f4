"""Informer: reflector logic on a scripted source, then against the embedded API server.

The first part uses a fake that serves LIST pages from a dict of objects and hands each WATCH
a stream that the test feeds (virtual time from FakeClock); like kube-apiserver 1.33 with its
WatchList gate off, it refuses streaming lists (422), so these tests run the informer's LIST
fallback; tests/runtime/test_watchlist.py covers the streaming list. The second part runs
against the embedded API server over real HTTP and checks end state there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from asyncop.api import (
    Invalid,
    Kind,
    RawObject,
    ServerError,
    TooManyRequests,
    deep_copy,
    status_body,
)
from asyncop.api.kinds import CONFIGMAP, NAMESPACE
from asyncop.apiserver import ApiServer
from asyncop.client import Backoff, Client, ClientConfig, TransportError
from asyncop.clock import RealClock
from asyncop.runtime.informer import FuncHandler, Informer
from asyncop.testing import FakeClock, eventually

KIND = Kind("", "v1", "configmaps", "ConfigMap")
END = object()


class FakeSource:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.rv = 100
        self.list_errors: list[Exception] = []
        self.pages: list[tuple[str | None, int]] = []
        self.streams: list[asyncio.Queue[Any]] = []
        self.watch_rvs: list[str | None] = []
        self.refused = 0  # streaming lists refused (kube 1.33's default: WatchList gate off)

    def put(self, name: str, ns: str = "default", **data: str) -> dict[str, Any]:
        self.rv += 1
        obj = {"metadata": {"name": name, "namespace": ns, "resourceVersion": str(self.rv),
                            "managedFields": [{"manager": "x"}]}, "data": data}
        self.objects[f"{ns}/{name}"] = obj
        return deep_copy(obj)  # type: ignore[arg-type,return-value]

    def remove(self, name: str, ns: str = "default") -> dict[str, Any]:
        self.rv += 1
        return self.objects.pop(f"{ns}/{name}")

    async def list(self, kind: Kind, *, namespace: str | None = None, limit: int | None = None,
                   continue_: str | None = None, **_: Any) -> dict[str, Any]:
        self.pages.append((namespace, limit or 0))
        if self.list_errors:
            raise self.list_errors.pop(0)
        keys = sorted(k for k in self.objects if namespace is None or k.startswith(namespace + "/"))
        start = int(continue_ or 0)
        end = start + (limit or len(keys))
        meta: dict[str, Any] = {"resourceVersion": str(self.rv)}
        if end < len(keys):
            meta["continue"] = str(end)
        items = [deep_copy(self.objects[k]) for k in keys[start:end]]  # type: ignore[arg-type]
        return {"items": items, "metadata": meta}

    async def watch(self, kind: Kind, *, namespace: str | None = None,
                    resource_version: str | None = None, send_initial_events: bool = False,
                    **_: Any) -> AsyncIterator[Any]:
        if send_initial_events:
            self.refused += 1
            raise Invalid(status_body(422, 'ListOptions.meta.k8s.io "" is invalid: '
                                      "sendInitialEvents: Forbidden: sendInitialEvents is "
                                      "forbidden for watch unless the WatchList feature gate "
                                      "is enabled"))
        self.watch_rvs.append(resource_version)
        async for item in fed_stream(self.streams):
            yield item

    def send(self, typ: str, obj: dict[str, Any]) -> None:
        send_event(self.streams, typ, obj)


async def fed_stream(streams: list[asyncio.Queue[Any]]) -> AsyncIterator[Any]:
    """A watch stream the test feeds through a new queue, appended to `streams`: `END` ends
    it, an exception put there is raised from it."""
    q: asyncio.Queue[Any] = asyncio.Queue()
    streams.append(q)
    while True:
        item = await q.get()
        if item is END:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


def send_event(streams: list[asyncio.Queue[Any]], typ: str, obj: dict[str, Any]) -> None:
    """One watch event (a copy of `obj`) into the newest stream."""
    streams[-1].put_nowait({"type": typ, "object": deep_copy(obj)})  # type: ignore[arg-type]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def _rec(self, op: str, obj: RawObject) -> None:
        self.events.append((op, obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))

    def on_add(self, obj: RawObject) -> None:
        self._rec("add", obj)

    def on_update(self, old: RawObject, new: RawObject) -> None:
        self._rec("update", new)

    def on_delete(self, obj: RawObject) -> None:
        self._rec("delete", obj)


@pytest.fixture
async def env() -> AsyncIterator[tuple[FakeSource, FakeClock, list[asyncio.Task[None]]]]:
    tasks: list[asyncio.Task[None]] = []
    yield FakeSource(), FakeClock(), tasks
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def start(inf: Informer, tasks: list[asyncio.Task[None]]) -> None:
    tasks.append(asyncio.create_task(inf.run()))


def make(src: FakeSource, clock: FakeClock, **kw: Any) -> Informer:
    kw.setdefault("backoff", Backoff(base=1.0, cap=8.0, jitter=0.0))
    return Informer(src, KIND, clock=clock, **kw)  # type: ignore[arg-type]


async def synced(env: Any, **kw: Any) -> tuple[Informer, Recorder]:
    """An informer of the fake source (see `make`) with a Recorder, started and synced."""
    src, clock, tasks = env
    inf = make(src, clock, **kw)
    rec = Recorder()
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
    return inf, rec


async def test_paginated_list_then_watch_from_list_rv(env: Any) -> None:
    src, clock, _ = env
    for i in range(7):
        src.put(f"cm{i}")
    inf, rec = await synced(env, page_size=3)
    assert len(src.pages) == 3  # 3 + 3 + 1
    assert sorted(inf.store.keys()) == [f"default/cm{i}" for i in range(7)]
    assert [e[0] for e in rec.events] == ["add"] * 7
    cached = inf.store.get("default/cm0")
    assert cached is not None and "managedFields" not in cached["metadata"]
    assert cached["kind"] == "ConfigMap" and cached["apiVersion"] == "v1"
    await clock.settle()
    assert src.watch_rvs == ["107"]


async def test_watch_events_bookmarks_and_resume_from_last_rv(env: Any) -> None:
    src, clock, _ = env
    inf, rec = await synced(env)
    await clock.settle()
    src.send("ADDED", src.put("a"))
    src.send("MODIFIED", src.put("a", k="v"))
    src.send("BOOKMARK", {"kind": "ConfigMap", "metadata": {"resourceVersion": "500"}})
    await clock.settle()
    assert inf.last_resource_version == "500"
    src.streams[-1].put_nowait(END)
    await clock.settle()
    assert src.watch_rvs[-1] == "500"
    src.send("DELETED", src.remove("a"))
    await clock.settle()
    assert rec.events == [("add", "a", "101"), ("update", "a", "102"), ("delete", "a", "102")]
    assert inf.store.keys() == []


async def test_expired_relist_emits_synthetic_diff(env: Any) -> None:
    src, clock, _ = env
    src.put("stays")
    src.put("changes")
    src.put("vanishes")
    inf, rec = await synced(env)
    await clock.settle()
    rec.events.clear()
    # while "disconnected": one changes, one vanishes, one appears
    src.put("changes", k="new")
    src.remove("vanishes")
    src.put("appears")
    src.send("ERROR", status_body(410, "too old resource version", reason="Expired"))
    await clock.settle()
    assert sorted(rec.events) == [("add", "appears", "106"), ("delete", "vanishes", "103"),
                                  ("update", "changes", "104")]
    assert sorted(inf.store.keys()) == ["default/appears", "default/changes", "default/stays"]
    assert src.watch_rvs[-1] == "106"


async def test_list_errors_back_off_exponentially_then_recover(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    src.list_errors = [ServerError(status_body(500, "boom")) for _ in range(3)]
    inf = make(src, clock)
    start(inf, tasks)
    await clock.settle()
    deadlines = []
    for _ in range(3):
        deadlines.append(clock.next_deadline())
        assert not inf.has_synced
        await clock.advance(clock.next_deadline() - clock.monotonic())  # type: ignore[operator]
    assert deadlines == [1.0, 3.0, 7.0]  # 1 s, then 2 s, then 4 s later
    assert inf.has_synced and inf.store.keys() == ["default/a"]


async def test_too_many_requests_waits_for_retry_after(env: Any) -> None:
    src, clock, tasks = env
    src.list_errors = [TooManyRequests(status_body(429, "slow down"), retry_after=7.0)]
    inf = make(src, clock)
    start(inf, tasks)
    await clock.settle()
    assert clock.next_deadline() == 7.0
    await clock.advance(7.0)
    assert inf.has_synced


async def test_broken_stream_resumes_without_relist(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    inf = make(src, clock)
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    src.send("ADDED", src.put("b"))
    src.streams[-1].put_nowait(TransportError("reset"))
    await clock.settle()
    await clock.advance(1.0)
    assert len(src.pages) == 1  # no relist
    assert src.watch_rvs == ["101", "102"]


async def test_repeated_watch_errors_fall_back_to_a_relist(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    inf = make(src, clock)
    start(inf, tasks)
    await inf.wait_for_sync()
    for i in range(5):
        await clock.settle()
        assert len(src.streams) == i + 1 and len(src.pages) == 1
        src.streams[-1].put_nowait(ServerError(status_body(500, "watch broken")))
        await clock.settle()
        await clock.advance(clock.next_deadline() - clock.monotonic())  # type: ignore[operator]
    assert len(src.pages) == 2  # listed again after the fifth failure


async def test_raising_handler_never_breaks_stream_and_late_handler_gets_replay(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    inf = make(src, clock)

    def boom(obj: RawObject) -> None:
        raise RuntimeError("handler bug")

    inf.add_handler(FuncHandler(add=boom))
    rec = Recorder()
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    src.send("ADDED", src.put("b"))
    await clock.settle()
    assert [e[1] for e in rec.events] == ["a", "b"]
    late = Recorder()
    inf.add_handler(late)
    assert sorted(late.events) == [("add", "a", "101"), ("add", "b", "102")]


class SlowHandler:
    """An async handler that blocks until released; keeps its own view of the objects."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.view: dict[str, str] = {}
        self.ops: list[tuple[str, str]] = []

    async def _step(self, op: str, obj: RawObject) -> None:
        await self.gate.wait()
        meta = obj["metadata"]
        self.ops.append((op, meta["name"]))
        if op == "delete":
            self.view.pop(meta["name"], None)
        else:
            self.view[meta["name"]] = meta["resourceVersion"]

    async def on_add(self, obj: RawObject) -> None:
        await self._step("add", obj)

    async def on_update(self, old: RawObject, new: RawObject) -> None:
        await self._step("update", new)

    async def on_delete(self, obj: RawObject) -> None:
        await self._step("delete", obj)


def store_view(inf: Informer) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in inf.store.list()}


async def test_slow_async_handler_blocks_neither_stream_nor_others(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    inf = make(src, clock)
    slow, rec = SlowHandler(), Recorder()
    inf.add_handler(slow)
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    src.send("ADDED", src.put("b"))
    src.send("MODIFIED", src.put("a", k="v"))
    src.send("DELETED", src.remove("b"))
    await clock.settle()
    assert [(op, n) for op, n, _ in rec.events] == [("add", "a"), ("add", "b"), ("update", "a"),
                                                    ("delete", "b")]
    assert store_view(inf) == {"a": "103"} and slow.ops == []
    slow.gate.set()
    await clock.settle()
    assert slow.ops == [("add", "a"), ("add", "b"), ("update", "a"), ("delete", "b")]
    assert slow.view == store_view(inf)


async def test_overflowing_async_handler_catches_up_from_the_store(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    src.put("b")
    inf = make(src, clock)
    slow = SlowHandler()
    inf.add_handler(slow, buffer=2)
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    src.send("ADDED", src.put("c"))
    src.send("MODIFIED", src.put("a", k="v"))
    src.send("DELETED", src.remove("b"))
    src.send("ADDED", src.put("d"))
    await clock.settle()
    slow.gate.set()
    await clock.settle()
    assert slow.view == store_view(inf) == {"a": "104", "c": "103", "d": "106"}


async def test_removed_handlers_get_no_more_events(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    inf = make(src, clock)
    kept, dropped, slow = Recorder(), Recorder(), SlowHandler()
    inf.add_handler(kept)
    registration = inf.add_handler(dropped)
    inf.add_handler(slow)
    slow.gate.set()
    assert inf.handler_count == 3
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    assert slow.ops == [("add", "a")]
    registration.remove()
    registration.remove()  # idempotent
    assert inf.remove_handler(slow) is True
    assert inf.remove_handler(slow) is False
    assert inf.handler_count == 1
    src.send("ADDED", src.put("b"))
    await clock.settle()
    assert [e[1] for e in kept.events] == ["a", "b"]
    assert [e[1] for e in dropped.events] == ["a"]
    assert slow.ops == [("add", "a")]  # its task was stopped too


async def test_a_handler_may_remove_itself_while_an_event_is_dispatched(env: Any) -> None:
    src, clock, tasks = env
    inf = make(src, clock)
    after = Recorder()
    seen: list[str] = []

    def once(obj: RawObject) -> None:
        seen.append(obj["metadata"]["name"])
        inf.remove_handler(handler)

    handler = FuncHandler(add=once)
    inf.add_handler(handler)
    inf.add_handler(after)
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    src.send("ADDED", src.put("a"))
    src.send("ADDED", src.put("b"))
    await clock.settle()
    assert seen == ["a"]
    assert [e[1] for e in after.events] == ["a", "b"]  # the next handler still got "a"


async def test_last_activity_is_progress_not_attempts(env: Any) -> None:
    src, clock, tasks = env
    inf = make(src, clock)
    assert inf.last_activity() is None
    await clock.advance(5.0)
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    assert inf.last_activity() == 5.0  # the LIST
    await clock.advance(10.0)
    src.send("BOOKMARK", {"kind": "ConfigMap", "metadata": {"resourceVersion": "300"}})
    await clock.settle()
    assert inf.last_activity() == 15.0  # a bookmark is progress
    for _ in range(8):  # the watch keeps failing (and relists after 5 failures)
        src.streams[-1].put_nowait(ServerError(status_body(500, "watch broken")))
        await clock.settle()
        await clock.advance(clock.next_deadline() - clock.monotonic())  # type: ignore[operator]
        await clock.settle()
    assert len(src.pages) >= 2 and clock.monotonic() > 30.0
    assert inf.last_activity() == 15.0  # retries and fallback relists are not
    src.send("ADDED", src.put("a"))
    await clock.settle()
    assert inf.last_activity() == clock.monotonic()


async def test_resync_redelivers_updates(env: Any) -> None:
    src, clock, _ = env
    src.put("a")
    src.put("b")
    _, rec = await synced(env, resync_period=30.0)
    rec.events.clear()
    await clock.advance(30.0)
    assert sorted(rec.events) == [("update", "a", "101"), ("update", "b", "102")]


async def test_watchdog_reconnects_silent_stream(env: Any) -> None:
    src, clock, tasks = env
    inf = make(src, clock, watchdog_timeout=60.0)
    start(inf, tasks)
    await inf.wait_for_sync()
    await clock.settle()
    src.send("ADDED", src.put("a"))
    await clock.advance(40.0)
    assert len(src.streams) == 1
    await clock.advance(40.0)  # 80 s since the last event > 60 s: cancelled at t=100 at most
    await clock.advance(30.0)
    assert len(src.streams) == 2
    assert src.watch_rvs[-1] == "101"
    # without bookmarks a quiet watch is only silent, not failing: that counts as progress
    assert inf.last_activity() == 60.0  # when the watchdog ended the silent stream


async def test_namespace_set_scopes_lists_and_relists(env: Any) -> None:
    src, clock, _ = env
    src.put("a", "ns1")
    src.put("b", "ns2")
    src.put("c", "ns3")
    inf, rec = await synced(env, namespace={"ns1", "ns2"})
    await clock.settle()
    assert sorted(inf.store.keys()) == ["ns1/a", "ns2/b"]
    assert sorted(ns for ns, _ in src.pages) == ["ns1", "ns2"]
    # an expired ns1 stream relists ns1 only: ns2's object is not deleted
    src.remove("a", "ns1")
    rec.events.clear()
    ns1_stream = src.streams[0]
    ns1_stream.put_nowait({"type": "ERROR", "object": status_body(410, "gone")})
    await clock.settle()
    assert rec.events == [("delete", "a", "101")]
    assert inf.store.keys() == ["ns2/b"]


# -- against the embedded API server -----------------------------------------------------------

FAST = Backoff(base=0.01, cap=0.05)


@pytest.fixture
async def kube() -> AsyncIterator[tuple[ApiServer, Client]]:
    async with ApiServer(port=0, simulators=False) as srv:
        async with Client(ClientConfig(host=srv.url), backoff=FAST, timeout=10) as c:
            yield srv, c


@pytest.fixture
async def running() -> AsyncIterator[Callable[[Informer], Awaitable[None]]]:
    """`await running(inf)`: start the informer (stopped at teardown), wait for its sync."""
    tasks: list[asyncio.Task[None]] = []

    async def start(inf: Informer) -> None:
        tasks.append(asyncio.create_task(inf.run()))
        await asyncio.wait_for(inf.wait_for_sync(), 10)

    yield start
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.asynccontextmanager
async def started(inf: Informer) -> AsyncIterator[Informer]:
    """Run the informer for the duration of the block (stopped before its client closes)."""
    task = asyncio.create_task(inf.run())
    try:
        yield inf
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def recorded(c: Client, **kw: Any) -> tuple[Informer, Recorder]:
    """A ConfigMap informer on the real clock with a Recorder as its handler."""
    inf = Informer(c, CONFIGMAP, clock=RealClock(), backoff=FAST, **kw)
    rec = Recorder()
    inf.add_handler(rec)
    return inf, rec


def cm(name: str, ns: str = "default", labels: dict[str, str] | None = None,
       **data: str) -> RawObject:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "data": data}


async def namespaces(c: Client, *names: str) -> None:
    for name in names:
        await c.create(NAMESPACE, {"metadata": {"name": name}})


async def server_state(c: Client, ns: str | None = None) -> dict[str, str]:
    items = (await c.list(CONFIGMAP, namespace=ns))["items"]
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}":
            o["metadata"]["resourceVersion"] for o in items}


def cache_state(inf: Informer) -> dict[str, str]:
    return {k: o["metadata"]["resourceVersion"] for k in inf.store.keys()
            if (o := inf.store.get(k)) is not None}


def per_key(rec: Recorder) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for op, name, _ in rec.events:
        out.setdefault(name, []).append(op)
    return out


async def test_server_paginated_initial_list(kube: Any, running: Any) -> None:
    _, c = kube
    await asyncio.gather(*(c.create(CONFIGMAP, cm(f"p{i:03d}")) for i in range(60)))
    pages: list[str | None] = []
    real_list = c.list

    async def counting_list(*a: Any, **kw: Any) -> dict[str, Any]:
        pages.append(kw.get("continue_"))
        return await real_list(*a, **kw)

    c.list = counting_list
    inf, rec = recorded(c, page_size=7)
    await running(inf)
    c.list = real_list
    assert len(pages) == 9 and pages[0] is None and all(pages[1:])  # 8 x 7 + 4
    assert cache_state(inf) == await server_state(c)
    assert sorted(name for _, name, _ in rec.events) == [f"p{i:03d}" for i in range(60)]
    cached = inf.store.get("default/p000")
    assert cached is not None and "managedFields" not in cached["metadata"]


async def test_server_watch_resumes_after_cut_without_duplicates(kube: Any, running: Any) -> None:
    srv, c = kube
    await c.create(CONFIGMAP, cm("a"))
    await c.create(CONFIGMAP, cm("b"))
    inf, rec = recorded(c)
    await running(inf)
    for round_ in range(3):
        assert srv.faults.cut_watches() >= 0
        await c.create(CONFIGMAP, cm(f"new{round_}"))
        await c.patch(CONFIGMAP, "a", {"data": {"round": str(round_)}})
    await c.delete(CONFIGMAP, "b")
    srv.faults.cut_watches()
    await c.create(CONFIGMAP, cm("last"))
    want = await server_state(c)
    await eventually(lambda: cache_state(inf) == want, timeout=10)
    events = per_key(rec)
    assert events["a"] == ["add", "update", "update", "update"]
    assert events["b"] == ["add", "delete"]
    assert events["new0"] == events["new1"] == events["new2"] == events["last"] == ["add"]


async def test_server_bookmarks_advance_resource_version() -> None:
    async with ApiServer(port=0, simulators=False, bookmark_interval=0.05) as srv:
        async with Client(ClientConfig(host=srv.url), backoff=FAST) as c:
            await namespaces(c, "watched", "other")
            await c.create(CONFIGMAP, cm("mine", "watched"))
            inf = Informer(c, CONFIGMAP, clock=RealClock(), namespace="watched", backoff=FAST)
            async with started(inf):
                await asyncio.wait_for(inf.wait_for_sync(), 10)
                elsewhere = await c.create(CONFIGMAP, cm("theirs", "other"))
                target = int(elsewhere["metadata"]["resourceVersion"])
                # no event of the watched namespace carries this version: only a bookmark can
                await eventually(lambda: int(inf.last_resource_version or 0) >= target, timeout=10)
                assert inf.store.keys() == ["watched/mine"]


async def test_server_expired_relists_with_synthetic_events(kube: Any, running: Any) -> None:
    srv, c = kube
    for name in ("stays", "changes", "vanishes"):
        await c.create(CONFIGMAP, cm(name))
    inf, rec = recorded(c)
    await running(inf)
    # disconnect: every watch attempt is refused while the world changes
    srv.faults.fail(verb="watch", status=503, count=None)
    srv.faults.cut_watches()
    await c.patch(CONFIGMAP, "changes", {"data": {"k": "v"}})
    await c.delete(CONFIGMAP, "vanishes")
    await c.create(CONFIGMAP, cm("appears"))
    srv.faults.expire_history()
    rec.events.clear()
    srv.faults.clear()
    want = await server_state(c)
    await eventually(lambda: cache_state(inf) == want, timeout=10)
    assert sorted((op, name) for op, name, _ in rec.events) == [
        ("add", "appears"), ("delete", "vanishes"), ("update", "changes")]


async def test_server_list_5xx_backs_off_on_the_clock(kube: Any) -> None:
    srv, _ = kube
    clock = FakeClock()
    async with Client(ClientConfig(host=srv.url), max_retries=0) as c:
        await c.create(CONFIGMAP, cm("x"))
        srv.faults.fail(verb="list", status=500, count=3)
        inf = Informer(c, CONFIGMAP, clock=clock, backoff=Backoff(base=2.0, cap=60, jitter=0))
        async with started(inf):
            for wait in (2.0, 4.0, 8.0):  # one failed list per pause, pauses doubling
                # (the refused streaming list arms its watchdog for a moment first)
                await eventually(lambda w=wait: clock.next_deadline() == pytest.approx(
                    clock.monotonic() + w), timeout=5)
                assert not inf.has_synced
                await clock.advance(wait)
            await asyncio.wait_for(inf.wait_for_sync(), 10)
            assert inf.store.keys() == ["default/x"]


async def test_server_label_selector_and_namespace_scoping(kube: Any, running: Any) -> None:
    _, c = kube
    await namespaces(c, "ns1", "ns2", "ns3")
    web = {"app": "web"}
    await c.create(CONFIGMAP, cm("w1", "ns1", web))
    await c.create(CONFIGMAP, cm("d1", "ns1", {"app": "db"}))
    await c.create(CONFIGMAP, cm("w2", "ns2", web))
    await c.create(CONFIGMAP, cm("w3", "ns3", web))
    inf = Informer(c, CONFIGMAP, clock=RealClock(), namespace={"ns1", "ns2"},
                   label_selector="app=web", backoff=FAST)
    rec = Recorder()
    inf.add_handler(rec)
    await running(inf)
    assert sorted(inf.store.keys()) == ["ns1/w1", "ns2/w2"]
    await c.create(CONFIGMAP, cm("w4", "ns2", web))
    await c.create(CONFIGMAP, cm("w5", "ns3", web))
    await c.patch(CONFIGMAP, "w1", {"metadata": {"labels": {"app": "other"}}}, namespace="ns1")
    await c.patch(CONFIGMAP, "d1", {"metadata": {"labels": {"app": "web"}}}, namespace="ns1")
    await eventually(lambda: sorted(inf.store.keys()) == ["ns1/d1", "ns2/w2", "ns2/w4"],
                     timeout=10)
    assert per_key(rec)["w1"] == ["add", "delete"]
    assert "w5" not in per_key(rec)


async def test_server_raising_handler_never_breaks_the_stream(kube: Any, running: Any) -> None:
    _, c = kube
    inf = Informer(c, CONFIGMAP, clock=RealClock(), backoff=FAST)
    calls = 0

    def explode(*_: Any) -> None:
        nonlocal calls
        calls += 1
        raise ValueError("bad handler")

    inf.add_handler(FuncHandler(add=explode, update=explode, delete=explode))
    rec = Recorder()
    inf.add_handler(rec)
    await running(inf)
    for i in range(5):
        await c.create(CONFIGMAP, cm(f"h{i}"))
    await c.delete(CONFIGMAP, "h0")
    await eventually(lambda: len(rec.events) == 6, timeout=10)
    assert calls == 6
    assert cache_state(inf) == await server_state(c)


async def test_server_slow_async_handler_never_blocks_the_stream(kube: Any,
                                                                  running: Any) -> None:
    _, c = kube
    inf = Informer(c, CONFIGMAP, clock=RealClock(), backoff=FAST)
    slow = SlowHandler()
    inf.add_handler(slow)
    await running(inf)
    for i in range(20):
        await c.create(CONFIGMAP, cm(f"s{i}"))
    await c.delete(CONFIGMAP, "s3")
    want = await server_state(c)
    await eventually(lambda: cache_state(inf) == want, timeout=10)
    assert slow.ops == []  # still stuck on its first event, the stream went on
    slow.gate.set()
    await eventually(lambda: slow.view == store_view(inf), timeout=10)
    assert slow.ops[-1] == ("delete", "s3")


async def test_server_restart_keeping_or_dropping_state() -> None:
    async with ApiServer(port=0, simulators=False) as srv:
        async with Client(ClientConfig(host=srv.url), backoff=FAST, timeout=5) as c:
            await c.create(CONFIGMAP, cm("before"))
            inf, rec = recorded(c)
            async with started(inf):
                await asyncio.wait_for(inf.wait_for_sync(), 10)
                await srv.restart(keep_state=True)
                await c.create(CONFIGMAP, cm("after"))
                want = await server_state(c)
                await eventually(lambda: cache_state(inf) == want, timeout=10)
                assert per_key(rec) == {"before": ["add"], "after": ["add"]}
                await srv.restart(keep_state=False)  # a new, empty cluster: relist deletes all
                await c.create(CONFIGMAP, cm("fresh"))
                want = await server_state(c)
                await eventually(lambda: cache_state(inf) == want, timeout=10)
                assert per_key(rec)["before"] == ["add", "delete"]
                assert per_key(rec)["fresh"] == ["add"]


class StallingClient(Client):
    """Its first plain watch stream goes silent after the initial events (a half-open
    connection); the streaming list the server refuses (1.33's default) is not that one."""

    stalled = False

    async def watch(self, kind: Kind, **kw: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        stall = not self.stalled and not kw.get("send_initial_events")
        self.stalled = self.stalled or stall
        async for event in super().watch(kind, **kw):
            if stall:
                await asyncio.Event().wait()  # never delivers another byte
            yield event


async def test_server_watchdog_reconnects_a_silent_stream(kube: Any) -> None:
    srv, _ = kube
    clock = FakeClock()
    async with StallingClient(ClientConfig(host=srv.url), backoff=FAST) as c:
        inf = Informer(c, CONFIGMAP, clock=clock, watchdog_timeout=120.0, backoff=FAST)
        async with started(inf):
            await asyncio.wait_for(inf.wait_for_sync(), 10)
            await c.create(CONFIGMAP, cm("during-stall"))
            await eventually(lambda: c.stalled, timeout=5)
            await clock.advance(119.0)
            assert inf.store.get("default/during-stall") is None  # the dead stream hid it
            await clock.advance(2.0)
            await eventually(lambda: inf.store.get("default/during-stall") is not None, timeout=10)
