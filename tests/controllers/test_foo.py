"""foo controller (sample-controller contract), end to end on the embedded API server."""

from __future__ import annotations

from typing import Any

from asyncop.api import RawObject, Request
from asyncop.api.kinds import DEPLOYMENT
from asyncop.controllers.foo import foo_controller
from asyncop.controllers.kinds import FOO
from asyncop.testing import eventually
from tests.controllers.ctlenv import NS, Cluster


def _foo(name: str, spec: dict[str, Any]) -> RawObject:
    return {"apiVersion": FOO.api_version, "kind": FOO.kind,
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


def _replicas(n: int) -> Any:
    return lambda d: d["spec"]["replicas"] == n


async def test_example_foo_gets_its_deployment_and_status(cluster: Cluster) -> None:
    async with cluster.manager(foo_controller):
        foo = await cluster.client.create(
            FOO, _foo("example-foo", {"deploymentName": "example-foo", "replicas": 1}))
        dep = await cluster.wait(DEPLOYMENT, "example-foo", lambda d: True)
        labels = {"app": "nginx", "controller": "example-foo"}
        assert dep["spec"]["selector"]["matchLabels"] == labels
        assert dep["spec"]["template"]["metadata"]["labels"] == labels
        assert dep["spec"]["template"]["spec"]["containers"][0]["image"].startswith("nginx")
        (ref,) = dep["metadata"]["ownerReferences"]
        assert ref["uid"] == foo["metadata"]["uid"]
        assert ref["controller"] and ref["blockOwnerDeletion"]
        # The deployment simulator makes the replica available; the Foo mirrors it.
        done = await cluster.wait(FOO, "example-foo",
                                  lambda f: f.get("status", {}).get("availableReplicas") == 1)
        assert done["status"]["observedGeneration"] == 1
        synced = await eventually(lambda: cluster.events("example-foo", "Synced"), timeout=10)
        assert synced[0]["type"] == "Normal"
        assert synced[0]["message"] == "Foo synced successfully"


async def test_scaling_and_drift_are_fixed(cluster: Cluster) -> None:
    async with cluster.manager(foo_controller):
        await cluster.client.create(FOO, _foo("scale", {"deploymentName": "web", "replicas": 1}))
        await cluster.wait(DEPLOYMENT, "web", _replicas(1))
        await cluster.client.patch(FOO, "scale", {"spec": {"replicas": 3}}, namespace=NS)
        await cluster.wait(DEPLOYMENT, "web", _replicas(3))
        await cluster.wait(FOO, "scale", lambda f: f["status"].get("availableReplicas") == 3)
        # Someone scales the Deployment by hand: the Foo puts it back.
        await cluster.client.patch(DEPLOYMENT, "web", {"spec": {"replicas": 7}}, namespace=NS)
        await cluster.wait(DEPLOYMENT, "web", _replicas(3))
        await cluster.client.patch(FOO, "scale", {"spec": {"replicas": 2}}, namespace=NS)
        await cluster.wait(DEPLOYMENT, "web", _replicas(2))


async def test_foreign_deployment_is_left_alone_and_reported(cluster: Cluster) -> None:
    foreign: RawObject = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "taken", "namespace": NS},
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "other"}},
                 "template": {"metadata": {"labels": {"app": "other"}},
                              "spec": {"containers": [{"name": "c", "image": "other"}]}}},
    }
    created = await cluster.client.create(DEPLOYMENT, foreign)
    async with cluster.manager(foo_controller):
        await cluster.client.create(FOO, _foo("f", {"deploymentName": "taken", "replicas": 1}))
        message = 'Resource "taken" already exists and is not managed by Foo'
        await cluster.wait(FOO, "f", lambda f: f.get("status", {}).get("message") == message)
        events = await eventually(lambda: cluster.events("f", "ErrResourceExists"), timeout=10)
        assert events[0]["type"] == "Warning" and events[0]["message"] == message
        await cluster.idle("foo")
        dep = await cluster.get(DEPLOYMENT, "taken")
        assert dep is not None
        assert dep["spec"]["replicas"] == 5 and not dep["metadata"].get("ownerReferences")
        assert dep["metadata"]["uid"] == created["metadata"]["uid"]
        # The foreign Deployment goes away: the Foo takes the name.
        await cluster.client.delete(DEPLOYMENT, "taken", namespace=NS)
        dep = await cluster.wait(DEPLOYMENT, "taken",
                                 lambda d: bool(d["metadata"].get("ownerReferences")))
        assert dep["spec"]["replicas"] == 1


async def test_missing_deployment_name_is_reported_without_retries(cluster: Cluster) -> None:
    async with cluster.manager(foo_controller):
        await cluster.client.create(FOO, _foo("nameless", {"replicas": 2}))
        foo = await cluster.wait(FOO, "nameless", lambda f: f.get("status", {}).get("message"))
        assert "deploymentName" in foo["status"]["message"]
        events = await eventually(lambda: cluster.events("nameless", "InvalidSpec"), timeout=10)
        assert events[0]["type"] == "Warning"
        await cluster.clock.advance(300)
        await cluster.idle("foo")
        queue = cluster.controllers["foo"].queue
        assert queue is not None and queue.num_requeues(Request("nameless", "default")) == 0
        assert not queue.delayed
        assert await cluster.items(DEPLOYMENT) == []
        # Fixing the spec lets it proceed.
        await cluster.client.patch(FOO, "nameless", {"spec": {"deploymentName": "named"}},
                                   namespace=NS)
        await cluster.wait(DEPLOYMENT, "named", _replicas(2))
        await cluster.wait(FOO, "nameless", lambda f: "message" not in f["status"])


async def test_renaming_replaces_and_deleting_collects_the_deployment(cluster: Cluster) -> None:
    async with cluster.manager(foo_controller):
        await cluster.client.create(FOO, _foo("r", {"deploymentName": "one", "replicas": 1}))
        await cluster.wait(DEPLOYMENT, "one", lambda d: True)
        await cluster.client.patch(FOO, "r", {"spec": {"deploymentName": "two"}}, namespace=NS)
        await cluster.wait(DEPLOYMENT, "two", lambda d: True)
        await eventually(lambda: _names(cluster, ["two"]), timeout=10)
        await cluster.client.delete(FOO, "r", namespace=NS)
        await eventually(lambda: _names(cluster, []), timeout=10)


async def _names(cluster: Cluster, expected: list[str]) -> bool:
    return sorted(d["metadata"]["name"] for d in await cluster.items(DEPLOYMENT)) == expected
