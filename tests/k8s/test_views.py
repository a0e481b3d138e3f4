"""Typed views of built-in objects against the embedded API server: a Deployment built from
asyncop.k8s classes is created through the Client (`to_raw()`), read back typed with
`parse`, found in a live Cache with `from_cache`, and a view's `raw` is the cached dict
itself (the hot path keeps raw dicts; a view is made on request).

kube: the server stores and defaults the Deployment (apps/v1 SetDefaults_Deployment: replicas
1, strategy RollingUpdate 25%/25%, a container's terminationMessagePath, ...), and a typed
view reads those defaults like any other field.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from asyncop.api import Request
from asyncop.api.kinds import DEPLOYMENT
from asyncop.apiserver import ApiServer
from asyncop.client import Client, load_config
from asyncop.clock import RealClock
from asyncop.k8s import (
    Container,
    ContainerPort,
    Deployment,
    DeploymentSpec,
    LabelSelector,
    ObjectMeta,
    PodSpec,
    PodTemplateSpec,
    ResourceRequirements,
)
from asyncop.runtime.cache import Cache


@pytest.fixture
async def client(apiserver_no_sim: ApiServer) -> AsyncIterator[Client]:
    async with Client(await load_config(url=apiserver_no_sim.url), max_retries=0) as c:
        yield c


def web(name: str) -> Deployment:
    labels = {"app": name}
    return Deployment(
        metadata=ObjectMeta(name=name, namespace="default", labels=labels),
        spec=DeploymentSpec(
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(
                    name="web", image="nginx:1.27",
                    ports=[ContainerPort(container_port=8080, name="http")],
                    resources=ResourceRequirements(limits={"cpu": "500m"}))]))))


def test_to_raw_writes_what_was_set_with_wire_names_and_the_kind() -> None:
    raw = web("a").to_raw()
    assert list(raw)[:2] == ["apiVersion", "kind"]
    assert (raw["apiVersion"], raw["kind"]) == ("apps/v1", "Deployment")
    assert raw["spec"]["template"]["spec"]["containers"] == [{
        "image": "nginx:1.27", "name": "web",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "resources": {"limits": {"cpu": "500m"}}}]
    assert raw["metadata"] == {"labels": {"app": "a"}, "name": "a", "namespace": "default"}
    parsed = Deployment.parse(raw)
    assert parsed.spec == web("a").spec and parsed.metadata == web("a").metadata
    assert parsed == Deployment.model_validate(raw)  # the raw a view came from does not count
    assert parsed.to_raw() == raw


async def test_create_typed_read_typed_and_from_a_live_cache(client: Client) -> None:
    created = await client.create(DEPLOYMENT, web("shop").to_raw())
    typed = Deployment.parse(created)
    assert typed.metadata is not None and typed.metadata.uid and typed.metadata.generation == 1
    assert typed.spec is not None and typed.spec.replicas == 1  # defaulted by the server
    container = typed.spec.template.spec.containers[0] if typed.spec.template.spec else None
    assert container is not None and container.termination_message_path == "/dev/termination-log"
    assert container.ports is not None and container.ports[0].protocol == "TCP"

    cache = Cache(client, clock=RealClock())
    cache.informer(DEPLOYMENT)
    await cache.start()
    try:
        await asyncio.wait_for(cache.wait_for_sync(), 10)
        found = Deployment.from_cache(cache, Request("shop", "default"))
        assert found is not None and found.raw is cache.get(DEPLOYMENT, "shop", "default")
        assert found.metadata is not None and found.metadata.name == "shop"
        assert Deployment.from_cache(cache, "shop", "default") == found
        assert Deployment.from_cache(cache, "nope", "default") is None
    finally:
        await cache.stop()
