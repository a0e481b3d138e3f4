"""Abuse over real HTTP: slowloris connections, watch floods, huge selectors, bad names,
10k-item lists and bodies, malformed protobuf. Every answer is kube's Status (a URL beyond
MAX_HEADER_BYTES gets a 431 Status, where Go answers a plain-text 431), the server keeps
serving, and the latency of a concurrent GET during the abuse is measured and printed (a
record, not an assertion: see docs/hardening.md for the figures).
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import orjson
import pytest

from asyncop.apiserver import ApiServer
from asyncop.apiserver.server import MAX_HEADER_BYTES
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call

CM = "/api/v1/namespaces/default/configmaps"
http = httpkit.http

DNS1123_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    r"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1123_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


class Probe:
    """GETs one ConfigMap in a loop while the abuse runs; `report()` prints the latencies."""

    def __init__(self, server: ApiServer, label: str) -> None:
        self.url = f"{server.url}{CM}/probe"
        self.label = label
        self.latencies: list[float] = []
        self.codes: list[int] = []

    async def run(self, stop: asyncio.Event) -> None:
        async with aiohttp.ClientSession() as session:
            while not stop.is_set():
                start = time.perf_counter()
                async with session.get(self.url) as r:
                    await r.read()
                self.latencies.append(time.perf_counter() - start)
                self.codes.append(r.status)
                await asyncio.sleep(0.005)

    def report(self) -> str:
        lat = sorted(self.latencies)
        p50 = statistics.median(lat) * 1000
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        line = (f"[abuse] {self.label}: concurrent GET p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
                f"max {lat[-1] * 1000:.1f} ms over {len(lat)} GETs")
        print(line)
        return line


@contextlib.asynccontextmanager
async def probing(server: ApiServer, label: str, capsys: pytest.CaptureFixture[str],
                  ) -> AsyncIterator[Probe]:
    async with aiohttp.ClientSession() as session:
        code, _ = await call(session, "POST", server.url + CM,
                             json={"metadata": {"name": "probe"}, "data": {"k": "v"}})
        assert code == 201
    probe = Probe(server, label)
    stop = asyncio.Event()
    task = asyncio.create_task(probe.run(stop))
    try:
        yield probe
    finally:
        stop.set()
        await task
    assert probe.codes and set(probe.codes) == {200}  # every GET during the abuse was served
    with capsys.disabled():
        probe.report()


async def _until(check: Callable[[], Awaitable[bool]], seconds: float = 30) -> None:
    """Liveness bound (not a timing assertion): poll `check` until true or fail."""
    for _ in range(int(seconds / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


async def test_slowloris_connections_are_closed_and_others_served(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Headers trickled a byte at a time: the server drops each such connection once its
    header timeout passes (kube's ReadHeaderTimeout), while every other client is served."""
    async with ApiServer(simulators=False, header_timeout=1.0) as server:
        header = (b"GET " + CM.encode() + b" HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"p" * 4096
                  + b"\r\n\r\n")
        conns = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(50)]
        closed = [False] * len(conns)

        async def hung_up(reader: asyncio.StreamReader, wait: float | None) -> bool:
            """EOF or a reset: the server closed the connection (None: wait for it)."""
            try:
                return await asyncio.wait_for(reader.read(1), wait) == b""
            except TimeoutError:
                return False
            except ConnectionError:
                return True

        async def trickle(i: int) -> None:
            reader, writer = conns[i]
            for byte in header:  # never completes: 4 KiB at a byte per 20 ms
                writer.write(bytes([byte]))
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
                if await hung_up(reader, 0.02):
                    closed[i] = True
                    break
            else:
                closed[i] = await hung_up(reader, None)
            writer.close()

        async with probing(server, "50 slowloris connections", capsys):
            await asyncio.gather(*(trickle(i) for i in range(len(conns))))
        assert all(closed)


