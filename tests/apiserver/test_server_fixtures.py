"""The pytest fixtures of the test kit: `apiserver` (simulators on) and `kubeconfig`."""

from __future__ import annotations

from pathlib import Path

from kubernetes_asyncio import client as kclient
from kubernetes_asyncio import config as kconfig

from asyncop.apiserver import ApiServer
from asyncop.testing import FakeClock, eventually


async def test_kubeconfig_fixture_reaches_the_simulated_cluster(apiserver: ApiServer,
                                                                kubeconfig: Path) -> None:
    cfg = kclient.Configuration()
    await kconfig.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg,
                                   persist_config=False)
    assert cfg.host == apiserver.url
    async with kclient.ApiClient(cfg) as api:
        v1 = kclient.CoreV1Api(api)
        await v1.create_namespaced_pod("default", {
            "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})

        async def running() -> bool:
            pod = await v1.read_namespaced_pod("p", "default")
            return bool(pod.status.phase == "Running")

        await eventually(running, timeout=10)


def test_fake_clock_fixture(fake_clock: FakeClock) -> None:
    assert fake_clock.monotonic() == 0.0
