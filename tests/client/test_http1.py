"""Http1Pool against a scripted HTTP/1.1 server on loopback: framing (Content-Length, chunked,
until close, 1xx, 204), keep-alive reuse, a stale idle connection, refused connections,
timeouts and the connection limit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from asyncop.client.http1 import ConnectFailed, ConnectionLost, Http1Pool
from asyncop.testing import eventually

Reply = Callable[[bytes], bytes | None]  # request -> raw response (None: hang up, b"": stall)


class Scripted:
    """Answers each request on a connection with the next reply of `replies`."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = replies
        self.requests: list[bytes] = []
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.active = 0
        self.most_active = 0
        self.gate: asyncio.Event | None = None  # set: requests are held until it opens

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.replies:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                self.active += 1
                self.most_active = max(self.most_active, self.active)
                reply = self.replies.pop(0)(request)
                if self.gate is not None:
                    await self.gate.wait()
                self.active -= 1
                if reply is None:
                    return
                if reply == b"":
                    await asyncio.Event().wait()  # never answers
                writer.write(reply)
                await writer.drain()
                if b"connection: close" in reply.lower():
                    return
        finally:
            writer.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"


@pytest.fixture
async def scripted() -> AsyncIterator[Callable[[list[Reply]], Any]]:
    servers: list[asyncio.Server] = []

    async def start(replies: list[Reply]) -> Scripted:
        s = Scripted(replies)
        s.server = await asyncio.start_server(s.handle, "127.0.0.1", 0)
        servers.append(s.server)
        return s

    yield start
    for server in servers:
        server.close()


def ok(body: bytes, *extra: str) -> Reply:
    head = "\r\n".join(["HTTP/1.1 200 OK", f"Content-Length: {len(body)}", *extra])
    return lambda _: head.encode() + b"\r\n\r\n" + body


async def test_content_length_keep_alive_and_request_format(scripted: Any) -> None:
    srv = await scripted([ok(b'{"a":1}', "Content-Type: application/json",
                             "Warning: 299 - \"one\"", "Warning: 299 - \"two\""), ok(b"{}")])
    pool = Http1Pool(srv.url, ssl_context=None)
    status, headers, body = await pool.request(
        "POST", "/api/v1/x?a=b%20c", {"Content-Type": "application/json"}, b'{"k":1}',
        timeout=5)
    assert (status, body) == (200, b'{"a":1}')
    assert headers["content-type"] == "application/json"
    assert headers.getall("Warning") == ['299 - "one"', '299 - "two"']
    await pool.request("GET", "/y", {}, None, timeout=5)
    assert srv.connections == 1  # kept alive
    first = srv.requests[0].decode()
    assert first.startswith("POST /api/v1/x?a=b%20c HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{srv.url.rsplit(':', 1)[1]}\r\n" in first
    assert "Content-Length: 7\r\n" in first and first.endswith('\r\n\r\n{"k":1}')
    assert "Content-Length" not in srv.requests[1].decode()  # a GET without a body
    await pool.close()


async def test_chunked_interim_no_content_and_until_close(scripted: Any) -> None:
    chunked = (b"HTTP/1.1 100 Continue\r\n\r\n"
               b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"4\r\nWiki\r\n6;ext=1\r\npedia \r\n0\r\nTrailer: x\r\n\r\n")
    srv = await scripted([lambda _: chunked,
                          lambda _: b"HTTP/1.1 204 No Content\r\n\r\n",
                          lambda _: b"HTTP/1.0 200 OK\r\n\r\nto the end"])
    pool = Http1Pool(srv.url, ssl_context=None)
    assert (await pool.request("GET", "/", {}, None, timeout=5))[::2] == (201, b"Wikipedia ")
    assert (await pool.request("GET", "/", {}, None, timeout=5))[::2] == (204, b"")
    assert srv.connections == 1
    assert (await pool.request("GET", "/", {}, None, timeout=5))[::2] == (200, b"to the end")
    assert not pool._idle  # HTTP/1.0 without keep-alive: not pooled
    await pool.close()


async def test_a_connection_the_server_closes_is_not_reused(scripted: Any) -> None:
    srv = await scripted([ok(b"1", "Connection: close"), ok(b"2")])
    pool = Http1Pool(srv.url, ssl_context=None)
    assert (await pool.request("GET", "/", {}, None, timeout=5))[2] == b"1"
    assert (await pool.request("GET", "/", {}, None, timeout=5))[2] == b"2"
    assert srv.connections == 2
    await pool.close()


async def test_a_reused_connection_that_breaks_is_retried_only_when_idempotent(
        scripted: Any) -> None:
    srv = await scripted([ok(b"1"), lambda _: None, ok(b"again"), ok(b"x"), lambda _: None])
    pool = Http1Pool(srv.url, ssl_context=None)
    await pool.request("GET", "/", {}, None, timeout=5)
    # the server drops the kept-alive connection on the next request: a GET goes again
    status, _, body = await pool.request("GET", "/", {}, None, timeout=5)
    assert (status, body) == (200, b"again") and srv.connections == 2
    await pool.request("GET", "/", {}, None, timeout=5)
    with pytest.raises(ConnectionLost):  # a POST may have been processed: not resent
        await pool.request("POST", "/", {}, b"{}", timeout=5)
    assert len(srv.requests) == 5
    await pool.close()


async def test_refused_and_timeout(scripted: Any) -> None:
    srv = await scripted([lambda _: b""])  # never answers: the client gives up
    pool = Http1Pool(srv.url, ssl_context=None)
    with pytest.raises(TimeoutError):
        await pool.request("GET", "/", {}, None, timeout=0.2)
    assert not pool._idle
    port = srv.url.rsplit(":", 1)[1]
    srv.server.close()
    await srv.server.wait_closed()
    with pytest.raises(ConnectFailed):
        await Http1Pool(f"http://127.0.0.1:{port}", ssl_context=None).request(
            "GET", "/", {}, None, timeout=5)


async def test_at_most_limit_requests_at_once(scripted: Any) -> None:
    srv = await scripted([ok(b"{}") for _ in range(12)])
    srv.gate = asyncio.Event()  # the server holds every request it gets
    pool = Http1Pool(srv.url, ssl_context=None, limit=3)
    calls = asyncio.gather(*(pool.request("GET", "/", {}, None, timeout=5) for _ in range(12)))
    await eventually(lambda: srv.active == 3, timeout=5)
    for _ in range(50):  # room for a fourth request to arrive, were the limit not kept
        await asyncio.sleep(0)
    assert (srv.active, srv.connections) == (3, 3)
    srv.gate.set()
    await calls
    assert len(srv.requests) == 12 and srv.most_active == 3 and srv.connections == 3
    await pool.close()
