"""Transport: how the Client's requests reach the API server, decided once per Client.

Everything that does not change between requests is decided here, when the Client opens:
the TLS context (cluster CA, client certificate, verification), the pool size and the HTTP
proxy. Two ways out:

- `call()`: one request, one answer. Without a proxy it goes through `Http1Pool`
  (asyncop.client.http1), a lean HTTP/1.1 keep-alive pool; through a proxy it goes through an
  aiohttp session.
- `stream()`: a watch, always through its own aiohttp session (unlimited connections, so
  long-lived streams never take the calls' slots).

aiohttp sessions are created with `trust_env=False`, so they do not look up `.netrc` and the
proxy environment on every request (two thread-pool round trips per request otherwise).
Proxy resolution follows kubectl: the kubeconfig cluster's `proxy-url` wins; otherwise the
environment (`HTTPS_PROXY`/`HTTP_PROXY`, read as urllib reads them) unless `NO_PROXY`
matches the server. `.netrc` is never read (kubectl does not either).

Invariants: both ways raise only `ConnectFailed` (nothing was sent), `ConnectionLost` and
`TimeoutError` for a missing answer; a Transport owns its pools and closes them all.
"""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
from multidict import CIMultiDict

from asyncop.client.config import ClientConfig
from asyncop.client.http1 import ConnectFailed, ConnectionLost, Http1Pool

Params = list[tuple[str, str]]

READ_BUFSIZE = 2**21
"""Watch events of large objects exceed aiohttp's default read buffer (etcd allows 1.5 MiB)."""


def resolve_proxy(config: ClientConfig) -> str | None:
    """The proxy URL for `config.host`: its `proxy_url`, else the environment's, else None."""
    if config.proxy_url:
        return config.proxy_url
    proxies = urllib.request.getproxies_environment()
    parts = urlsplit(config.host)
    proxy = proxies.get(parts.scheme or "http")
    if not proxy:
        return None
    host = parts.netloc.rpartition("@")[2]
    bypass: Any = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    return None if bypass(host, proxies) else proxy


def ssl_context(config: ClientConfig, *, ca_file: str | None, cert_file: str | None,
                key_file: str | None) -> ssl.SSLContext:
    """The TLS context for the cluster: its CA (or the system's), a client certificate."""
    ctx = ssl.create_default_context(cafile=ca_file)
    if cert_file:
        ctx.load_cert_chain(cert_file, keyfile=key_file)
    if not config.verify_ssl:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


class Transport:
    def __init__(self, config: ClientConfig, *, pool_size: int, ca_file: str | None,
                 cert_file: str | None, key_file: str | None) -> None:
        self.host = config.host
        ctx: Any = None
        if config.host.startswith("https:"):
            ctx = ssl_context(config, ca_file=ca_file, cert_file=cert_file, key_file=key_file)
        self._tls: dict[str, Any] = (
            {"server_hostname": config.tls_server_name} if config.tls_server_name else {})

        def session(limit: int) -> aiohttp.ClientSession:
            connector = aiohttp.TCPConnector(limit=limit, ssl=ctx if ctx is not None else True)
            return aiohttp.ClientSession(
                connector=connector, trust_env=False, read_bufsize=READ_BUFSIZE
            )

        self.proxy = resolve_proxy(config)
        self.pool: Http1Pool | None = None
        self.proxied: aiohttp.ClientSession | None = None
        if self.proxy is None:
            self.pool = Http1Pool(config.host, ssl_context=ctx, limit=pool_size,
                                  server_hostname=config.tls_server_name)
        else:
            self.proxied = session(pool_size)
        self.watches = session(0)  # 0: unlimited

    async def call(self, method: str, path: str, params: Params | None,
                   headers: dict[str, str], body: bytes | None, *, timeout: float,
                   ) -> tuple[int, CIMultiDict[str], bytes]:
        """One request; `(status, headers, body)` of the answer, whatever its status."""
        if self.pool is not None:
            target = path + ("?" + urlencode(params, quote_via=quote) if params else "")
            return await self.pool.request(method, target, headers, body, timeout=timeout)
        assert self.proxied is not None
        try:
            async with self.proxied.request(
                method, self.host + path, params=params, data=body, headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout), proxy=self.proxy, **self._tls,
            ) as resp:
                return resp.status, CIMultiDict(resp.headers), await resp.read()
        except TimeoutError:
            raise  # aiohttp's read timeouts are ClientErrors too: a timeout stays one
        except aiohttp.ClientConnectorError as exc:
            raise ConnectFailed(str(exc)) from exc
        except aiohttp.ClientError as exc:
            raise ConnectionLost(f"{method} {path}: {exc!r}") from exc

    @asynccontextmanager
    async def stream(self, path: str, params: Params, headers: dict[str, str], *,
                     connect_timeout: float, read_timeout: float,
                     ) -> AsyncIterator[aiohttp.ClientResponse]:
        """A streaming GET (a watch); the response is released when the block ends."""
        timeout = aiohttp.ClientTimeout(connect=connect_timeout, sock_connect=connect_timeout,
                                        sock_read=read_timeout)
        try:
            async with self.watches.request(
                "GET", self.host + path, params=params, headers=headers, timeout=timeout,
                proxy=self.proxy, **self._tls,
            ) as resp:
                yield resp
        except TimeoutError:
            raise
        except aiohttp.ClientConnectorError as exc:
            raise ConnectFailed(str(exc)) from exc
        except aiohttp.ClientError as exc:
            raise ConnectionLost(f"GET {path}: {exc!r}") from exc

    async def close(self) -> None:
        try:
            if self.pool is not None:
                await self.pool.close()
            if self.proxied is not None:
                await self.proxied.close()
        finally:
            await self.watches.close()
