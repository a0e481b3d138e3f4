"""The informer's streaming list (WatchList, KEP-3157) on a scripted source and a FakeClock.

Each test pins a step of client-go's reflector (tools/cache/reflector.go, `watchList` and
`ListAndWatchWithContext`): the request (sendInitialEvents=true,
resourceVersionMatch=NotOlderThan, bookmarks, the last synced resourceVersion or none), the
initial events collected aside until the `k8s.io/initial-events-end` bookmark replaces the
store at once, the same stream then carrying live events, "expired"/"too large" restarting
the stream without a resourceVersion, 429 backing off and retrying the stream, any other
refusal falling back to LIST for that sync only, and shard selectors filtered here (a
stream does not say whether the server honoured one).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from asyncop.api import Invalid, Kind, TooManyRequests, deep_copy, status_body
from asyncop.api.shards import ShardSpace
from asyncop.client import Backoff
from asyncop.runtime.informer import Informer
from asyncop.runtime.shards import ShardScope
from asyncop.testing import FakeClock
from tests.runtime.test_informer import END, KIND, Recorder, fed_stream, send_event

END_BOOKMARK = {"k8s.io/initial-events-end": "true"}


class StreamingSource:
    """Serves LIST pages and watch streams the test feeds; `refuse` makes streaming lists
    fail with that error (a server without the WatchList feature)."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.rv = 100
        self.lists = 0
        self.refuse: list[Exception] = []
        self.streams: list[asyncio.Queue[Any]] = []
        self.requests: list[dict[str, Any]] = []

    def put(self, name: str, ns: str = "default", uid: str | None = None,
            **data: str) -> dict[str, Any]:
        self.rv += 1
        obj = {"metadata": {"name": name, "namespace": ns, "uid": uid or f"uid-{name}",
                            "resourceVersion": str(self.rv),
                            "managedFields": [{"manager": "x"}]}, "data": data}
        self.objects[f"{ns}/{name}"] = obj
        return deep_copy(obj)  # type: ignore[arg-type,return-value]

    def remove(self, name: str, ns: str = "default") -> dict[str, Any]:
        self.rv += 1
        return self.objects.pop(f"{ns}/{name}")

    async def list(self, kind: Kind, **_: Any) -> dict[str, Any]:
        self.lists += 1
        items = [deep_copy(o) for _, o in sorted(self.objects.items())]  # type: ignore[arg-type]
        return {"items": items, "metadata": {"resourceVersion": str(self.rv)}}

    async def watch(self, kind: Kind, **kw: Any) -> AsyncIterator[Any]:
        self.requests.append(kw)
        if kw.get("send_initial_events") and self.refuse:
            raise self.refuse.pop(0)
        async for item in fed_stream(self.streams):
            yield item

    def send(self, typ: str, obj: dict[str, Any]) -> None:
        send_event(self.streams, typ, obj)

    def initial(self, *, annotations: dict[str, str] | None = None) -> None:
        """Stream every object as ADDED, then the bookmark (the end bookmark by default)."""
        for _, obj in sorted(self.objects.items()):
            self.send("ADDED", obj)
        self.bookmark(annotations=END_BOOKMARK if annotations is None else annotations)

    def bookmark(self, *, annotations: dict[str, str] | None = None) -> None:
        meta: dict[str, Any] = {"resourceVersion": str(self.rv)}
        if annotations:
            meta["annotations"] = annotations
        self.send("BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta})


@pytest.fixture
async def world() -> AsyncIterator[tuple[StreamingSource, FakeClock, list[asyncio.Task[None]]]]:
    tasks: list[asyncio.Task[None]] = []
    yield StreamingSource(), FakeClock(), tasks
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def synced(world: Any, *names: str) -> tuple[Informer, Recorder]:
    """An informer synced by one stream of `names` (the end bookmark seen)."""
    src, clock, _ = world
    for name in names:
        src.put(name)
    inf, rec = started(world)
    await clock.settle()
    src.initial()
    await clock.settle()
    return inf, rec


def started(world: Any, **kw: Any) -> tuple[Informer, Recorder]:
    src, clock, tasks = world
    kw.setdefault("backoff", Backoff(base=1.0, cap=8.0, jitter=0.0))
    inf = Informer(src, KIND, clock=clock, **kw)
    rec = Recorder()
    inf.add_handler(rec)
    tasks.append(asyncio.create_task(inf.run()))
    return inf, rec


async def test_sync_is_one_stream_replaced_at_the_end_bookmark(world: Any) -> None:
    src, clock, _ = world
    src.put("a")
    src.put("b")
    inf, rec = started(world)
    await clock.settle()
    request = src.requests[0]
    # client-go: SendInitialEvents, NotOlderThan, bookmarks, no resourceVersion at first
    assert request["send_initial_events"] is True
    assert request["allow_bookmarks"] is True
    assert request["resource_version"] is None
    src.send("ADDED", src.objects["default/a"])
    src.send("ADDED", src.objects["default/b"])
    await clock.settle()
    assert not inf.has_synced and inf.store.keys() == [] and rec.events == []  # not yet
    src.bookmark(annotations=END_BOOKMARK)
    await clock.settle()
    assert inf.has_synced
    assert rec.events == [("add", "a", "101"), ("add", "b", "102")]
    assert inf.last_resource_version == "102"
    cached = inf.store.get("default/a")
    assert cached is not None and "managedFields" not in cached["metadata"]
    assert cached["kind"] == "ConfigMap" and cached["apiVersion"] == "v1"
    # the same stream carries the live events: no LIST, no second request
    src.send("MODIFIED", src.put("a", k="v"))
    await clock.settle()
    assert rec.events[-1] == ("update", "a", "103")
    assert src.lists == 0 and len(src.requests) == 1


async def test_resumes_a_plain_watch_after_a_synced_stream_ends(world: Any) -> None:
    src, clock, _ = world
    await synced(world, "a")
    src.streams[-1].put_nowait(END)
    await clock.settle()
    assert src.requests[-1]["send_initial_events"] is False
    assert src.requests[-1]["resource_version"] == "101"


async def test_relist_after_410_is_a_stream_from_the_last_version_with_a_diff(
        world: Any) -> None:
    src, clock, _ = world
    inf, rec = await synced(world, "stays", "changes", "vanishes")
    rec.events.clear()
    src.put("changes", k="new")
    src.remove("vanishes")
    src.put("appears")
    src.send("ERROR", status_body(410, "too old resource version", reason="Expired"))
    await clock.settle()
    # client-go keeps lastSyncResourceVersion on an expired watch: NotOlderThan it
    assert src.requests[-1]["send_initial_events"] is True
    assert src.requests[-1]["resource_version"] == "103"
    src.initial()
    await clock.settle()
    assert sorted(rec.events) == [("add", "appears", "106"), ("delete", "vanishes", "103"),
                                  ("update", "changes", "104")]
    assert sorted(inf.store.keys()) == ["default/appears", "default/changes", "default/stays"]


async def test_expired_stream_starts_again_without_a_version(world: Any) -> None:
    src, clock, _ = world
    inf, _ = await synced(world, "a")
    src.send("ERROR", status_body(410, "too old", reason="Expired"))
    await clock.settle()
    assert src.requests[-1]["resource_version"] == "101"
    # the stream itself is refused as expired: client-go's setIsLastSyncResourceVersionUnavailable
    src.send("ERROR", status_body(410, "too old", reason="Expired"))
    await clock.settle()
    await clock.advance(2.0)  # a second 410 in a row backs off (Backoff(base=1.0): 2 s)
    assert src.requests[-1]["send_initial_events"] is True
    assert src.requests[-1]["resource_version"] is None
    src.initial()
    await clock.settle()
    assert inf.store.keys() == ["default/a"] and src.lists == 0


async def test_a_refused_stream_falls_back_to_list_for_that_sync_only(world: Any) -> None:
    src, clock, _ = world
    src.put("a")
    src.refuse = [Invalid(status_body(422, "sendInitialEvents is forbidden for watch unless "
                                      "the WatchList feature gate is enabled"))]
    inf, rec = started(world)
    await clock.settle()
    assert inf.has_synced and src.lists == 1
    assert rec.events == [("add", "a", "101")]
    assert src.requests[-1]["send_initial_events"] is False  # WATCH from the list's version
    assert src.requests[-1]["resource_version"] == "101"
    src.send("ERROR", status_body(410, "too old", reason="Expired"))
    await clock.settle()
    # the next full sync tries the stream again (client-go falls back per ListAndWatch)
    assert src.requests[-1]["send_initial_events"] is True
    src.initial()
    await clock.settle()
    assert src.lists == 1


async def test_too_many_requests_backs_off_and_retries_the_stream(world: Any) -> None:
    src, clock, _ = world
    src.put("a")
    src.refuse = [TooManyRequests(status_body(429, "slow down"), retry_after=3.0)]
    inf, _ = started(world)
    await clock.settle()
    assert len(src.requests) == 1 and src.lists == 0
    await clock.advance(3.0)
    assert src.requests[-1]["send_initial_events"] is True  # not a LIST
    src.initial()
    await clock.settle()
    assert inf.has_synced and src.lists == 0


@pytest.mark.parametrize("how", ["ends", "plain bookmark"])
async def test_a_server_that_ignores_the_request_gets_a_list(world: Any, how: str) -> None:
    src, clock, _ = world
    src.put("a")
    inf, _ = started(world)
    await clock.settle()
    src.send("ADDED", src.objects["default/a"])
    if how == "ends":
        await clock.advance(2.0)
        src.streams[-1].put_nowait(END)
    else:  # kube sends no other bookmark before the end bookmark
        src.bookmark(annotations={})
    await clock.settle()
    assert inf.has_synced and src.lists == 1
    assert inf.store.keys() == ["default/a"]


async def test_stream_deletions_before_the_end_bookmark_are_applied(world: Any) -> None:
    src, clock, _ = world
    src.put("a")
    src.put("b")
    inf, rec = started(world)
    await clock.settle()
    src.send("ADDED", src.objects["default/a"])
    src.send("ADDED", src.objects["default/b"])
    src.send("DELETED", src.remove("a"))
    src.bookmark(annotations=END_BOOKMARK)
    await clock.settle()
    assert inf.store.keys() == ["default/b"] and rec.events == [("add", "b", "102")]


async def test_shard_scoped_stream_filters_what_the_server_did_not(world: Any) -> None:
    src, clock, _ = world
    space = ShardSpace(2)
    uids = [str(uuid.UUID(int=i * 7_919_000_000_007)) for i in range(1, 200)]
    ours = next(u for u in uids if space.shard_of_uid(u) == 0)
    theirs = next(u for u in uids if space.shard_of_uid(u) == 1)
    src.put("ours", uid=ours)
    src.put("theirs", uid=theirs)
    scope = ShardScope(space, clock=clock)
    scope.activate([0])
    inf, _ = started(world, shard_scope=scope)
    await clock.settle()
    assert src.requests[0]["shard_selector"] == space.selector({0}).format()  # type: ignore[union-attr]
    src.initial()  # a server that ignored the selector streams both
    await clock.settle()
    assert inf.store.keys() == ["default/ours"]
    src.send("MODIFIED", src.put("theirs", uid=theirs, k="v"))
    await clock.settle()
    assert inf.store.keys() == ["default/ours"]
    scope.activate([1])  # a shard gained: a new stream lists both shards
    await clock.settle()
    assert src.requests[-1]["send_initial_events"] is True
    assert src.requests[-1]["shard_selector"] == space.selector({0, 1}).format()  # type: ignore[union-attr]
    src.initial()
    await clock.settle()
    assert sorted(inf.store.keys()) == ["default/ours", "default/theirs"]


async def test_watch_list_off_lists(world: Any) -> None:
    src, clock, _ = world
    src.put("a")
    inf, _ = started(world, watch_list=False)
    await clock.settle()
    assert inf.has_synced and src.lists == 1
    assert all(not r["send_initial_events"] for r in src.requests)