async def test_a_body_trickled_after_its_headers_times_out_with_a_504(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Complete headers, then a body a byte at a time: 504 Timeout once `body_timeout`
    passes (kube's request timeout), nothing stored, everyone else served."""
    async with ApiServer(simulators=False, body_timeout=0.5) as server:
        body = b'{"metadata":{"name":"slow"}}' + b" " * 4096
        head = (f"POST {CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()

        async def slow_post() -> bytes:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(head)
            answer = asyncio.create_task(reader.read(65536))
            for byte in body:
                if answer.done():
                    break
                with contextlib.suppress(ConnectionError):
                    writer.write(bytes([byte]))
                    await writer.drain()
                await asyncio.sleep(0.01)
            data = await answer
            writer.close()
            return data

        async with probing(server, "10 slow bodies", capsys):
            answers = await asyncio.gather(*(slow_post() for _ in range(10)))
        for data in answers:
            status_line, _, rest = data.partition(b"\r\n")
            assert status_line == b"HTTP/1.1 504 Gateway Timeout", data[:200]
            status = orjson.loads(rest.partition(b"\r\n\r\n")[2])
            assert (status["reason"], status["message"]) == (
                "Timeout", "Timeout: request did not complete within the allotted timeout")
        async with aiohttp.ClientSession() as session:
            code, _ = await call(session, "GET", f"{server.url}{CM}/slow")
            assert code == 404


async def test_a_watch_flood_is_served_and_the_server_stays_responsive(
        apiserver_no_sim: ApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    server = apiserver_no_sim
    watchers, writes = 300, 20
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        opened = 0
        all_open = asyncio.Event()

        async def watch() -> int:
            nonlocal opened
            seen = 0
            url = f"{server.url}{CM}?watch=1&labelSelector=flood%3D1"
            async with session.get(url) as r:
                assert r.status == 200
                opened += 1
                if opened == watchers:
                    all_open.set()
                async for line in r.content:
                    if b'"ADDED"' in line:
                        seen += 1
                        if seen == writes:
                            return seen
            return seen

        async with probing(server, f"{watchers} concurrent watches, {writes} writes",
                           capsys):
            tasks = [asyncio.create_task(watch()) for _ in range(watchers)]
            await asyncio.wait_for(all_open.wait(), 60)
            for i in range(writes):
                code, _ = await call(session, "POST", server.url + CM, json={
                    "metadata": {"name": f"f{i}", "labels": {"flood": "1"}}})
                assert code == 201
            counts = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        assert counts == [writes] * watchers
    async with aiohttp.ClientSession() as session:
        code, listed = await call(session, "GET", server.url + CM)
        assert code == 200 and len(listed["items"]) == writes + 1


async def test_huge_selectors(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession,
                              capsys: pytest.CaptureFixture[str]) -> None:
    server = apiserver_no_sim
    url = server.url + CM
    labels = {f"k{i}": "v" for i in range(300)}
    code, _ = await call(http, "POST", url, json={"metadata": {"name": "l", "labels": labels}})
    assert code == 201
    async with probing(server, "huge selectors (x3)", capsys):
        for _ in range(3):
            await _huge_selectors(http, url)
    code, _ = await call(http, "GET", url)
    assert code == 200


async def _huge_selectors(http: aiohttp.ClientSession, url: str) -> None:
    many = ",".join(f"k{i % 300}=v" for i in range(20_000))  # ~170 KB of URL
    code, listed = await call(http, "GET", url, params={"labelSelector": many})
    assert code == 200 and [o["metadata"]["name"] for o in listed["items"]] == ["l"]
    code, listed = await call(http, "GET", url, params={"labelSelector": many + ",z=1"})
    assert code == 200 and listed["items"] == []
    code, body = await call(http, "GET", url, params={"labelSelector": "(" * 50_000})
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"].startswith('unable to parse requirement: invalid label key "(((')
    name = "n" * 200_000
    code, listed = await call(http, "GET", url,
                              params={"fieldSelector": f"metadata.name={name}"})
    assert code == 200 and listed["items"] == []
    code, body = await call(http, "GET", url, params={"fieldSelector": "spec.x=" + name})
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == "field label not supported: spec.x"
    async with http.get(url, params={"labelSelector": "a" * MAX_HEADER_BYTES}) as r:
        # beyond MAX_HEADER_BYTES: 431 as Go's server answers, here as a Status
        assert r.status == 431
        body = await r.json()
        assert (body["kind"], body["reason"]) == ("Status", "RequestHeaderFieldsTooLarge")


async def test_invalid_and_unicode_names_get_kube_dns1123_causes(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    for name in ("Bad_Name", "ünïcödé", "a" * 254, "-lead", "trail.", "名前"):
        code, body = await call(http, "POST", url, json={"metadata": {"name": name}})
        assert (code, body["reason"]) == (422, "Invalid"), name
        assert body["details"]["name"] == name and body["details"]["kind"] == "ConfigMap"
        [cause] = [c for c in body["details"]["causes"] if c["field"] == "metadata.name"]
        assert cause["reason"] == "FieldValueInvalid"
        quoted = '"' + name + '"'
        if len(name) > 253:
            assert cause["message"] == (f"Invalid value: {quoted}: must be no more than 253 "
                                        "characters")
        else:
            assert cause["message"] == f"Invalid value: {quoted}: {DNS1123_SUBDOMAIN}"
        assert body["message"] == f'ConfigMap {quoted} is invalid: metadata.name: ' \
            + cause["message"]
    code, body = await call(http, "POST", apiserver_no_sim.url + "/api/v1/namespaces",
                            json={"metadata": {"name": "Bad.NS"}})
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["message"] == f'Invalid value: "Bad.NS": {DNS1123_LABEL}'
    for ns in ("Bad_NS", "ünï"):
        code, body = await call(http, "POST", f"{apiserver_no_sim.url}/api/v1/namespaces/{ns}"
                                "/configmaps", json={"metadata": {"name": "ok"}})
        assert (code, body["message"]) == (404, f'namespaces "{ns}" not found')
    code, body = await call(http, "GET", f"{url}/ünï")
    assert (code, body["message"]) == (404, 'configmaps "ünï" not found')
    code, listed = await call(http, "GET", url)
    assert code == 200 and listed["items"] == []


async def test_ten_thousand_item_lists_and_bodies(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession,
        capsys: pytest.CaptureFixture[str]) -> None:
    server = apiserver_no_sim
    url = server.url + CM
    rt = server.store.registry.resolve("", "v1", "configmaps")
    assert rt is not None
    for i in range(10_000):
        server.store.writer.create(rt, {"metadata": {"name": f"c{i}"}}, namespace="default")
    async with probing(server, "5 LISTs of 10,001 ConfigMaps, 10k-item bodies", capsys):
        for _ in range(5):
            code, listed = await call(http, "GET", url)
            assert code == 200 and len(listed["items"]) == 10_001
        code, page = await call(http, "GET", url, params={"limit": "500"})
        assert len(page["items"]) == 500 and page["metadata"]["continue"]
        code, made = await call(http, "POST", url, json={
            "metadata": {"name": "wide"}, "data": {f"k{i}": "v" for i in range(10_000)}})
        assert code == 201 and len(made["data"]) == 10_000
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": f"c{i}", "image": "x"} for i in range(10_000)]}}
        code, made = await call(http, "POST", server.url + "/api/v1/namespaces/default/pods",
                                json=pod)
        assert code == 201 and len(made["spec"]["containers"]) == 10_000
        ops = [{"op": "add", "path": f"/data/z{i}", "value": "v"} for i in range(10_001)]
        code, body = await call(http, "PATCH", f"{url}/wide", data=orjson.dumps(ops),
                                headers={"Content-Type": "application/json-patch+json"})
        # kube: 413 (handlers/patch.go); this test pinned our earlier 422, not kube's answer
        assert (code, body["reason"]) == (413, "RequestEntityTooLarge")
        code, body = await call(http, "POST", url, json=[1] * 10_000)
        assert (code, body["reason"]) == (400, "BadRequest")
    code, got = await call(http, "GET", f"{url}/wide")
    assert code == 200 and "z0" not in got["data"]  # the rejected patch changed nothing


async def test_malformed_protobuf_bodies(apiserver_no_sim: ApiServer,
                                         http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    proto = {"Content-Type": "application/vnd.kubernetes.protobuf"}
    bodies = [b"", b"k8s", b"k8s\x00", b"k8s\x00\x0a", b"k8s\x00\x0a\xff\xff\xff\xff\xff\xff",
              b"k8s\x00" + bytes(range(256)), b"\x00" * 1000, b"k8s\x00\x12\x05hello"]
    for body in bodies:
        async with http.post(url, data=body, headers=proto) as r:
            status = await r.json()
        assert r.status in (400, 415) and status["kind"] == "Status", (body, status)
    code, listed = await call(http, "GET", url)
    assert code == 200 and listed["items"] == []
