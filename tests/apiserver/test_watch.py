"""Watch over real HTTP: initial state, resume, selector transitions, 410, bookmarks,
timeoutSeconds, streaming lists, and kubernetes_asyncio's Watch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio
from kubernetes_asyncio import client as kclient
from kubernetes_asyncio import watch as kwatch

from asyncop.apiserver import ApiServer
from asyncop.testing import FakeClock, eventually

CM = "/api/v1/namespaces/default/configmaps"


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _create(http: aiohttp.ClientSession, srv: ApiServer, name: str,
                  **labels: str) -> dict[str, Any]:
    async with http.post(srv.url + CM, json={"metadata": {"name": name, "labels": labels}}) as r:
        assert r.status == 201, await r.text()
        body: dict[str, Any] = await r.json()
        return body


class Stream:
    """Reads a watch response line by line in the background."""

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.events: list[dict[str, Any]] = []
        self.ended = False
        self._task = asyncio.create_task(self._read(http, url))

    async def _read(self, http: aiohttp.ClientSession, url: str) -> None:
        async with http.get(url) as resp:
            assert resp.status == 200
            async for line in resp.content:
                self.events.append(orjson.loads(line))
        self.ended = True

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def test_initial_state_then_live_events(apiserver_no_sim: ApiServer,
                                              http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    await _create(http, srv, "a")
    stream = Stream(http, srv.url + CM + "?watch=true")
    await eventually(lambda: stream.types() == ["ADDED"])
    b = await _create(http, srv, "b")
    async with http.delete(srv.url + CM + "/a") as r:
        assert r.status == 200
    await eventually(lambda: stream.types() == ["ADDED", "ADDED", "DELETED"])
    assert stream.events[1]["object"]["metadata"]["uid"] == b["metadata"]["uid"]
    assert stream.events[2]["object"]["metadata"]["name"] == "a"
    assert int(stream.events[2]["object"]["metadata"]["resourceVersion"]) > \
        int(b["metadata"]["resourceVersion"])
    await stream.close()


async def test_resume_replays_changes_after_rv(apiserver_no_sim: ApiServer,
                                               http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    a = await _create(http, srv, "a")
    await _create(http, srv, "b")
    await _create(http, srv, "c")
    rv = a["metadata"]["resourceVersion"]
    stream = Stream(http, srv.url + CM + f"?watch=1&resourceVersion={rv}")
    await eventually(lambda: len(stream.events) == 2)
    assert [e["object"]["metadata"]["name"] for e in stream.events] == ["b", "c"]
    assert stream.types() == ["ADDED", "ADDED"]
    await stream.close()


async def test_label_selector_transitions(apiserver_no_sim: ApiServer,
                                          http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    await _create(http, srv, "a", app="x")
    stream = Stream(http, srv.url + CM + "?watch=1&labelSelector=app%3Dx")
    await eventually(lambda: stream.types() == ["ADDED"])
    patch = {"metadata": {"labels": {"app": "y"}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    async with http.patch(srv.url + CM + "/a", data=orjson.dumps(patch), headers=headers) as r:
        assert r.status == 200
    patch = {"metadata": {"labels": {"app": "x"}}}
    async with http.patch(srv.url + CM + "/a", data=orjson.dumps(patch), headers=headers) as r:
        assert r.status == 200
    await eventually(lambda: stream.types() == ["ADDED", "DELETED", "ADDED"])
    await stream.close()


async def test_compacted_history_gives_410_error_event(apiserver_no_sim: ApiServer,
                                                        http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    a = await _create(http, srv, "a")
    await _create(http, srv, "b")
    srv.faults.expire_history()
    rv = a["metadata"]["resourceVersion"]
    async with http.get(srv.url + CM + f"?watch=1&resourceVersion={rv}") as resp:
        assert resp.status == 200
        lines = [orjson.loads(line) async for line in resp.content]
    assert len(lines) == 1 and lines[0]["type"] == "ERROR"
    status = lines[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith(f"too old resource version: {rv}")


async def test_small_history_ring_expires_old_versions(http: aiohttp.ClientSession) -> None:
    async with ApiServer(simulators=False, history=3) as srv:
        a = await _create(http, srv, "a")
        for name in "bcde":
            await _create(http, srv, name)
        rv = a["metadata"]["resourceVersion"]
        async with http.get(srv.url + CM + f"?watch=1&resourceVersion={rv}") as resp:
            lines = [orjson.loads(line) async for line in resp.content]
        assert [line["type"] for line in lines] == ["ERROR"]


async def test_bookmarks_and_timeout_on_fake_clock(http: aiohttp.ClientSession) -> None:
    clock = FakeClock()
    async with ApiServer(simulators=False, clock=clock, bookmark_interval=5) as srv:
        await _create(http, srv, "a")
        stream = Stream(http, srv.url + CM + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=12")
        await eventually(lambda: stream.types() == ["ADDED"])
        await clock.advance(5)
        await eventually(lambda: stream.types() == ["ADDED", "BOOKMARK"])
        bookmark = stream.events[1]["object"]
        assert bookmark["kind"] == "ConfigMap" and bookmark["apiVersion"] == "v1"
        assert set(bookmark["metadata"]) == {"resourceVersion"}
        assert bookmark["metadata"]["resourceVersion"] == str(srv.store.resource_version)
        await clock.advance(7)
        await eventually(lambda: stream.ended)
        assert stream.types() == ["ADDED", "BOOKMARK", "BOOKMARK", "BOOKMARK"]


async def test_send_initial_events_ends_with_annotated_bookmark(
        http: aiohttp.ClientSession) -> None:
    # kube 1.33 ships the WatchList gate off (tests/apiserver/test_watchlist.py): on here
    async with ApiServer(simulators=False, feature_gates={"WatchList": True}) as srv:
        await _create(http, srv, "a")
        await _create(http, srv, "b")
        url = (srv.url + CM + "?watch=1&sendInitialEvents=true"
               "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
        stream = Stream(http, url)
        await eventually(lambda: len(stream.events) == 3)
        assert stream.types() == ["ADDED", "ADDED", "BOOKMARK"]
        meta = stream.events[2]["object"]["metadata"]
        assert meta["annotations"] == {"k8s.io/initial-events-end": "true"}
        await _create(http, srv, "c")
        await eventually(lambda: len(stream.events) == 4)
        await stream.close()
        async with http.get(srv.url + CM + "?watch=1&sendInitialEvents=true") as resp:
            assert resp.status == 422


async def test_cut_watches_ends_streams(apiserver_no_sim: ApiServer,
                                        http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    stream = Stream(http, srv.url + CM + "?watch=1")
    await eventually(lambda: srv.store.hub.watcher_count == 1)
    assert srv.faults.cut_watches() == 1
    await eventually(lambda: stream.ended)


async def test_kubernetes_asyncio_watch_with_resume(api: kclient.ApiClient,
                                                    apiserver_no_sim: ApiServer) -> None:
    v1 = kclient.CoreV1Api(api)
    first = await v1.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    await v1.create_namespaced_config_map("default", {"metadata": {"name": "b"}})
    seen = []
    w = kwatch.Watch()
    async with w.stream(v1.list_namespaced_config_map, "default",
                        resource_version=first.metadata.resource_version,
                        timeout_seconds=1) as stream:
        async for event in stream:
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 1:
                await v1.delete_namespaced_config_map("a", "default")
            if len(seen) == 2:
                w.stop()
    assert seen == [("ADDED", "b"), ("DELETED", "a")]


@pytest.mark.parametrize("rv", ["999999"])
async def test_future_resource_version_is_504_error_event(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, rv: str) -> None:
    async with http.get(apiserver_no_sim.url + CM + f"?watch=1&resourceVersion={rv}") as resp:
        lines = [orjson.loads(line) async for line in resp.content]
    assert lines[0]["type"] == "ERROR" and lines[0]["object"]["code"] == 504


async def test_slow_watcher_is_closed(http: aiohttp.ClientSession) -> None:
    async with ApiServer(simulators=False, watch_queue_size=3) as srv:
        stream = Stream(http, srv.url + CM + "?watch=1")
        await eventually(lambda: srv.store.hub.watcher_count == 1)
        rt = srv.store.resolve("", "v1", "configmaps")
        for i in range(6):  # synchronous writes: the handler cannot drain in between
            srv.store.writer.create(rt, {"metadata": {"name": f"c{i}"}}, namespace="default")
        await eventually(lambda: stream.ended)
        assert stream.types() == ["ADDED"] * 3
        assert srv.store.hub.watcher_count == 0


async def test_crd_deletion_closes_its_watches(apiserver_no_sim: ApiServer,
                                               http: aiohttp.ClientSession) -> None:
    from tests.apiserver.crdkit import CRDS, WIDGET_CRD, WIDGETS

    srv = apiserver_no_sim
    async with http.post(srv.url + CRDS, json=WIDGET_CRD) as r:
        assert r.status == 201
    stream = Stream(http, srv.url + WIDGETS + "?watch=1")
    await eventually(lambda: srv.store.hub.watcher_count == 1)
    async with http.delete(srv.url + CRDS + "/widgets.example.com") as r:
        assert r.status == 200
    await eventually(lambda: stream.ended)


async def test_table_watch_events(apiserver_no_sim: ApiServer,
                                  http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    await _create(http, srv, "a")
    await _create(http, srv, "b")
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    events: list[dict[str, Any]] = []
    async with http.get(srv.url + CM + "?watch=1&timeoutSeconds=1",
                        headers={"Accept": accept}) as resp:
        async for line in resp.content:
            events.append(orjson.loads(line))
            if len(events) == 2:
                break
    tables = [e["object"] for e in events]
    assert [t["kind"] for t in tables] == ["Table", "Table"]
    assert tables[0]["columnDefinitions"] and not tables[1]["columnDefinitions"]
    assert [t["rows"][0]["cells"][0] for t in tables] == ["a", "b"]


async def test_python_clients_report_410_after_compaction(apiserver_no_sim: ApiServer) -> None:
    from kubernetes import client as sync_client
    from kubernetes import watch as sync_watch
    from kubernetes.client.exceptions import ApiException as SyncApiException

    srv = apiserver_no_sim
    rt = srv.store.resolve("", "v1", "configmaps")
    srv.store.writer.create(rt, {"metadata": {"name": "a"}}, namespace="default")
    old_rv = str(srv.store.resource_version)
    srv.store.writer.create(rt, {"metadata": {"name": "b"}}, namespace="default")
    srv.faults.expire_history()

    def sync_watch_410() -> int:
        cfg = sync_client.Configuration()
        cfg.host = srv.url
        with sync_client.ApiClient(cfg) as api_client:
            v1 = sync_client.CoreV1Api(api_client)
            try:
                for _ in sync_watch.Watch().stream(v1.list_namespaced_config_map, "default",
                                                   resource_version=old_rv,
                                                   timeout_seconds=5):
                    pass
            except SyncApiException as exc:
                return int(exc.status)
        return 0

    assert await asyncio.to_thread(sync_watch_410) == 410

    cfg = kclient.Configuration(host=srv.url)
    async with kclient.ApiClient(cfg) as api_client:
        v1 = kclient.CoreV1Api(api_client)
        with pytest.raises(kclient.exceptions.ApiException) as info:
            async with kwatch.Watch().stream(v1.list_namespaced_config_map, "default",
                                             resource_version=old_rv,
                                             timeout_seconds=5) as stream:
                async for _ in stream:
                    pass
        assert info.value.status == 410


async def test_kubernetes_asyncio_watch_survives_cut(api: kclient.ApiClient,
                                                     apiserver_no_sim: ApiServer) -> None:
    srv = apiserver_no_sim
    v1 = kclient.CoreV1Api(api)
    await v1.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    seen: list[str] = []

    async def consume() -> None:
        async with kwatch.Watch().stream(v1.list_namespaced_config_map, "default") as stream:
            async for event in stream:
                seen.append(f"{event['type']} {event['object'].metadata.name}")

    task = asyncio.create_task(consume())
    await eventually(lambda: seen == ["ADDED a"])
    assert srv.faults.cut_watches() == 1
    await v1.create_namespaced_config_map("default", {"metadata": {"name": "b"}})
    await eventually(lambda: seen == ["ADDED a", "ADDED b"])
    assert srv.store.hub.watcher_count == 1  # it reconnected from its last resourceVersion
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_watch_ends_when_the_client_goes_away(apiserver_no_sim: ApiServer) -> None:
    srv = apiserver_no_sim
    for _ in range(3):
        async with aiohttp.ClientSession() as session:
            resp = await session.get(srv.url + CM + "?watch=1")
            assert resp.status == 200
        # the session is closed with the stream open and idle
    await eventually(lambda: srv.store.hub.watcher_count == 0)


async def test_a_negative_timeout_ends_the_watch_at_once(apiserver_no_sim: ApiServer,
                                                          http: aiohttp.ClientSession) -> None:
    """Regression: `timeoutSeconds=-1` kept the watch open for ever. kube arms the watch's
    timer with the negative duration (handlers/get.go), so the stream ends straight away."""
    srv = apiserver_no_sim
    rv = srv.store.resource_version
    async with http.get(srv.url + CM + f"?watch=1&resourceVersion={rv}&timeoutSeconds=-1"
                        ) as resp:
        assert resp.status == 200
        body = await asyncio.wait_for(resp.read(), 10)
    assert body == b""
