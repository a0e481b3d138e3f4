"""Client against the embedded API server over real HTTP: CRUD, patch types, typed errors,
retries (429 Retry-After, 5xx), timeouts, watch streams, write listeners, separate pools."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from asyncop.api import (
    AlreadyExists,
    Conflict,
    Gone,
    Invalid,
    Kind,
    NotFound,
    RawObject,
    ServerError,
    TooManyRequests,
    Unauthorized,
    status_body,
)
from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import Backoff, Client, ClientConfig, RequestTimeout, load_config
from asyncop.testing import FakeClock, eventually

FAST = Backoff(base=0.01, cap=0.05)


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(port=0, simulators=False) as srv:
        yield srv


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[Client]:
    async with Client(ClientConfig(host=server.url), backoff=FAST, timeout=10) as c:
        yield c


def cm(name: str, ns: str = "default", **data: str) -> RawObject:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns}, "data": dict(data)}


async def test_kubeconfig_written_by_the_server_loads(server: ApiServer, tmp_path: Path) -> None:
    path = server.write_kubeconfig(tmp_path / "kubeconfig")
    cfg = await load_config(kubeconfig=str(path))
    assert cfg.host == server.url.rstrip("/")
    async with Client(cfg) as c:
        created = await c.create(CONFIGMAP, cm("via-kubeconfig"))
        assert created["metadata"]["uid"]


async def test_crud_and_every_patch_type(client: Client) -> None:
    created = await client.create(CONFIGMAP, cm("c1", a="1"))
    assert created["metadata"]["resourceVersion"] and created["data"] == {"a": "1"}
    got = await client.get(CONFIGMAP, "c1", namespace="default")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]

    got["data"]["b"] = "2"
    updated = await client.update(CONFIGMAP, got)
    assert updated["data"] == {"a": "1", "b": "2"}
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])

    merged = await client.patch(CONFIGMAP, "c1", {"data": {"a": None, "c": "3"}})
    assert merged["data"] == {"b": "2", "c": "3"}
    jsonp = await client.patch(CONFIGMAP, "c1", [{"op": "add", "path": "/data/d", "value": "4"}],
                               patch_type="json")
    assert jsonp["data"]["d"] == "4"
    strategic = await client.patch(CONFIGMAP, "c1", {"metadata": {"labels": {"x": "y"}}},
                                   patch_type="strategic")
    assert strategic["metadata"]["labels"] == {"x": "y"}

    applied = await client.apply(CONFIGMAP, cm("c2", k="v"), field_manager="asyncop-test")
    assert applied["data"] == {"k": "v"}
    reapplied = await client.apply(CONFIGMAP, cm("c2", k="w"), field_manager="asyncop-test")
    assert reapplied["data"] == {"k": "w"}

    listed = await client.list(CONFIGMAP, namespace="default", label_selector="x=y")
    assert [o["metadata"]["name"] for o in listed["items"]] == ["c1"]
    assert listed["metadata"]["resourceVersion"]

    assert await client.delete(CONFIGMAP, "c1", namespace="default") is None
    with pytest.raises(NotFound):
        await client.get(CONFIGMAP, "c1", namespace="default")


async def test_typed_errors_from_status_bodies(client: Client) -> None:
    with pytest.raises(NotFound) as nf:
        await client.get(CONFIGMAP, "absent", namespace="default")
    assert nf.value.code == 404 and nf.value.reason == "NotFound"
    assert nf.value.status["kind"] == "Status"

    first = await client.create(CONFIGMAP, cm("dup"))
    with pytest.raises(AlreadyExists) as ae:
        await client.create(CONFIGMAP, cm("dup"))
    assert ae.value.code == 409 and isinstance(ae.value, Conflict)

    await client.patch(CONFIGMAP, "dup", {"data": {"x": "1"}})
    with pytest.raises(Conflict) as cf:
        await client.update(CONFIGMAP, first)  # stale resourceVersion
    assert not isinstance(cf.value, AlreadyExists) and cf.value.reason == "Conflict"

    with pytest.raises(Invalid) as inv:
        await client.create(CONFIGMAP, cm("Not_A_Valid_Name"))
    assert inv.value.code == 422
    assert any(c.get("field") == "metadata.name" for c in inv.value.causes)


async def test_429_with_retry_after_is_retried_on_the_clock(server: ApiServer) -> None:
    clock = FakeClock()
    async with Client(ClientConfig(host=server.url), clock=clock, backoff=FAST) as c:
        server.faults.fail(verb="create", path="configmaps", status=429, count=2, retry_after=3)
        task = asyncio.create_task(c.create(CONFIGMAP, cm("after-429")))  # POST: retried on 429
        for _ in range(2):
            await eventually(lambda: clock.next_deadline() is not None, timeout=5)
            assert clock.next_deadline() == pytest.approx(clock.monotonic() + 3.0)
            assert not task.done()
            await clock.advance(3.0)
        created = await asyncio.wait_for(task, 5)
        assert created["metadata"]["name"] == "after-429"
        assert (await c.get(CONFIGMAP, "after-429"))["metadata"]["uid"]


async def test_retries_give_up_with_the_typed_error(server: ApiServer) -> None:
    async with Client(ClientConfig(host=server.url), max_retries=2, backoff=FAST) as c:
        server.faults.fail(verb="get", status=429, count=3, retry_after=0)
        with pytest.raises(TooManyRequests) as err:
            await c.get(CONFIGMAP, "whatever")
        assert err.value.retry_after == 0


async def test_5xx_retried_for_idempotent_verbs_only(client: Client, server: ApiServer) -> None:
    await client.create(CONFIGMAP, cm("r"))
    server.faults.fail(verb="get", path="configmaps/r", status=503, count=2)
    got = await client.get(CONFIGMAP, "r")  # two 503s, then success
    assert got["metadata"]["name"] == "r"
    server.faults.fail(verb="create", path="configmaps", status=500, count=1)
    with pytest.raises(ServerError):
        await client.create(CONFIGMAP, cm("not-retried"))
    with pytest.raises(NotFound):
        await client.get(CONFIGMAP, "not-retried")
    # a 5xx on POST is not retried, but the next POST goes through
    await client.create(CONFIGMAP, cm("not-retried"))
    # unless the server says when to come back: then it was not processed, retry any verb
    server.faults.fail(verb="create", path="configmaps", status=503, count=1, retry_after=0)
    assert (await client.create(CONFIGMAP, cm("overload")))["metadata"]["uid"]


async def test_timeout_applies_to_every_call(server: ApiServer) -> None:
    server.faults.delay(verb="get", path="configmaps/slow", seconds=1.5, count=1)
    async with Client(ClientConfig(host=server.url), timeout=0.3, max_retries=0) as c:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(RequestTimeout):
            await c.get(CONFIGMAP, "slow")
        assert loop.time() - t0 < 1.2
    server.faults.delay(verb="get", path="configmaps/slow", seconds=1.5, count=1)
    async with Client(ClientConfig(host=server.url), timeout=0.3, max_retries=1,
                      backoff=FAST) as c:
        with pytest.raises(NotFound):  # the retry got a real answer
            await c.get(CONFIGMAP, "slow")


async def test_watch_stream_events_and_expired_rv(client: Client, server: ApiServer) -> None:
    listed = await client.list(CONFIGMAP, namespace="default")
    rv = listed["metadata"]["resourceVersion"]
    seen: list[tuple[str, str]] = []

    async def consume() -> None:
        async for ev in client.watch(CONFIGMAP, namespace="default", resource_version=rv,
                                     timeout_seconds=30):
            if ev["type"] != "BOOKMARK":
                seen.append((ev["type"], ev["object"]["metadata"]["name"]))
            if ev["type"] == "DELETED":
                return

    task = asyncio.create_task(consume())
    await client.create(CONFIGMAP, cm("w1"))
    await client.patch(CONFIGMAP, "w1", {"data": {"k": "v"}})
    await client.delete(CONFIGMAP, "w1")
    await asyncio.wait_for(task, 10)
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]

    server.faults.expire_history()
    events = [ev async for ev in client.watch(CONFIGMAP, resource_version=rv, timeout_seconds=5)]
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410


async def test_watch_refused_raises_typed_error(client: Client, server: ApiServer) -> None:
    server.faults.fail(verb="watch", status=410, count=1, reason="Expired")
    with pytest.raises(Gone):
        async for _ in client.watch(CONFIGMAP, resource_version="1", timeout_seconds=5):
            pass


async def test_watches_use_their_own_connection_pool(server: ApiServer) -> None:
    async with Client(ClientConfig(host=server.url), pool_size=1, timeout=5) as c:
        streams = [c.watch(CONFIGMAP, timeout_seconds=30) for _ in range(3)]
        tasks = [asyncio.create_task(anext(s)) for s in streams]  # hold 3 open watches
        await c.create(CONFIGMAP, cm("pool"))  # still gets a connection
        assert (await c.get(CONFIGMAP, "pool"))["metadata"]["name"] == "pool"
        firsts = await asyncio.wait_for(asyncio.gather(*tasks), 10)
        assert all(f["type"] == "ADDED" for f in firsts)
        for s in streams:
            await s.aclose()  # type: ignore[attr-defined]


async def test_write_listener_sees_every_successful_write(client: Client) -> None:
    calls: list[tuple[Kind, str, str | None]] = []

    def listener(kind: Kind, obj: RawObject | None, key: str) -> None:
        calls.append((kind, key, obj["metadata"]["resourceVersion"] if obj else None))

    def broken(kind: Kind, obj: Any, key: str) -> None:
        raise RuntimeError("listener bug")

    client.add_write_listener(broken)
    client.add_write_listener(listener)
    created = await client.create(CONFIGMAP, cm("l"))
    patched = await client.patch(CONFIGMAP, "l", {"data": {"a": "b"}})
    await client.delete(CONFIGMAP, "l")
    with pytest.raises(NotFound):
        await client.delete(CONFIGMAP, "l")  # a failed write is not reported
    assert calls == [
        (CONFIGMAP, "default/l", created["metadata"]["resourceVersion"]),
        (CONFIGMAP, "default/l", patched["metadata"]["resourceVersion"]),
        (CONFIGMAP, "default/l", None),
    ]
    # a delete that leaves the object finalizing reports it, with the delete's version
    await client.create(CONFIGMAP, {**cm("f"), "metadata": {
        "name": "f", "namespace": "default", "finalizers": ["example.com/hold"]}})
    finalizing = await client.delete(CONFIGMAP, "f")
    assert finalizing is not None and finalizing["metadata"].get("deletionTimestamp")
    assert calls[-1] == (CONFIGMAP, "default/f", finalizing["metadata"]["resourceVersion"])


async def test_close_closes_both_sessions(server: ApiServer) -> None:
    c = Client(ClientConfig(host=server.url))
    async with c:
        await c.list(CONFIGMAP)
        transport = c._transport
        assert transport is not None and transport.pool is not None  # no proxy: the lean pool
        assert transport.proxied is None
        assert transport.pool._idle and not transport.watches.closed
    assert not transport.pool._idle and transport.pool._closed
    assert transport.watches.closed


@pytest.mark.skipif(shutil.which("openssl") is None, reason="HTTPS mode needs openssl")
async def test_https_with_token_from_the_servers_kubeconfig(tmp_path: Path) -> None:
    async with ApiServer(port=0, simulators=False, tls=True, token="s3cret") as srv:
        cfg = await load_config(kubeconfig=str(srv.write_kubeconfig(tmp_path / "kc")))
        assert cfg.host.startswith("https://") and cfg.ca_data and cfg.token == "s3cret"
        async with Client(cfg, max_retries=0) as c:
            created = await c.create(CONFIGMAP, cm("tls"))
            assert created["metadata"]["uid"]
        wrong = ClientConfig(host=cfg.host, ca_data=cfg.ca_data, token="wrong")
        async with Client(wrong, max_retries=0) as c:
            with pytest.raises(Unauthorized) as err:
                await c.get(CONFIGMAP, "tls")
            assert err.value.code == 401


def test_retry_after_from_header_or_status_details() -> None:
    c = Client(ClientConfig(host="http://127.0.0.1:1"))
    body = orjson.dumps(status_body(429, "slow down", retry_after_seconds=0))
    assert c._error(429, body, {}).retry_after == 0.0
    assert c._error(429, body, {"Retry-After": "4"}).retry_after == 4.0
    err = c._error(502, b"<html>bad gateway</html>", {})
    assert isinstance(err, ServerError) and "bad gateway" in err.message
