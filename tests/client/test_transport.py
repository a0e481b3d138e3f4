"""Transport: the proxy is resolved once (kubeconfig proxy-url, then HTTP(S)_PROXY/NO_PROXY),
requests and watches really go through it, nothing is looked up per request, and without a
proxy calls take the lean HTTP/1.1 pool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.client.config import load_config
from asyncop.client.transport import resolve_proxy

PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
              "REQUEST_METHOD")


def _resolve(cfg: ClientConfig, env: dict[str, str], mp: pytest.MonkeyPatch) -> str | None:
    for name in PROXY_VARS:
        mp.delenv(name, raising=False)
    for name, value in env.items():
        mp.setenv(name, value)
    return resolve_proxy(cfg)


def test_proxy_url_of_the_cluster_wins_over_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = ClientConfig(host="https://10.0.0.1:6443", proxy_url="http://kc-proxy:3128")
    env = {"HTTPS_PROXY": "http://env-proxy:3128"}
    assert _resolve(cfg, env, monkeypatch) == "http://kc-proxy:3128"


def test_environment_proxy_by_scheme_either_case(monkeypatch: pytest.MonkeyPatch) -> None:
    https = ClientConfig(host="https://api.example.com:6443")
    http = ClientConfig(host="http://api.example.com")
    env = {"HTTPS_PROXY": "http://secure:1", "http_proxy": "http://plain:2"}
    assert _resolve(https, env, monkeypatch) == "http://secure:1"
    assert _resolve(http, env, monkeypatch) == "http://plain:2"
    assert _resolve(https, {"https_proxy": "http://lower:1", "HTTPS_PROXY": "http://up:1"},
                    monkeypatch) == "http://lower:1"
    assert _resolve(https, {}, monkeypatch) is None
    assert _resolve(https, {"HTTPS_PROXY": ""}, monkeypatch) is None


@pytest.mark.parametrize("no_proxy", ["api.example.com", ".example.com", "example.com", "*",
                                      "other.org,api.example.com:6443"])
def test_no_proxy_bypasses(no_proxy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = ClientConfig(host="https://api.example.com:6443")
    env = {"HTTPS_PROXY": "http://secure:1", "NO_PROXY": no_proxy}
    assert _resolve(cfg, env, monkeypatch) is None


def test_no_proxy_for_another_host_keeps_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = ClientConfig(host="https://api.example.com:6443")
    env = {"HTTPS_PROXY": "http://secure:1", "no_proxy": "other.org,10.0.0.0"}
    assert _resolve(cfg, env, monkeypatch) == "http://secure:1"


async def test_kubeconfig_proxy_url_is_read(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "kc"  # type: ignore[operator]
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:1', "
        "proxy-url: 'http://proxy.local:3128'}}]\n"
        "users: [{name: u, user: {}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    cfg = await load_config(kubeconfig=str(path))
    assert cfg.proxy_url == "http://proxy.local:3128"


@pytest.fixture
async def proxy() -> AsyncIterator[tuple[str, list[str]]]:
    """A forwarding HTTP proxy on loopback that records the absolute URLs it was asked for."""
    seen: list[str] = []
    upstream = aiohttp.ClientSession(trust_env=False, auto_decompress=False)

    async def forward(request: web.Request) -> web.StreamResponse:
        seen.append(str(request.url))
        async with upstream.request(request.method, request.url, headers=request.headers,
                                    data=await request.read()) as up:
            resp = web.StreamResponse(status=up.status, headers={
                k: v for k, v in up.headers.items()
                if k.lower() not in ("transfer-encoding", "content-length", "connection")})
            await resp.prepare(request)
            async for chunk in up.content.iter_any():
                await resp.write(chunk)
            await resp.write_eof()
            return resp

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        await upstream.close()
        await runner.cleanup()


async def test_requests_and_watches_go_through_the_environment_proxy(
    proxy: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen = proxy
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with ApiServer(port=0, simulators=False) as srv:
        async with Client(ClientConfig(host=srv.url), max_retries=0) as c:
            monkeypatch.delenv("HTTP_PROXY")  # resolved once, at open: later changes don't count
            created = await c.create(CONFIGMAP, {"metadata": {"name": "p"}, "data": {"a": "1"}})
            rv = created["metadata"]["resourceVersion"]
            await c.get(CONFIGMAP, "p")

            async def first_event() -> str:
                async for event in c.watch(CONFIGMAP, resource_version="0"):
                    return str(event["type"])
                return ""

            assert await asyncio.wait_for(first_event(), 10) == "ADDED"
            assert rv
    paths = [s.split("127.0.0.1", 1)[1] for s in seen]
    assert any(p.endswith("/api/v1/namespaces/default/configmaps") for p in paths)
    assert any(p.endswith("/api/v1/namespaces/default/configmaps/p") for p in paths)
    assert any("watch=true" in p for p in paths)
    assert all(s.startswith(srv.url) for s in seen)


async def test_no_proxy_sends_straight_to_the_server(
    proxy: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen = proxy
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with ApiServer(port=0, simulators=False) as srv:
        async with Client(ClientConfig(host=srv.url), max_retries=0) as c:
            await c.create(CONFIGMAP, {"metadata": {"name": "q"}})
            assert (await c.get(CONFIGMAP, "q"))["metadata"]["name"] == "q"
    assert seen == []
