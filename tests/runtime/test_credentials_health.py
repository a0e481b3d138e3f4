"""Credentials that start failing mid-run are said loudly (client/authhealth.py).

Regression (adversarial review): when every list and watch started answering 401, the
operator logged warnings with back-off up to 27 s and /readyz stayed 200. Now: one ERROR
line naming the credential source and the status, `asyncop_client_credentials_failing` 1,
and /readyz failing until a request succeeds again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from structlog.testing import capture_logs

from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.client.authhealth import FAILING_AFTER, AuthHealth
from asyncop.runtime.manager import Manager
from asyncop.testing import FakeClock, eventually
from tests.runtime.test_manager import stamping_controller


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


async def test_a_401_storm_fails_readyz_logs_one_error_and_recovers(server: ApiServer) -> None:
    clock = FakeClock()
    config = ClientConfig(host=server.url, token="t0ken", source="kubeconfig /tmp/kc",
                          context="ops")
    async with Client(config, max_retries=0, clock=clock) as client:
        mgr = Manager(client=client, clock=clock, health_probe_bind_address="127.0.0.1:0",
                      metrics_bind_address="127.0.0.1:0")
        mgr.add(stamping_controller(mgr))
        async with mgr, aiohttp.ClientSession() as http:
            ready = f"http://127.0.0.1:{mgr.health_port}/readyz?verbose"
            metrics = f"http://127.0.0.1:{mgr.metrics_port}/metrics"

            async def readyz() -> tuple[int, str]:
                async with http.get(ready) as r:
                    return r.status, await r.text()

            async def gauge() -> str:
                async with http.get(metrics) as r:
                    text = await r.text()
                return next(line for line in text.splitlines()
                            if line.startswith("asyncop_client_credentials_failing "))

            await eventually(lambda: mgr.cache.has_synced)
            assert (await readyz())[0] == 200
            server.faults.fail(status=401, count=None, reason="Unauthorized",
                               message="Unauthorized")
            with capture_logs() as logs:
                server.faults.cut_watches()

                async def failing() -> bool:
                    if client.auth.failing:
                        return True
                    await clock.advance(5)  # the informer's back-off, on virtual time
                    return False

                await eventually(failing, timeout=20)
                status, text = await readyz()
                assert status == 500 and "[-]credentials failed" in text
                assert "kubeconfig /tmp/kc" in text and "401" in text
                assert await gauge() == "asyncop_client_credentials_failing 1.0"
                for _ in range(5):  # more failed retries: still one ERROR line
                    await clock.advance(30)
            errors = [e for e in logs if e["log_level"] == "error"]
            assert [e["event"] for e in errors] == [
                "API server rejects the operator's credentials"]
            assert errors[0]["code"] == 401
            assert errors[0]["credentials"] == "kubeconfig /tmp/kc, context 'ops', bearer token"
            server.faults.clear()

            async def recovered() -> bool:
                if not client.auth.failing:
                    return True
                await clock.advance(5)
                return False

            await eventually(recovered, timeout=20)
            assert (await readyz())[0] == 200
            assert await gauge() == "asyncop_client_credentials_failing 0.0"
            await client.create(CONFIGMAP, {"metadata": {"name": "after",
                                                         "namespace": "default"}})


def test_a_single_forbidden_request_among_successes_is_not_failing() -> None:
    health = AuthHealth(ClientConfig(host="http://x", source="in-cluster",
                                     token_file="/var/run/token"))
    for _ in range(10):
        health.rejected(403, verb="GET", path="/api/v1/secrets")
        health.accepted()
    assert not health.failing and health.rejections[403] == 10
    for _ in range(FAILING_AFTER):
        health.rejected(403, verb="GET", path="/api/v1/secrets")
    assert health.failing and health.source == "in-cluster, token file /var/run/token"
