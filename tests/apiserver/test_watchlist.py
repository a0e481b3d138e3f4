"""Streaming lists (KEP-3157) and metadata-only watches on the embedded server, as kube serves them.

Each test names the kube behaviour it pins: the WatchList gate's default per minor
(pkg/features/kube_features.go), the options' validation (validateWatchOptions and, before
1.27, ValidateListOptions in apimachinery's meta internalversion validation), the defaulting
of a legacy watch into a streaming list with the gate on (SetListOptionsDefaults), the
initial-events-end bookmark only with bookmarks allowed (cacher:
setInitialEventsEndBookmarkIfRequested) and PartialObjectMetadata for every watch event under
`as=PartialObjectMetadata` (handlers: doTransformObject/asPartialObjectMetadata).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.apiserver.http.watchlist import watch_list_default

CM = "/api/v1/namespaces/default/configmaps"
STREAM = "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
META_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest_asyncio.fixture
async def on() -> AsyncIterator[ApiServer]:
    """A server with the WatchList gate on and two ConfigMaps."""
    async with ApiServer(simulators=False, feature_gates={"WatchList": True}) as srv:
        store = srv.store
        rt = store.type_for_kind("v1", "ConfigMap")
        assert rt is not None
        for name in ("a", "b"):
            await store.create(rt, {"metadata": {"name": name, "namespace": "default",
                                                 "labels": {"app": "x"}},
                                    "data": {"k": "v"}})
        yield srv


async def first_events(http: aiohttp.ClientSession, url: str, count: int,
                       headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The first `count` events of a watch (then the stream is dropped)."""
    events: list[dict[str, Any]] = []
    async with http.get(url, headers=headers or {}) as resp:
        assert resp.status == 200, await resp.text()
        async for line in resp.content:
            events.append(orjson.loads(line))
            if len(events) == count:
                break
    return events


async def status_of(http: aiohttp.ClientSession, url: str) -> tuple[int, dict[str, Any]]:
    async with http.get(url) as resp:
        return resp.status, await resp.json()


def test_gate_defaults_follow_kube_apiserver() -> None:
    # kube: WatchList in pkg/features/kube_features.go (alpha off 1.27-1.31, beta on 1.32,
    # off again 1.33, on from 1.34)
    assert [m for m in range(27, 38) if watch_list_default(m)] == [32, 34, 35, 36, 37]


async def test_default_1_33_refuses_send_initial_events(http: aiohttp.ClientSession) -> None:
    # kube: validateWatchOptions with the WatchList gate off (1.33's default)
    async with ApiServer(simulators=False) as srv:
        code, body = await status_of(http, srv.url + CM + STREAM + "&allowWatchBookmarks=true")
    assert code == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: '
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")


async def test_every_option_error_is_reported_at_once(on: ApiServer,
                                                      http: aiohttp.ClientSession) -> None:
    # kube: validateWatchOptions appends every error; field paths as kube names them
    code, body = await status_of(http, on.url + CM + "?watch=1&sendInitialEvents=true"
                                 "&resourceVersionMatch=Exact")
    assert code == 422
    fields = [(c["field"], c["reason"]) for c in body["details"]["causes"]]
    assert fields == [("resourceVersionMatch", "FieldValueForbidden"),
                      ("resourceVersionMatch", "FieldValueNotSupported")]
    assert body["details"]["causes"][1]["message"] == (
        'Unsupported value: "Exact": supported values: "NotOlderThan"')
    code, body = await status_of(http, on.url + CM + "?watch=1"
                                 "&resourceVersionMatch=NotOlderThan")
    assert code == 422
    assert body["details"]["causes"][0]["message"] == (
        "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
        "provided")


async def test_before_1_27_resource_version_match_is_refused_on_watch(
        http: aiohttp.ClientSession) -> None:
    # kube 1.26: ValidateListOptions refuses resourceVersionMatch on any watch
    async with ApiServer(simulators=False, version=("1", "26")) as srv:
        code, body = await status_of(http, srv.url + CM + STREAM + "&resourceVersion=1")
    assert code == 422
    assert body["details"]["causes"][0]["message"] == (
        "Forbidden: resourceVersionMatch is forbidden for watch")


async def test_1_27_has_the_gate_off(http: aiohttp.ClientSession) -> None:
    async with ApiServer(simulators=False, version=("1", "27")) as srv:
        code, body = await status_of(http, srv.url + CM + STREAM)
    assert code == 422
    assert body["details"]["causes"][0]["field"] == "sendInitialEvents"


