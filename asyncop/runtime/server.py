"""The probes and metrics HTTP server (aiohttp): /healthz, /readyz, /metrics, /debug/reconciles.

Bind addresses follow controller-runtime: "host:port", ":port" (all interfaces), and "0"
(or "" / None) disables the endpoint; port 0 picks a free port (see `metrics_port`,
`health_port`). When both addresses are equal (and not port 0) one listener serves all three paths.
Invariant: the handlers only read state (checks are synchronous and cheap; the metrics text
comes from a callable), so a scrape never blocks the runtime.

`/debug/reconciles` (`debug=`, the Manager's `debug_endpoints`) is served next to /metrics.
It tells anyone who can reach it the operator's objects, errors and timing, so it is refused
(`InsecureDebugBind` at start) on a metrics address that is not loopback unless the metrics
endpoint authenticates (`metrics_auth`, asyncop.runtime.metricsauth); on loopback, reach it
from outside the pod with `kubectl port-forward`.
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from asyncop.runtime.health import Health, render

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEBUG_PATH = "/debug/reconciles"

DebugAnswer = Callable[[Mapping[str, str]], tuple[int, dict[str, Any]]]
Authorize = Callable[[web.Request], Awaitable[web.Response | None]]
"""`authorize(request)`: None to serve it, else the 401/403 answer."""


class InsecureDebugBind(ValueError):
    """/debug/reconciles asked for on a non-loopback metrics address without metrics auth."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


@dataclass(frozen=True, slots=True)
class BindAddress:
    host: str
    port: int


def parse_bind_address(address: str | None) -> BindAddress | None:
    """Parse "host:port" / ":port" / "[v6]:port"; None, "" and "0" mean disabled."""
    if address is None or address.strip() in ("", "0"):
        return None
    host, sep, port_text = address.strip().rpartition(":")
    if not sep:
        raise ValueError(f"bad bind address {address!r} (expected HOST:PORT, :PORT or 0)")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"bad port in bind address {address!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"port out of range in bind address {address!r}")
    host = host.strip("[]") or "0.0.0.0"
    return BindAddress(host, port)


class ProbeServer:
    """Serves the Manager's health checks and metrics exposition on one or two listeners."""

    def __init__(
        self,
        *,
        health: Health,
        exposition: Callable[[], bytes],
        metrics_bind_address: str | None = None,
        health_probe_bind_address: str | None = None,
        debug: DebugAnswer | None = None,
        authorize: Authorize | None = None,
        metrics_ssl: ssl.SSLContext | None = None,
    ) -> None:
        self._health = health
        self._exposition = exposition
        self._metrics_addr = parse_bind_address(metrics_bind_address)
        self._health_addr = parse_bind_address(health_probe_bind_address)
        self._debug = debug
        self._authorize = authorize
        self.metrics_ssl = metrics_ssl
        """TLS for the metrics listener (secure metrics); the probes stay plain HTTP."""
        addr = self._metrics_addr
        if debug is not None and authorize is None and addr is not None \
                and not is_loopback(addr.host):
            raise InsecureDebugBind(
                f"refusing to serve {DEBUG_PATH} on the non-loopback metrics address "
                f"{addr.host or 'all interfaces'}:{addr.port} without metrics authentication "
                "(--metrics-secure): it shows the operator's objects and errors; bind the "
                "metrics to 127.0.0.1 and use kubectl port-forward, or add --metrics-secure")
        self._runners: list[web.AppRunner] = []
        self.metrics_port: int | None = None
        self.health_port: int | None = None

    @property
    def enabled(self) -> bool:
        return self._metrics_addr is not None or self._health_addr is not None

    def app(self, *, metrics: bool = True, probes: bool = True) -> web.Application:
        app = web.Application()
        if probes:
            app.router.add_get("/healthz", self._healthz)
            app.router.add_get("/livez", self._healthz)
            app.router.add_get("/readyz", self._readyz)
        if metrics:
            app.router.add_get("/metrics", self._guarded(self._metrics))
            if self._debug is not None:
                app.router.add_get(DEBUG_PATH, self._guarded(self._debug_reconciles))
        return app

    def _guarded(self, handler: Callable[[web.Request], Awaitable[web.Response]],
                 ) -> Callable[[web.Request], Awaitable[web.Response]]:
        authorize = self._authorize
        if authorize is None:
            return handler

        async def guarded(request: web.Request) -> web.Response:
            refused = await authorize(request)
            return refused if refused is not None else await handler(request)

        return guarded

    async def start(self) -> None:
        shared = self._metrics_addr is not None and self._metrics_addr.port != 0 \
            and self.metrics_ssl is None
        if shared and self._metrics_addr == self._health_addr:
            assert self._metrics_addr is not None
            port = await self._serve(self.app(), self._metrics_addr)
            self.metrics_port = self.health_port = port
            return
        if self._metrics_addr is not None:
            self.metrics_port = await self._serve(self.app(probes=False), self._metrics_addr,
                                                  self.metrics_ssl)
        if self._health_addr is not None:
            self.health_port = await self._serve(self.app(metrics=False), self._health_addr)

    async def stop(self) -> None:
        runners, self._runners = self._runners, []
        for runner in reversed(runners):
            await runner.cleanup()

    async def _serve(self, app: web.Application, addr: BindAddress,
                     tls: ssl.SSLContext | None = None) -> int:
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        self._runners.append(runner)
        site = web.TCPSite(runner, addr.host, addr.port, ssl_context=tls)
        await site.start()
        bound = runner.addresses  # the real port when 0 was asked
        return int(bound[-1][1]) if bound else addr.port

    async def _healthz(self, request: web.Request) -> web.Response:
        ok, body = render(self._health.liveness(), verbose="verbose" in request.query)
        return web.Response(status=200 if ok else 500, text=body)

    async def _readyz(self, request: web.Request) -> web.Response:
        ok, body = render(self._health.readiness(), verbose="verbose" in request.query)
        return web.Response(status=200 if ok else 500, text=body)

    async def _metrics(self, request: web.Request) -> web.Response:
        body = self._exposition()
        return web.Response(body=body, headers={"Content-Type": PROMETHEUS_CONTENT_TYPE})

    async def _debug_reconciles(self, request: web.Request) -> web.Response:
        assert self._debug is not None
        status, body = self._debug(request.query)
        return web.Response(status=status, body=orjson.dumps(body, option=orjson.OPT_INDENT_2),
                            content_type="application/json")
