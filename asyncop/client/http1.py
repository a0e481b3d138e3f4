"""Http1Pool: a lean HTTP/1.1 keep-alive client for the Client's unary requests.

aiohttp is a complete client (cookies, redirects, tracing, proxies, streaming, compression),
and a Kubernetes operator's calls use none of it: one JSON request, one JSON answer, on a
few long-lived connections to one host. Measured per request it costs ~70 µs of CPU in
aiohttp against ~20 µs here, which was a fifth of an operator's CPU per object. Watches
(streams) and requests through a proxy keep going through aiohttp (asyncop.client.transport).

What it does: `request(method, target, headers, body, timeout)` writes one request on an idle
connection (or a new one, at most `limit` at a time), reads the status line, the headers and
the body (Content-Length, chunked, or until close) and returns `(status, headers, body)`; the
connection goes back to the pool unless either side said `Connection: close`.

Invariants:
- the whole exchange (connect, write, read) is bounded by `timeout` (TimeoutError);
- a failure to connect raises `ConnectFailed` (nothing was sent: safe to retry any verb);
  any later failure raises `ConnectionLost` and closes that connection;
- an idle connection the server has closed is never reused; a reused connection that breaks
  before a single response byte is retried once on a fresh one, for idempotent methods only
  (the request may have been processed otherwise);
- response headers are case-insensitive (`multidict.CIMultiDict`), repeated ones kept.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from urllib.parse import urlsplit

from multidict import CIMultiDict

MAX_HEAD = 1024 * 1024
"""Longest response head (status line and headers) read."""
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_NO_BODY = frozenset({204, 304})


class ConnectFailed(OSError):
    """The connection could not be made: nothing was sent."""


class ConnectionLost(OSError):
    """The connection broke during the exchange; the request may or may not have arrived.
    `before_answer`: not a byte of the answer had come."""

    def __init__(self, message: str, *, before_answer: bool = False) -> None:
        super().__init__(message)
        self.before_answer = before_answer


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def usable(self) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()


class Http1Pool:
    def __init__(self, url: str, *, ssl_context: ssl.SSLContext | None,
                 server_hostname: str | None = None, limit: int = 100) -> None:
        parts = urlsplit(url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (443 if self.tls else 80)
        default = (self.tls and self.port == 443) or (not self.tls and self.port == 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if default else f"{host}:{self.port}"
        self._ssl = (ssl_context or ssl.create_default_context()) if self.tls else None
        self._server_hostname = server_hostname
        self._idle: deque[_Conn] = deque()
        self._slots = asyncio.Semaphore(limit if limit > 0 else 1 << 30)
        self._closed = False

    async def request(self, method: str, target: str, headers: dict[str, str],
                      body: bytes | None, *, timeout: float,
                      ) -> tuple[int, CIMultiDict[str], bytes]:
        head = self._head(method, target, headers, body)
        payload = head + body if body else head
        async with self._slots, asyncio.timeout(timeout):
            conn, reused = await self._acquire()
            try:
                return await self._exchange(conn, method, payload)
            except ConnectionLost as exc:
                if not (reused and exc.before_answer and method in _IDEMPOTENT):
                    raise
            # the server had closed the idle connection meanwhile: once more, on a fresh one
            conn, _ = await self._acquire(fresh=True)
            return await self._exchange(conn, method, payload)

    async def _exchange(self, conn: _Conn, method: str, payload: bytes,
                        ) -> tuple[int, CIMultiDict[str], bytes]:
        """Write the request, read the answer, pool or close the connection."""
        received = [False]
        try:
            conn.writer.write(payload)
            status, headers, data, keep = await self._response(conn.reader, method, received)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError) as exc:
            conn.close()
            raise ConnectionLost(f"{method}: {exc!r}", before_answer=not received[0]) from exc
        except BaseException:
            conn.close()  # timeout or cancellation mid-exchange: unusable
            raise
        if keep and not self._closed:
            self._idle.append(conn)
        else:
            conn.close()
        return status, headers, data

    def _head(self, method: str, target: str, headers: dict[str, str],
              body: bytes | None) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.host_header}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _acquire(self, *, fresh: bool = False) -> tuple[_Conn, bool]:
        while self._idle and not fresh:
            conn = self._idle.pop()
            if conn.usable():
                return conn, True
            conn.close()
        try:
            reader, writer = await asyncio.open_connection(
                self.host, self.port, ssl=self._ssl, limit=MAX_HEAD,
                server_hostname=(self._server_hostname or self.host) if self._ssl else None)
        except OSError as exc:
            raise ConnectFailed(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        return _Conn(reader, writer), False

    async def _response(self, reader: asyncio.StreamReader, method: str,
                        received: list[bool]) -> tuple[int, CIMultiDict[str], bytes, bool]:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            received[0] = True
            lines = head[:-4].split(b"\r\n")
            version, _, rest = lines[0].partition(b" ")
            status = int(rest[:3])
            if not 100 <= status < 200:
                break  # 1xx interim answers are skipped
        headers: CIMultiDict[str] = CIMultiDict()
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers.add(name.strip().decode("latin-1"), value.strip().decode("latin-1"))
        connection = headers.get("Connection", "").lower()
        keep = version == b"HTTP/1.1" and "close" not in connection
        if method == "HEAD" or status in _NO_BODY:
            return status, headers, b"", keep
        if "chunked" in headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":
                        pass  # trailers
                    break
                parts.append(await reader.readexactly(size))
                await reader.readexactly(2)
            return status, headers, b"".join(parts), keep
        length = headers.get("Content-Length")
        if length is not None:
            return status, headers, await reader.readexactly(int(length)), keep
        return status, headers, await reader.read(), False  # until the server closes

    async def close(self) -> None:
        """Close every idle connection; connections in use close when their request ends."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()
