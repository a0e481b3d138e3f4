"""crdkind controller, end to end on the embedded API server."""

from __future__ import annotations

from typing import Any

import pytest

from asyncop.api import Invalid, RawObject
from asyncop.api.kinds import DEPLOYMENT, SERVICE
from asyncop.controllers.crdkind import crdkind_controller
from asyncop.controllers.kinds import CRDKIND
from asyncop.testing import eventually
from tests.controllers.ctlenv import NS, Cluster


def _ck(name: str, spec: dict[str, Any]) -> RawObject:
    return {"apiVersion": "iksoon.test.com/v1", "kind": "CrdKind",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


async def _names(cluster: Cluster) -> tuple[list[str], list[str]]:
    deps = sorted(d["metadata"]["name"] for d in await cluster.items(DEPLOYMENT))
    svcs = sorted(s["metadata"]["name"] for s in await cluster.items(SERVICE)
                  if s["metadata"]["name"] != "kubernetes")
    return deps, svcs


async def test_seed_example_gets_a_mysql_deployment_and_nodeport_service(
    cluster: Cluster,
) -> None:
    async with cluster.manager(crdkind_controller):
        ck = await cluster.client.create(CRDKIND, _ck("iksoon-crd-test",
                                                      {"choice": "mysql", "replicas": 1}))
        dep = await cluster.wait(DEPLOYMENT, "iksoon-crd-test-mysql", lambda d: True)
        assert dep["spec"]["replicas"] == 1
        (container,) = dep["spec"]["template"]["spec"]["containers"]
        assert container["image"] == "mysql:8.4"
        svc = await cluster.wait(SERVICE, "iksoon-crd-test-mysql",
                                 lambda s: s["spec"]["ports"][0].get("nodePort"))
        assert svc["spec"]["type"] == "NodePort"
        assert svc["spec"]["ports"][0]["port"] == 3306
        assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
        assert svc["spec"]["selector"] == dep["spec"]["template"]["metadata"]["labels"]
        for child in (dep, svc):
            (ref,) = child["metadata"]["ownerReferences"]
            assert ref["uid"] == ck["metadata"]["uid"] and ref["controller"]
            assert ref["blockOwnerDeletion"]
        ck = await cluster.wait(CRDKIND, "iksoon-crd-test",
                                lambda o: o.get("status", {}).get("readyReplicas") == 1)
        status = ck["status"]
        assert status["deployment"] == status["service"] == "iksoon-crd-test-mysql"
        assert status["nodePort"] == svc["spec"]["ports"][0]["nodePort"]
        assert status["observedGeneration"] == 1
        (ready,) = status["conditions"]
        assert ready["type"] == "Ready" and ready["status"] == "True"


async def test_choice_change_replaces_and_replicas_scale(cluster: Cluster) -> None:
    async with cluster.manager(crdkind_controller):
        await cluster.client.create(CRDKIND, _ck("app", {"choice": "mysql", "replicas": 1}))
        await cluster.wait(SERVICE, "app-mysql", lambda s: True)
        await cluster.client.patch(CRDKIND, "app", {"spec": {"choice": "tomcat"}}, namespace=NS)
        await eventually(lambda: _has(cluster, ["app-tomcat"]), timeout=10)
        svc = await cluster.wait(SERVICE, "app-tomcat", lambda s: True)
        assert svc["spec"]["ports"][0]["port"] == 8080
        dep = await cluster.wait(DEPLOYMENT, "app-tomcat", lambda d: True)
        assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "tomcat:10"

        await cluster.client.patch(CRDKIND, "app", {"spec": {"replicas": 4}}, namespace=NS)
        await cluster.wait(DEPLOYMENT, "app-tomcat", lambda d: d["spec"]["replicas"] == 4)
        ck = await cluster.wait(CRDKIND, "app",
                                lambda o: o["status"].get("readyReplicas") == 4)
        assert ck["status"]["deployment"] == "app-tomcat"
        assert ck["status"]["observedGeneration"] == 3
        # Idempotent: nothing else appears however often it reconciles.
        await cluster.idle("crdkind")
        assert await _names(cluster) == (["app-tomcat"], ["app-tomcat"])


async def _has(cluster: Cluster, names: list[str]) -> bool:
    return await _names(cluster) == (names, names)


async def test_schema_rejects_bad_choice_and_replicas_with_the_field(cluster: Cluster) -> None:
    with pytest.raises(Invalid) as err:
        await cluster.client.create(CRDKIND, _ck("bad", {"choice": "postgres", "replicas": 1}))
    assert any(c.get("field") == "spec.choice" for c in err.value.causes)
    with pytest.raises(Invalid) as err:
        await cluster.client.create(CRDKIND, _ck("bad", {"choice": "mysql", "replicas": 11}))
    assert any(c.get("field") == "spec.replicas" for c in err.value.causes)


async def test_missing_choice_is_reported_and_deletion_collects_children(
    cluster: Cluster,
) -> None:
    async with cluster.manager(crdkind_controller):
        await cluster.client.create(CRDKIND, _ck("nochoice", {"replicas": 2}))
        ck = await cluster.wait(CRDKIND, "nochoice", lambda o: o.get("status", {}).get("message"))
        assert "spec.choice" in ck["status"]["message"]
        assert ck["status"]["conditions"][0]["status"] == "False"
        await eventually(lambda: cluster.events("nochoice", "InvalidSpec"), timeout=10)
        await cluster.idle("crdkind")
        assert await _names(cluster) == ([], [])

        await cluster.client.patch(CRDKIND, "nochoice", {"spec": {"choice": "tomcat"}},
                                   namespace=NS)
        await eventually(lambda: _has(cluster, ["nochoice-tomcat"]), timeout=10)
        await cluster.client.delete(CRDKIND, "nochoice", namespace=NS)
        await eventually(lambda: _has(cluster, []), timeout=10)


async def test_foreign_service_blocks_until_it_is_gone(cluster: Cluster) -> None:
    foreign: RawObject = {"apiVersion": "v1", "kind": "Service",
                          "metadata": {"name": "db-mysql", "namespace": NS},
                          "spec": {"ports": [{"port": 1}], "selector": {"x": "y"}}}
    await cluster.client.create(SERVICE, foreign)
    async with cluster.manager(crdkind_controller):
        await cluster.client.create(CRDKIND, _ck("db", {"choice": "mysql", "replicas": 1}))
        ck = await cluster.wait(CRDKIND, "db", lambda o: "not managed" in o.get(
            "status", {}).get("message", ""))
        assert ck["status"]["conditions"][0]["reason"] == "ErrResourceExists"
        await eventually(lambda: cluster.events("db", "ErrResourceExists"), timeout=10)
        await cluster.idle("crdkind")
        svc = await cluster.get(SERVICE, "db-mysql")
        assert svc is not None and svc["spec"]["ports"][0]["port"] == 1
        await cluster.client.delete(SERVICE, "db-mysql", namespace=NS)
        svc = await cluster.wait(SERVICE, "db-mysql",
                                 lambda s: bool(s["metadata"].get("ownerReferences")))
        assert svc["spec"]["ports"][0]["port"] == 3306
        await cluster.wait(CRDKIND, "db", lambda o: o["status"].get("service") == "db-mysql")
