"""Requests aiohttp cannot parse get a Status and one log line (http/malformed.py).

Regressions: an unknown method got aiohttp's plain-text 400 (kube answers any method token it
does not serve with a 405 Status); more than 128 header fields got a plain-text 400 (kube
bounds the header's size, not its field count); each malformed request logged a traceback of
about ten lines.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
import pytest_asyncio
from structlog.testing import capture_logs

from asyncop.apiserver import ApiServer
from asyncop.apiserver.http import malformed


async def _raw(port: int, data: bytes) -> tuple[int, dict[str, object]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), orjson.loads(body) if body.strip() else {}


def _request(method: bytes, path: bytes, headers: bytes = b"") -> bytes:
    return (method + b" " + path + b" HTTP/1.1\r\nHost: x\r\n" + headers +
            b"Connection: close\r\n\r\n")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


async def test_an_unknown_method_is_kubes_405_status(server: ApiServer) -> None:
    with capture_logs() as logs:
        code, body = await _raw(server.port, _request(b"FOO", b"/api/v1/namespaces"))
    assert code == 405
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "the server does not allow this method on the requested "
                               "resource", "reason": "MethodNotAllowed", "code": 405}
    refused = [e for e in logs if e["event"] == "malformed request refused"]
    assert len(refused) == 1 and "exc_info" not in refused[0]


async def test_many_header_fields_are_fine_and_too_many_are_a_431_status(
        server: ApiServer) -> None:
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(200))
    code, body = await _raw(server.port, _request(b"GET", b"/api/v1/namespaces", fields))
    assert code == 200 and body["kind"] == "NamespaceList"
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(malformed.MAX_HEADERS + 10))
    with capture_logs() as logs:
        code, body = await _raw(server.port, _request(b"GET", b"/api/v1/namespaces", fields))
    assert code == 431 and body["reason"] == "RequestHeaderFieldsTooLarge"
    assert [e["log_level"] for e in logs if e["event"] == "malformed request refused"] == [
        "warning"]


async def test_garbage_is_a_400_status_and_the_server_keeps_serving(server: ApiServer) -> None:
    with capture_logs() as logs:
        code, body = await _raw(server.port, b"GET /api/v1 HTTP/1.1\r\nHost x\r\n\r\n")
    assert code == 400 and body["kind"] == "Status" and body["reason"] == "BadRequest"
    assert body["message"].startswith("malformed HTTP request")
    assert all("exc_info" not in e for e in logs)
    code, body = await _raw(server.port, _request(b"GET", b"/version"))
    assert code == 200 and body["major"] == "1"