async def test_stream_ends_with_the_bookmark_at_the_current_version(
        on: ApiServer, http: aiohttp.ClientSession) -> None:
    events = await first_events(http, on.url + CM + STREAM + "&allowWatchBookmarks=true", 3)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    end = events[2]["object"]
    assert end["metadata"] == {"resourceVersion": str(on.store.resource_version),
                               "annotations": {"k8s.io/initial-events-end": "true"}}


async def test_no_end_bookmark_without_bookmarks(on: ApiServer,
                                                 http: aiohttp.ClientSession) -> None:
    # kube: setInitialEventsEndBookmarkIfRequested needs AllowWatchBookmarks
    rt = on.store.type_for_kind("v1", "ConfigMap")
    assert rt is not None

    async def later() -> None:
        await on.store.create(rt, {"metadata": {"name": "c", "namespace": "default"}})

    url = on.url + CM + STREAM + "&timeoutSeconds=1"
    events: list[dict[str, Any]] = []
    async with http.get(url) as resp:
        assert resp.status == 200
        await later()
        async for line in resp.content:
            events.append(orjson.loads(line))
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "ADDED"]


async def test_not_older_than_a_future_version_is_too_large(
        on: ApiServer, http: aiohttp.ClientSession) -> None:
    future = on.store.resource_version + 100
    events = await first_events(http, on.url + CM + STREAM +
                                f"&allowWatchBookmarks=true&resourceVersion={future}", 1)
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 504
    # an older version is fine: the state now is not older than it
    events = await first_events(http, on.url + CM + STREAM +
                                "&allowWatchBookmarks=true&resourceVersion=1", 3)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]


async def test_gate_on_turns_a_legacy_watch_into_a_streaming_list(
        on: ApiServer, http: aiohttp.ClientSession) -> None:
    # kube: SetListOptionsDefaults (rv unset, watch, neither option given, gate on)
    events = await first_events(http, on.url + CM + "?watch=1&allowWatchBookmarks=true", 3)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    assert events[2]["object"]["metadata"]["annotations"] == {
        "k8s.io/initial-events-end": "true"}


async def test_send_initial_events_false_starts_live(on: ApiServer,
                                                     http: aiohttp.ClientSession) -> None:
    rt = on.store.type_for_kind("v1", "ConfigMap")
    assert rt is not None
    url = on.url + CM + "?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan"
    events: list[dict[str, Any]] = []
    async with http.get(url) as resp:
        assert resp.status == 200
        await on.store.create(rt, {"metadata": {"name": "late", "namespace": "default"}})
        async for line in resp.content:
            events.append(orjson.loads(line))
            break
    assert events[0]["type"] == "ADDED"
    assert events[0]["object"]["metadata"]["name"] == "late"


async def test_metadata_watch_sends_partial_object_metadata_bookmarks_included(
        on: ApiServer, http: aiohttp.ClientSession) -> None:
    events = await first_events(http, on.url + CM + STREAM + "&allowWatchBookmarks=true", 3,
                                headers={"Accept": META_ACCEPT})
    for event in events:
        assert event["object"]["kind"] == "PartialObjectMetadata"
        assert event["object"]["apiVersion"] == "meta.k8s.io/v1"
        assert set(event["object"]) == {"kind", "apiVersion", "metadata"}
    assert events[0]["object"]["metadata"]["labels"] == {"app": "x"}
    assert events[2]["object"]["metadata"]["annotations"] == {
        "k8s.io/initial-events-end": "true"}


@pytest.mark.parametrize("accept, code", [
    ("application/json;as=Table;v=v1;g=meta.k8s.io", 406),
    ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", 200),
])
async def test_no_table_for_a_streaming_list(on: ApiServer, http: aiohttp.ClientSession,
                                             accept: str, code: int) -> None:
    # kube: watchListEndpointRestrictions refuses Table; kubectl's Accept falls back to JSON
    url = on.url + CM + STREAM + "&allowWatchBookmarks=true&timeoutSeconds=1"
    async with http.get(url, headers={"Accept": accept}) as resp:
        assert resp.status == code
        if code == 200:
            first = orjson.loads(await resp.content.readline())
            assert first["object"]["kind"] == "ConfigMap"
