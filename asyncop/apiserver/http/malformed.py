"""Requests too malformed for aiohttp to parse: a Status answer and one log line.

aiohttp answers what its HTTP parser refuses with a plain-text page and logs a traceback of
about ten lines for each, which a fuzzer or a port scanner turns into megabytes of logs. Go's
server (kube-apiserver) accepts any method token and answers one it does not serve with a
405 Status; it bounds the request header by size, not by a count of fields. Here:

- an unknown method is a 405 `MethodNotAllowed` Status, as kube answers it;
- a request line or header field over the limits, or too many header fields, is a 431
  `RequestHeaderFieldsTooLarge` Status (Go answers 431, in plain text);
- any other unparsable request is a 400 `BadRequest` Status naming what was wrong;
- each is logged once, on one line, at debug level for a bad method on a fresh connection (a
  client speaking another protocol) and warning otherwise, never with a traceback.

`install(runner)` applies this to an `aiohttp.web.AppRunner` after `setup()`. Invariant: the
connection is closed after the answer, as aiohttp does for every parse error.
"""

from __future__ import annotations

from typing import Any

import structlog
from aiohttp import web, web_protocol, web_server
from aiohttp.http_exceptions import BadHttpMethod, LineTooLong

from asyncop.api import status_body
from asyncop.apiserver.core import errors
from asyncop.apiserver.http.wire import dumps

log = structlog.get_logger("asyncop.apiserver")

MAX_HEADERS = 1024
"""Header fields a request may have (kube bounds only the header's total size: 1 MiB)."""
MAX_FIELD_BYTES = 128 * 1024
"""Bytes in one header field; with MAX_HEADERS this bounds what one request's header can
hold in memory while it is parsed (kube's 1 MiB total cannot be expressed in aiohttp)."""


class _Handler(web_protocol.RequestHandler):
    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        text = (message or (str(exc) if exc else "") or "").strip().splitlines()
        first = text[0].strip() if text else ""
        if isinstance(exc, BadHttpMethod):
            body = errors.method_not_allowed().status
            level = "debug" if self._request_count <= 1 else "warning"
        elif isinstance(exc, LineTooLong) or "Too many headers" in first:
            body = status_body(431, f"Request Header Fields Too Large: {first}",
                               reason="RequestHeaderFieldsTooLarge")
            level = "warning"
        elif status >= 500:
            body = errors.internal(first or "the request could not be handled").status
            level = "warning"
        else:
            body = status_body(400, f"malformed HTTP request: {first}" if first
                               else "malformed HTTP request")
            level = "warning"
        code = int(body.get("code") or status)
        getattr(log, level)("malformed request refused", code=code, why=first[:200],
                            peer=_peer(request))
        response = web.Response(status=code, body=dumps(body),
                                content_type="application/json")
        response.force_close()
        return response


def _peer(request: Any) -> str | None:
    try:
        return str(request.remote)
    except Exception:  # a request object built from an unparsable message may lack parts
        return None


class _Server(web_server.Server):
    def __call__(self) -> web_protocol.RequestHandler:
        handler: web_protocol.RequestHandler = _Handler(self, loop=self._loop, **self._kwargs)
        return handler


def install(runner: web.AppRunner) -> None:
    """Make the runner's server answer malformed requests as above (call after setup())."""
    server = runner.server
    assert server is not None, "install() needs runner.setup() first"
    server.__class__ = _Server

