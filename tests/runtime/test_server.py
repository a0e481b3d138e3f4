"""The probes/metrics HTTP server over real HTTP (aiohttp client against ProbeServer)."""

from __future__ import annotations

import aiohttp
import pytest

from asyncop.runtime.health import Health
from asyncop.runtime.server import BindAddress, ProbeServer, parse_bind_address


def test_parse_bind_address() -> None:
    assert parse_bind_address("0") is None
    assert parse_bind_address("") is None
    assert parse_bind_address(None) is None
    assert parse_bind_address(":8080") == BindAddress("0.0.0.0", 8080)
    assert parse_bind_address("127.0.0.1:0") == BindAddress("127.0.0.1", 0)
    assert parse_bind_address("[::1]:9090") == BindAddress("::1", 9090)
    for bad in ("localhost", "host:port", "h:70000"):
        with pytest.raises(ValueError, match="bind address"):
            parse_bind_address(bad)


async def test_probes_and_metrics_on_separate_ports() -> None:
    health = Health()
    ready = {"v": "caches not synced"}
    health.add_liveness("loop", lambda: None)
    health.add_readiness("caches", lambda: ready["v"])
    server = ProbeServer(
        health=health,
        exposition=lambda: b"# TYPE x_total counter\nx_total 3.0\n",
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
    )
    await server.start()
    try:
        assert server.metrics_port and server.health_port
        assert server.metrics_port != server.health_port
        async with aiohttp.ClientSession() as s:
            hp = f"http://127.0.0.1:{server.health_port}"
            async with s.get(f"{hp}/healthz") as r:
                assert r.status == 200 and await r.text() == "ok"
            async with s.get(f"{hp}/readyz") as r:
                assert r.status == 500 and "caches not synced" in await r.text()
            ready["v"] = None
            async with s.get(f"{hp}/readyz?verbose") as r:
                assert r.status == 200 and "[+]caches ok" in await r.text()
            async with s.get(f"{hp}/metrics") as r:
                assert r.status == 404  # metrics live on their own port
            async with s.get(f"http://127.0.0.1:{server.metrics_port}/metrics") as r:
                assert r.status == 200
                assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
                assert "x_total 3.0" in await r.text()
    finally:
        await server.stop()


async def test_same_address_serves_everything_and_zero_disables() -> None:
    server = ProbeServer(
        health=Health(), exposition=lambda: b"", metrics_bind_address="0",
        health_probe_bind_address="0",
    )
    assert not server.enabled
    await server.start()
    assert server.metrics_port is None and server.health_port is None
    await server.stop()


async def test_one_listener_when_addresses_are_equal() -> None:
    import errno
    import socket

    for attempt in range(5):  # a port free a moment ago; another process may take it first
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        addr = f"127.0.0.1:{port}"
        server = ProbeServer(
            health=Health(), exposition=lambda: b"up 1.0\n", metrics_bind_address=addr,
            health_probe_bind_address=addr,
        )
        try:
            await server.start()
            break
        except OSError as exc:
            await server.stop()
            if exc.errno != errno.EADDRINUSE or attempt == 4:
                raise
    try:
        assert server.metrics_port == server.health_port == port
        async with aiohttp.ClientSession() as s:
            for path in ("/healthz", "/readyz", "/metrics"):
                async with s.get(f"http://{addr}{path}") as r:
                    assert r.status == 200, path
    finally:
        await server.stop()
