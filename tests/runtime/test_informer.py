"""Informer reflector logic against a scripted in-memory list/watch source (no server).

The fake serves LIST pages from a dict of objects and hands each WATCH a stream that the test
feeds; virtual time comes from FakeClock. Server-backed tests live in test_informer_server.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from asyncop.api import Kind, RawObject, ServerError, deep_copy, status_body
from asyncop.client import Backoff, TransportError
from asyncop.runtime.informer import FuncHandler, Informer
from asyncop.testing import FakeClock

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
                    resource_version: str | None = None, **_: Any) -> AsyncIterator[Any]:
        q: asyncio.Queue[Any] = asyncio.Queue()
        self.streams.append(q)
        self.watch_rvs.append(resource_version)
        while True:
            item = await q.get()
            if item is END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def send(self, typ: str, obj: dict[str, Any]) -> None:
        self.streams[-1].put_nowait({"type": typ, "object": deep_copy(obj)})  # type: ignore[arg-type]


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


async def test_paginated_list_then_watch_from_list_rv(env: Any) -> None:
    src, clock, tasks = env
    for i in range(7):
        src.put(f"cm{i}")
    inf = make(src, clock, page_size=3)
    rec = Recorder()
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
    assert len(src.pages) == 3  # 3 + 3 + 1
    assert sorted(inf.store.keys()) == [f"default/cm{i}" for i in range(7)]
    assert [e[0] for e in rec.events] == ["add"] * 7
    cached = inf.store.get("default/cm0")
    assert cached is not None and "managedFields" not in cached["metadata"]
    assert cached["kind"] == "ConfigMap" and cached["apiVersion"] == "v1"
    await clock.settle()
    assert src.watch_rvs == ["107"]


async def test_watch_events_bookmarks_and_resume_from_last_rv(env: Any) -> None:
    src, clock, tasks = env
    inf = make(src, clock)
    rec = Recorder()
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
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
    src, clock, tasks = env
    src.put("stays")
    src.put("changes")
    src.put("vanishes")
    inf = make(src, clock)
    rec = Recorder()
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
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


async def test_resync_redelivers_updates(env: Any) -> None:
    src, clock, tasks = env
    src.put("a")
    src.put("b")
    inf = make(src, clock, resync_period=30.0)
    rec = Recorder()
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
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


async def test_namespace_set_scopes_lists_and_relists(env: Any) -> None:
    src, clock, tasks = env
    src.put("a", "ns1")
    src.put("b", "ns2")
    src.put("c", "ns3")
    inf = make(src, clock, namespace={"ns1", "ns2"})
    rec = Recorder()
    inf.add_handler(rec)
    start(inf, tasks)
    await inf.wait_for_sync()
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
