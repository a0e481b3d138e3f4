"""Fault injection: failures with counts, 429 Retry-After, delays on the server clock,
restart keeping or dropping state on the same port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.testing import FakeClock, eventually

CM = "/api/v1/namespaces/default/configmaps"


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_fail_count_and_verb_filter(apiserver_no_sim: ApiServer,
                                          http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    srv.faults.fail(verb="create", path="configmaps", status=500, count=2)
    codes = []
    for _ in range(3):
        async with http.post(srv.url + CM, json={"metadata": {"generateName": "c-"}}) as r:
            codes.append(r.status)
            body = await r.json()
    assert codes == [500, 500, 201]
    assert body["kind"] == "ConfigMap"
    async with http.get(srv.url + CM) as r:
        assert r.status == 200 and len((await r.json())["items"]) == 1


async def test_429_has_retry_after_header_and_status(apiserver_no_sim: ApiServer,
                                                     http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    srv.faults.fail(verb="list", status=429, retry_after=3)
    async with http.get(srv.url + CM) as r:
        assert r.status == 429 and r.headers["Retry-After"] == "3"
        body = await r.json()
    assert body["reason"] == "TooManyRequests" and body["details"]["retryAfterSeconds"] == 3
    async with http.get(srv.url + CM) as r:
        assert r.status == 200


async def test_path_regex_and_clear(apiserver_no_sim: ApiServer,
                                    http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    srv.faults.fail(path=r"secrets$", status=503, count=None)
    async with http.get(srv.url + "/api/v1/namespaces/default/secrets") as r:
        assert r.status == 503
    async with http.get(srv.url + CM) as r:
        assert r.status == 200
    srv.faults.clear()
    async with http.get(srv.url + "/api/v1/namespaces/default/secrets") as r:
        assert r.status == 200


async def test_delay_runs_on_the_server_clock(http: aiohttp.ClientSession) -> None:
    clock = FakeClock()
    async with ApiServer(simulators=False, clock=clock) as srv:
        srv.faults.delay(verb="get", path="/version", seconds=30)
        task = asyncio.create_task(http.get(srv.url + "/version"))
        await eventually(lambda: clock.pending > 0)
        assert not task.done()
        await clock.advance(30)
        resp = await task
        assert resp.status == 200
        resp.release()


async def test_restart_keeps_or_drops_state_on_same_port(http: aiohttp.ClientSession) -> None:
    async with ApiServer(simulators=False) as srv:
        port = srv.port
        async with http.post(srv.url + CM, json={"metadata": {"name": "keep"}}) as r:
            assert r.status == 201
        await srv.restart(keep_state=True)
        assert srv.port == port
        async with http.get(srv.url + CM + "/keep") as r:
            assert r.status == 200
        await srv.restart(keep_state=False)
        assert srv.port == port
        async with http.get(srv.url + CM + "/keep") as r:
            assert r.status == 404
        async with http.get(srv.url + "/api/v1/namespaces/default") as r:
            assert r.status == 200


async def test_a_request_racing_a_restart_is_answered_or_cut_never_left_hanging() -> None:
    """Whatever loop turn the restart lands on relative to a watch's connect (accepted and
    not yet attached is the hard one), the client learns of it: its watch ends or fails."""
    from asyncop.api.kinds import CONFIGMAP
    from asyncop.client import Client, ClientConfig

    async with ApiServer(port=0, simulators=False) as srv:
        async with Client(ClientConfig(host=srv.url), timeout=5, max_retries=0) as c:
            rv = (await c.list(CONFIGMAP))["metadata"]["resourceVersion"]

            async def watch() -> None:
                try:
                    async for _ in c.watch(CONFIGMAP, resource_version=rv, timeout_seconds=60):
                        pass
                except Exception:
                    pass  # refused or cut: either way the client knows

            for turns in range(12):
                task = asyncio.create_task(watch())
                for _ in range(turns):
                    await asyncio.sleep(0)
                await srv.restart(keep_state=True)
                await asyncio.wait_for(task, 5)
