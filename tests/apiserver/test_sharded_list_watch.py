"""KEP-5866 sharded list and watch: ranges partition objects, the selector is echoed, bad
selectors are rejected, and with the gate off the server ignores the option (as older
kube-apiservers do)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from asyncop.api.shards import ShardSelector, ShardSpace, fnv1a64
from asyncop.apiserver import ApiServer
from tests.apiserver.httpkit import call, http  # noqa: F401 (fixture)

CM = "/api/v1/namespaces/default/configmaps"
SPACE = ShardSpace(4)


@pytest.fixture
async def filled(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession  # noqa: F811
                 ) -> AsyncIterator[str]:
    url = apiserver_no_sim.url
    for i in range(40):
        status, _ = await call(http, "POST", url + CM, json={"metadata": {"name": f"c{i}"}})
        assert status == 201
    yield url


def selector(*shards: int) -> str:
    sel = SPACE.selector(shards)
    assert sel is not None
    return sel.format()


async def test_ranges_partition_a_list_and_the_selector_is_echoed(
    filled: str, http: aiohttp.ClientSession  # noqa: F811
) -> None:
    seen: dict[str, int] = {}
    for shard in range(4):
        sel = selector(shard)
        status, body = await call(http, "GET", filled + CM, params={"shardSelector": sel})
        assert status == 200 and body["metadata"]["shardInfo"] == {"selector": sel}
        for item in body["items"]:
            assert SPACE.shard_of_uid(item["metadata"]["uid"]) == shard
            seen[item["metadata"]["name"]] = shard
    assert len(seen) == 40  # every object in exactly one shard
    both = selector(0, 2)  # two ranges, OR-ed
    _, body = await call(http, "GET", filled + CM, params={"shardSelector": both})
    assert {i["metadata"]["name"] for i in body["items"]} == {
        n for n, s in seen.items() if s in (0, 2)}


async def test_pages_keep_the_selection(filled: str,
                                        http: aiohttp.ClientSession) -> None:  # noqa: F811
    sel = selector(1, 2)
    names: list[str] = []
    params = {"shardSelector": sel, "limit": "3"}
    while True:
        _, body = await call(http, "GET", filled + CM, params=params)
        names += [i["metadata"]["name"] for i in body["items"]]
        token = body["metadata"].get("continue")
        if not token:
            break
        params = {"shardSelector": sel, "limit": "3", "continue": token}
    _, full = await call(http, "GET", filled + CM, params={"shardSelector": sel})
    assert names == [i["metadata"]["name"] for i in full["items"]]


async def test_a_namespace_selector_hashes_the_namespace(
    filled: str, http: aiohttp.ClientSession  # noqa: F811
) -> None:
    h = fnv1a64(b"default")
    inside = ShardSelector("object.metadata.namespace", ((h, h + 1),)).format()
    outside = ShardSelector("object.metadata.namespace", ((0, h),)).format()
    _, body = await call(http, "GET", filled + "/api/v1/configmaps",
                         params={"shardSelector": inside})
    assert len(body["items"]) == 40
    _, body = await call(http, "GET", filled + "/api/v1/configmaps",
                         params={"shardSelector": outside})
    assert body["items"] == []


async def test_a_watch_sends_only_its_shard(filled: str,
                                            http: aiohttp.ClientSession) -> None:  # noqa: F811
    sel = selector(3)
    _, listed = await call(http, "GET", filled + CM, params={"shardSelector": sel})
    rv = listed["metadata"]["resourceVersion"]
    events: list[dict[str, Any]] = []
    async with http.get(filled + CM, params={"watch": "1", "resourceVersion": rv,
                                              "shardSelector": sel,
                                              "timeoutSeconds": "30"}) as resp:
        for i in range(40, 80):
            await call(http, "POST", filled + CM, json={"metadata": {"name": f"c{i}"}})
        _, now = await call(http, "GET", filled + CM, params={"shardSelector": sel})
        expected = {i["metadata"]["name"] for i in now["items"]} - {
            i["metadata"]["name"] for i in listed["items"]}
        assert expected, "no new object landed in shard 3"

        async def read() -> None:
            while len(events) < len(expected):
                events.append(orjson.loads(await resp.content.readline()))

        await asyncio.wait_for(read(), 20)
    assert {e["object"]["metadata"]["name"] for e in events} == expected
    assert all(SPACE.shard_of_uid(e["object"]["metadata"]["uid"]) == 3 for e in events)


@pytest.mark.parametrize(("value", "detail"), [
    ("shardRange(object.metadata.name, '0x0', '0x10')", "field 'object.metadata.name' is not "
     "supported"),
    ("shardRange(object.metadata.uid, '0x10', '0x10')", "is empty or beyond 2^64"),
    ("shardRange(object.metadata.uid, '0x0', '0x20000000000000000')", "is empty or beyond 2^64"),
    ("uid in (a, b)", "is not shardRange(<field>, '<hex start>', '<hex end>')"),
])
async def test_bad_selectors_are_422(filled: str, http: aiohttp.ClientSession,  # noqa: F811
                                     value: str, detail: str) -> None:
    status, body = await call(http, "GET", filled + CM, params={"shardSelector": value})
    assert status == 422 and body["reason"] == "Invalid"
    (cause,) = body["details"]["causes"]
    assert cause["field"] == "shardSelector" and detail in cause["message"]


async def test_with_the_gate_off_the_option_is_ignored(
    http: aiohttp.ClientSession,  # noqa: F811
) -> None:
    async with ApiServer(simulators=False,
                         feature_gates={"ShardedListAndWatch": False}) as server:
        for i in range(5):
            await call(http, "POST", server.url + CM, json={"metadata": {"name": f"c{i}"}})
        status, body = await call(http, "GET", server.url + CM,
                                  params={"shardSelector": selector(0)})
        assert status == 200 and len(body["items"]) == 5
        assert "shardInfo" not in body["metadata"]
