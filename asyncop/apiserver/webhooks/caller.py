"""Calling a webhook: where it is, trusting its certificate, the POST and its failures.

A webhook is reached at its `url`, or through a `service` reference. A service reference is
resolved the way kube-apiserver does with endpoint routing: the Service's port (by number)
gives the target port, and the Service's Endpoints give the address — so a webhook server
running outside the cluster (an operator on a developer's machine) is reached by creating a
Service without a selector plus an Endpoints object pointing at it, as on a real cluster. The
TLS server name is then `<service>.<namespace>.svc`. The caBundle, when set, is the only
trust root; without it the system's roots are used.

Invariants: every failure to get a well-formed answer is a `CallFailed` whose text is kube's
(`failed to call webhook: Post "<url>?timeout=10s": …`); the HTTP timeout is the webhook's
timeoutSeconds; one aiohttp session per API server, closed with it.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from asyncop.apiserver.core.webhookconfig import ServiceRef

if TYPE_CHECKING:
    from asyncop.apiserver.storage.store import Store

SERVICES_GR = ("", "services")
ENDPOINTS_GR = ("", "endpoints")


class CallFailed(Exception):
    """The webhook could not be called or gave no usable answer (kube's wording)."""


class Caller:
    """POSTs review objects to webhooks; owns the session and the per-CA TLS contexts."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[bytes | None, ssl.SSLContext] = {}

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def _context(self, ca_bundle: bytes | None) -> ssl.SSLContext:
        context = self._contexts.get(ca_bundle)
        if context is None:
            if ca_bundle:
                context = ssl.create_default_context(cadata=ca_bundle.decode("ascii", "replace"))
            else:
                context = ssl.create_default_context()
            self._contexts[ca_bundle] = context
        return context

    def _target(self, *, url: str | None, service: ServiceRef | None,
                ) -> tuple[str, str, str | None]:
        """(URL to connect to, URL as kube names it in errors, TLS server name)."""
        if url is not None:
            return url, url, None
        assert service is not None
        shown = f"https://{service.name}.{service.namespace}.svc:{service.port}{service.path}"
        address = self._resolve(service, shown)
        return f"https://{address}{service.path}", shown, \
            f"{service.name}.{service.namespace}.svc"

    def _resolve(self, ref: ServiceRef, shown: str) -> str:
        svc = self.store.raw_get(SERVICES_GR, ref.namespace, ref.name)
        if svc is None:
            raise CallFailed(f'failed to call webhook: service "{ref.name}" not found')
        port_spec = next((p for p in (svc.get("spec") or {}).get("ports") or ()
                          if isinstance(p, dict) and int(p.get("port") or 0) == ref.port), None)
        if port_spec is None:
            raise CallFailed(f"failed to call webhook: service {ref.namespace}/{ref.name}: no "
                             f"service port {ref.port} found")
        target = port_spec.get("targetPort", ref.port)
        endpoints = self.store.raw_get(ENDPOINTS_GR, ref.namespace, ref.name) or {}
        for subset in endpoints.get("subsets") or ():
            ports = [p for p in subset.get("ports") or () if isinstance(p, dict)]
            chosen = next((p for p in ports if p.get("name") == port_spec.get("name")
                           or p.get("port") == target), ports[0] if len(ports) == 1 else None)
            for address in subset.get("addresses") or ():
                ip = address.get("ip")
                if ip and chosen is not None:
                    host = f"[{ip}]" if ":" in str(ip) else str(ip)
                    return f"{host}:{int(chosen['port'])}"
        raise CallFailed(f'failed to call webhook: Post "{shown}?timeout=10s": no endpoints '
                         f"available for service \"{ref.name}\"")

    async def post(self, *, url: str | None, service: ServiceRef | None,
                   ca_bundle: bytes | None, timeout: float, body: dict[str, Any],
                   ) -> dict[str, Any]:
        """POST `body`; the decoded JSON answer, or CallFailed."""
        connect_url, shown, server_name = self._target(url=url, service=service)
        shown_q = f"{shown}?timeout={int(timeout)}s"
        if self._session is None:
            self._session = aiohttp.ClientSession(trust_env=False)
        try:
            async with self._session.post(
                    connect_url, data=orjson.dumps(body),
                    params={"timeout": f"{int(timeout)}s"},
                    headers={"Content-Type": "application/json",
                             "Accept": "application/json, */*"},
                    ssl=self._context(ca_bundle), server_hostname=server_name,
                    timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                raw = await response.read()
                if response.status != 200:
                    raise CallFailed(f"failed to call webhook: an error on the server "
                                     f"({raw.decode('utf-8', 'replace')[:200].strip()}) has "
                                     f"prevented the request from succeeding")
        except TimeoutError as exc:
            raise CallFailed(f'failed to call webhook: Post "{shown_q}": context deadline '
                             "exceeded") from exc
        except aiohttp.ClientConnectorCertificateError as exc:
            raise CallFailed(f'failed to call webhook: Post "{shown_q}": tls: failed to '
                             f"verify certificate: {exc.certificate_error}") from exc
        except aiohttp.ClientConnectorError as exc:
            raise CallFailed(f'failed to call webhook: Post "{shown_q}": dial tcp '
                             f"{exc.host}:{exc.port}: connect: connection refused") from exc
        except aiohttp.ClientError as exc:
            raise CallFailed(f'failed to call webhook: Post "{shown_q}": {exc}') from exc
        try:
            answer = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise CallFailed(f"received invalid webhook response: {exc}") from exc
        if not isinstance(answer, dict):
            raise CallFailed("received invalid webhook response: not a JSON object")
        return answer


__all__ = ["CallFailed", "Caller"]
