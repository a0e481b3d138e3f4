"""Secure metrics: /metrics and /debug/reconciles over HTTPS, for callers the API server
authenticates (TokenReview) and RBAC allows (SubjectAccessReview on the non-resource path).

The embedded API server runs in its RBAC mode, which answers both reviews truthfully for
its users; the wording of each refusal is controller-runtime's
(`filters.WithAuthenticationAndAuthorization`, pkg/metrics/filters), and its caches mean a
second scrape costs no review.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from asyncop.apiserver.http.rbac import ADMIN_RULES, Authorizer, Subject, rules
from asyncop.client import ClientConfig
from asyncop.runtime.manager import Manager
from asyncop.runtime.metricsauth import MetricsAuth

SCRAPER = rules([{"nonResourceURLs": ["/metrics", "/debug/reconciles"], "verbs": ["get"]}])
METRICS_ONLY = rules([{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    authz = Authorizer({
        "operator-token": Subject("system:serviceaccount:ops:asyncop", ADMIN_RULES),
        "scraper-token": Subject("prometheus", SCRAPER),
        "metrics-token": Subject("grafana", METRICS_ONLY),
        "nobody-token": Subject("nobody", ()),
    })
    async with ApiServer(simulators=False, authorizer=authz) as srv:
        yield srv


@pytest.fixture
async def mgr(server: ApiServer) -> AsyncIterator[Manager]:
    cfg = ClientConfig(host=server.url, token="operator-token")
    async with Manager(config=cfg, metrics_bind_address="0.0.0.0:0", metrics_secure=True,
                       health_probe_bind_address="127.0.0.1:0", debug_endpoints=True) as m:
        yield m


async def get(mgr: Manager, path: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"https://127.0.0.1:{mgr.metrics_port}{path}"
    async with aiohttp.ClientSession() as s, s.get(url, headers=headers, ssl=False) as resp:
        return resp.status, await resp.text()


async def test_who_may_read_metrics_and_debug(mgr: Manager) -> None:
    # a secured endpoint may listen on every interface, the debug endpoint included
    assert await get(mgr, "/metrics") == (401, "Unauthorized\n")
    assert await get(mgr, "/metrics", "wrong-token") == (401, "Unauthorized\n")
    assert await get(mgr, "/metrics", "nobody-token") == (
        403, "Authorization denied for user nobody\n")
    status, text = await get(mgr, "/metrics", "scraper-token")
    assert status == 200 and "asyncop_client_credentials_failing 0.0" in text
    status, text = await get(mgr, "/debug/reconciles", "scraper-token")
    assert status == 200 and '"controllers"' in text
    assert (await get(mgr, "/metrics", "metrics-token"))[0] == 200
    assert await get(mgr, "/debug/reconciles", "metrics-token") == (
        403, "Authorization denied for user grafana\n")


async def test_reviews_are_cached(mgr: Manager) -> None:
    auth = mgr._server._authorize
    assert isinstance(auth, MetricsAuth)
    assert (await get(mgr, "/metrics", "scraper-token"))[0] == 200
    sent = auth.reviews
    assert sent == 2  # one TokenReview, one SubjectAccessReview
    for _ in range(3):
        assert (await get(mgr, "/metrics", "scraper-token"))[0] == 200
    assert auth.reviews == sent


async def test_probes_stay_plain_http_and_open(mgr: Manager) -> None:
    url = f"http://127.0.0.1:{mgr.health_port}/healthz"
    async with aiohttp.ClientSession() as s, s.get(url) as resp:
        assert resp.status in (200, 500)  # answered, without a token


def test_secure_metrics_need_their_own_address() -> None:
    cfg = ClientConfig(host="http://127.0.0.1:1")
    with pytest.raises(ValueError, match="give the health probes an address of their own"):
        Manager(config=cfg, metrics_bind_address=":8080", health_probe_bind_address=":8080",
                metrics_secure=True)
