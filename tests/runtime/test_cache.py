"""Cache: shared informers per Kind, reads, start/stop, read-your-own-writes waits.

The first tests use a tiny in-memory list/watch source; the last ones run against the
embedded API server over real HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from asyncop.api import Invalid, Kind, deep_copy, status_body
from asyncop.api.kinds import CONFIGMAP, NAMESPACE
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.clock import RealClock
from asyncop.runtime.cache import Cache
from asyncop.runtime.ownwrites import NotWatched
from asyncop.testing import FakeClock


class Source:
    """Objects per Kind; each watch gets a queue the test feeds. Streaming lists are refused,
    as kube-apiserver 1.33 does by default, so the informers LIST (test_watchlist.py streams)."""

    def __init__(self) -> None:
        self.rv = 10
        self.objects: dict[Kind, dict[str, dict[str, Any]]] = {}
        self.streams: dict[Kind, asyncio.Queue[dict[str, Any]]] = {}
        self.watching: set[Kind] = set()

    def obj(
        self, kind: Kind, name: str, ns: str | None = "default", **labels: str
    ) -> dict[str, Any]:
        self.rv += 1
        meta: dict[str, Any] = {"name": name, "resourceVersion": str(self.rv), "labels": labels}
        if ns:
            meta["namespace"] = ns
        o = {"metadata": meta}
        self.objects.setdefault(kind, {})[f"{ns}/{name}" if ns else name] = o
        return o

    async def list(self, kind: Kind, *, namespace: str | None = None, **_: Any) -> dict[str, Any]:
        items = [deep_copy(o) for k, o in sorted(self.objects.get(kind, {}).items())  # type: ignore[arg-type]
                 if namespace is None or k.startswith(namespace + "/")]
        return {"items": items, "metadata": {"resourceVersion": str(self.rv)}}

    async def watch(self, kind: Kind, *, send_initial_events: bool = False,
                    **_: Any) -> AsyncIterator[dict[str, Any]]:
        if send_initial_events:
            raise Invalid(status_body(422, "sendInitialEvents is forbidden for watch unless "
                                      "the WatchList feature gate is enabled"))
        q = self.streams.setdefault(kind, asyncio.Queue())
        self.watching.add(kind)
        try:
            while True:
                yield await q.get()
        finally:
            self.watching.discard(kind)

    def send(self, kind: Kind, typ: str, obj: dict[str, Any]) -> None:
        self.streams[kind].put_nowait({"type": typ, "object": deep_copy(obj)})  # type: ignore[arg-type]


@pytest.fixture
async def cache() -> AsyncIterator[tuple[Cache, Source, FakeClock]]:
    src, clock = Source(), FakeClock()
    c = Cache(src, clock=clock)  # type: ignore[arg-type]
    yield c, src, clock
    await c.stop()


async def test_one_informer_per_kind_started_lazily_and_reads(cache: Any) -> None:
    c, src, _ = cache
    src.obj(CONFIGMAP, "a", app="web")
    src.obj(CONFIGMAP, "b", app="db")
    src.obj(CONFIGMAP, "c", "other", app="web")
    src.obj(NAMESPACE, "default", None)
    inf = c.informer(CONFIGMAP)
    assert c.informer(CONFIGMAP) is inf
    assert not c.has_synced
    await c.start()
    await c.wait_for_sync()
    assert c.has_synced
    assert c.get(CONFIGMAP, "a", "default")["metadata"]["name"] == "a"
    assert c.get(CONFIGMAP, "a", "other") is None
    assert sorted(o["metadata"]["name"] for o in c.list(CONFIGMAP, labels={"app": "web"})) == [
        "a", "c"]
    assert [o["metadata"]["name"] for o in c.list(CONFIGMAP, namespace="default",
                                                   labels={"app": "web"})] == ["a"]
    assert len(c.by_index(CONFIGMAP, "namespace", "default")) == 2
    assert c.object_count(CONFIGMAP) == 3
    # an informer created after start() starts at once
    ns_inf = c.informer(NAMESPACE)
    await ns_inf.wait_for_sync()
    assert c.get(NAMESPACE, "default") is not None
    assert c.object_count(NAMESPACE) == 1


async def test_stop_cancels_informers_cleanly(cache: Any) -> None:
    c, src, clock = cache
    c.informer(CONFIGMAP)
    await c.start()
    await c.wait_for_sync()
    await clock.settle()
    assert CONFIGMAP in src.watching
    await c.stop()
    assert src.watching == set()  # the watch stream was closed


async def test_wait_for_resource_version(cache: Any) -> None:
    c, src, clock = cache
    src.obj(CONFIGMAP, "a")
    c.informer(CONFIGMAP)
    await c.start()
    await c.wait_for_sync()
    await clock.settle()
    assert await c.wait_for_resource_version(CONFIGMAP, "default/a", "11", timeout=5)
    newer = src.obj(CONFIGMAP, "a")
    waiter = asyncio.create_task(
        c.wait_for_resource_version(CONFIGMAP, "default/a", newer["metadata"]["resourceVersion"],
                                    timeout=5))
    await clock.settle()
    assert not waiter.done()
    src.send(CONFIGMAP, "MODIFIED", newer)
    await clock.settle()
    assert waiter.done() and waiter.result() is True
    # never reached: False once the clock passes the timeout
    waiter = asyncio.create_task(
        c.wait_for_resource_version(CONFIGMAP, "default/a", "999", timeout=5))
    await clock.advance(4.9)
    assert not waiter.done()
    await clock.advance(0.2)
    assert waiter.done() and waiter.result() is False
    # rv=None waits for the key to disappear
    waiter = asyncio.create_task(
        c.wait_for_resource_version(CONFIGMAP, "default/a", None, timeout=5))
    await clock.settle()
    assert not waiter.done()
    src.send(CONFIGMAP, "DELETED", newer)
    await clock.settle()
    assert waiter.result() is True
    # a kind nobody watches: nothing to wait for, and that is not a timeout
    with pytest.raises(NotWatched):
        await c.wait_for_resource_version(NAMESPACE, "x", "1", timeout=5)


async def test_an_object_deleted_after_our_write_needs_no_timeout(cache: Any) -> None:
    """The cache never shows the written version of an object deleted since: the wait is
    settled by the informer's stream passing that version (no clock time passes)."""
    c, src, clock = cache
    src.obj(CONFIGMAP, "a")
    src.obj(CONFIGMAP, "b")
    c.informer(CONFIGMAP)
    await c.start()
    await c.wait_for_sync()
    await clock.settle()
    written = src.obj(CONFIGMAP, "a")  # our write: rv 13, not yet seen by the cache
    rv = written["metadata"]["resourceVersion"]
    waiter = asyncio.create_task(c.wait_for_resource_version(CONFIGMAP, "default/a", rv,
                                                             timeout=5))
    await clock.settle()
    assert not waiter.done()
    gone = src.obj(CONFIGMAP, "a")  # deleted right after, at rv 14: rv 13 is never cached
    src.send(CONFIGMAP, "DELETED", gone)
    await clock.settle()
    assert waiter.done() and waiter.result() is True and clock.monotonic() == 0
    # the delete was already seen when the wait starts: done at once
    assert await c.wait_for_resource_version(CONFIGMAP, "default/a", rv, timeout=5)
    # an absent key waits until the stream passes the version, whatever object moved it
    waiter = asyncio.create_task(c.wait_for_resource_version(CONFIGMAP, "default/a", "16",
                                                             timeout=5))
    await clock.settle()
    src.send(CONFIGMAP, "MODIFIED", src.obj(CONFIGMAP, "b"))  # rv 15
    await clock.settle()
    assert not waiter.done()
    src.streams[CONFIGMAP].put_nowait(
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "16"}}})
    await clock.settle()
    assert waiter.done() and waiter.result() is True and clock.monotonic() == 0


