"""Transport: the aiohttp sessions the Client talks through, built once from a ClientConfig.

Everything that does not change between requests is decided here, once, when the Client
opens: the TLS context (cluster CA, client certificate, verification), the connection pool
size, and the HTTP proxy. The sessions are created with `trust_env=False`, so aiohttp does
not look up `.netrc` and the proxy environment again on every request (two thread-pool round
trips per request with `trust_env=True`, about a tenth of an operator's CPU).

Proxy resolution follows kubectl: the kubeconfig cluster's `proxy-url` wins; otherwise the
environment (`HTTPS_PROXY`/`HTTP_PROXY`, either case, by the server URL's scheme) unless
`NO_PROXY` matches the server's host. `.netrc` is never read (kubectl does not either).

Unary calls go through `Http1Pool` (asyncop.client.http1), a lean HTTP/1.1 keep-alive client,
unless a proxy is configured; watches always stream through aiohttp.

Invariants: a Transport owns its sessions and pools and closes them all; `proxy` is None or
one URL used for every request of both sessions (and then `fast` is None).
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from asyncop.client.config import ClientConfig
from asyncop.client.http1 import Http1Pool

READ_BUFSIZE = 2**21
"""Watch events of large objects exceed aiohttp's default read buffer (etcd allows 1.5 MiB)."""


def resolve_proxy(config: ClientConfig, environ: Mapping[str, str] | None = None) -> str | None:
    """The proxy URL for `config.host`: its `proxy_url`, else the environment's, else None."""
    if config.proxy_url:
        return config.proxy_url
    proxies = _proxies_from(os.environ if environ is None else environ)
    parts = urlsplit(config.host)
    scheme = parts.scheme or "http"
    proxy = proxies.get(scheme)
    if not proxy:
        return None
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    if _bypassed(host, proxies):
        return None
    return proxy


def _proxies_from(environ: Mapping[str, str]) -> dict[str, str]:
    """What `urllib.request.getproxies_environment` reads, from `environ`: scheme → URL."""
    proxies: dict[str, str] = {}
    for name, value in environ.items():
        key = name.lower()
        if value and key.endswith("_proxy"):
            proxies.setdefault(key[: -len("_proxy")], value)
    for name, value in environ.items():  # lowercase wins, as in urllib
        if name.islower() and value and name.endswith("_proxy"):
            proxies[name[: -len("_proxy")]] = value
    return proxies


def _bypassed(host: str, proxies: dict[str, str]) -> bool:
    """NO_PROXY as curl and urllib read it: `*`, or names matching the host or a parent
    domain (a leading dot is optional), with or without the port."""
    entries = [e.strip().lower() for e in proxies.get("no", "").split(",") if e.strip()]
    if "*" in entries:
        return True
    host = host.lower()
    hostonly = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    for entry in entries:
        name = entry.lstrip(".")
        if name in (host, hostonly) or host.endswith("." + name) or \
                hostonly.endswith("." + name):
            return True
    return False


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


@dataclass(slots=True)
class Transport:
    """Two sessions (calls with a bounded pool, watches unbounded), the proxy to use, and
    the lean HTTP/1.1 pool that carries unary calls when there is no proxy."""

    calls: aiohttp.ClientSession
    watches: aiohttp.ClientSession
    proxy: str | None
    fast: Http1Pool | None = None

    @classmethod
    def open(cls, config: ClientConfig, *, pool_size: int, ca_file: str | None,
             cert_file: str | None, key_file: str | None) -> Transport:
        ctx: Any = None
        if config.host.startswith("https:"):
            ctx = ssl_context(config, ca_file=ca_file, cert_file=cert_file, key_file=key_file)

        def session(limit: int) -> aiohttp.ClientSession:
            connector = aiohttp.TCPConnector(limit=limit, ssl=ctx if ctx is not None else True)
            return aiohttp.ClientSession(
                connector=connector, trust_env=False, read_bufsize=READ_BUFSIZE
            )

        proxy = resolve_proxy(config)
        fast = None
        if proxy is None:
            fast = Http1Pool(config.host, ssl_context=ctx, limit=pool_size,
                             server_hostname=config.tls_server_name)
        return cls(calls=session(pool_size), watches=session(0), proxy=proxy, fast=fast)

    async def close(self) -> None:
        try:
            if self.fast is not None:
                await self.fast.close()
            await self.calls.close()
        finally:
            await self.watches.close()

    @property
    def closed(self) -> bool:
        return self.calls.closed and self.watches.closed