async def test_a_namespace_outside_the_cache_is_not_watched() -> None:
    src, clock = Source(), FakeClock()
    c = Cache(src, clock=clock, namespaces=["default"])  # type: ignore[arg-type]
    c.informer(CONFIGMAP)
    await c.start()
    try:
        await c.wait_for_sync()
        with pytest.raises(NotWatched):
            await c.wait_for_resource_version(CONFIGMAP, "elsewhere/a", "1", timeout=5)
        assert await c.wait_for_resource_version(CONFIGMAP, "default/a", "5", timeout=5)
    finally:
        await c.stop()


async def test_read_your_own_writes_against_the_server() -> None:
    async with ApiServer(port=0, simulators=False) as srv:
        async with Client(ClientConfig(host=srv.url)) as client:
            cache = Cache(client, clock=RealClock())
            cache.informer(CONFIGMAP)
            await cache.start()
            try:
                await asyncio.wait_for(cache.wait_for_sync(), 10)
                created = await client.create(CONFIGMAP, {"metadata": {
                    "name": "ryow", "namespace": "default"}, "data": {"v": "1"}})
                rv = created["metadata"]["resourceVersion"]
                assert await cache.wait_for_resource_version(CONFIGMAP, "default/ryow", rv,
                                                             timeout=10)
                cached = cache.get(CONFIGMAP, "ryow", "default")
                assert cached is not None and cached["metadata"]["resourceVersion"] == rv
                patched = await client.patch(CONFIGMAP, "ryow", {"data": {"v": "2"}})
                assert await cache.wait_for_resource_version(
                    CONFIGMAP, "default/ryow", patched["metadata"]["resourceVersion"], timeout=10)
                assert cache.get(CONFIGMAP, "ryow", "default")["data"] == {"v": "2"}
                await client.delete(CONFIGMAP, "ryow")
                assert await cache.wait_for_resource_version(CONFIGMAP, "default/ryow", None,
                                                             timeout=10)
                assert cache.get(CONFIGMAP, "ryow", "default") is None
            finally:
                await cache.stop()
