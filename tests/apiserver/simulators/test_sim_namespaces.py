"""Namespace deletion: content (built-ins and custom resources) goes first, then the namespace."""

from __future__ import annotations

from typing import Any

from asyncop.testing import eventually
from tests.apiserver.simulators.simkit import Sim, quiesce

CRD_BODY: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                       "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


async def setup_namespace(sim: Sim, name: str) -> None:
    NSRT, CM, D = (sim.rt("", "v1", "namespaces"), sim.rt("", "v1", "configmaps"),
                   sim.rt("apps", "v1", "deployments"))
    await sim.store.create(NSRT, {"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": name}})
    await sim.store.create(CM, {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "cfg", "namespace": name}})
    await sim.store.create(D, {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "app", "namespace": name},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}},
                 "template": {"metadata": {"labels": {"app": "a"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    if sim.store.type_for_kind("example.com/v1", "Widget") is None:
        await sim.store.create(sim.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
                               CRD_BODY)
    W = await eventually(lambda: sim.store.type_for_kind("example.com/v1", "Widget"), timeout=5)
    await sim.store.create(W, {"apiVersion": "example.com/v1", "kind": "Widget",
                               "metadata": {"name": "w1", "namespace": name}, "spec": {}})
    P = sim.rt("", "v1", "pods")
    await eventually(lambda: len(sim.store.list(P, name)) == 2, timeout=5, message="pods")


async def test_namespace_deletion_removes_content_then_namespace(sim: Sim) -> None:
    NSRT = sim.rt("", "v1", "namespaces")
    await setup_namespace(sim, "doomed")
    left = await sim.store.delete(NSRT, None, "doomed")
    assert left is not None and left["status"]["phase"] == "Terminating"
    await eventually(lambda: sim.store.get(NSRT, None, "doomed") is None, timeout=5,
                     message="namespace gone")
    W = sim.store.type_for_kind("example.com/v1", "Widget")
    assert W is not None
    for rt in (W, sim.rt("", "v1", "configmaps"), sim.rt("apps", "v1", "deployments"),
               sim.rt("apps", "v1", "replicasets"), sim.rt("", "v1", "pods")):
        assert sim.store.list(rt, "doomed") == [], rt.plural
    assert sim.store.get(NSRT, None, "default") is not None


async def test_content_with_finalizers_holds_the_namespace(sim: Sim) -> None:
    NSRT = sim.rt("", "v1", "namespaces")
    await setup_namespace(sim, "held")
    W = sim.store.type_for_kind("example.com/v1", "Widget")
    assert W is not None
    w = sim.store.get(W, "held", "w1")
    assert w is not None
    w["metadata"]["finalizers"] = ["example.com/cleanup"]
    await sim.store.update(W, w)
    await sim.store.delete(NSRT, None, "held")

    def reported() -> dict[str, Any] | None:
        ns = sim.store.get(NSRT, None, "held")
        conds = {c["type"]: c for c in (ns or {}).get("status", {}).get("conditions", [])}
        fin = conds.get("NamespaceFinalizersRemaining", {})
        return conds if fin.get("status") == "True" else None

    conds = await eventually(reported, timeout=5, message="conditions reported")
    assert conds["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: widgets.example.com has 1 resource instances")
    assert conds["NamespaceFinalizersRemaining"]["message"] == (
        "Some content in the namespace has finalizers remaining: example.com/cleanup in 1 "
        "resource instances")
    await eventually(lambda: sim.store.list(sim.rt("", "v1", "configmaps"), "held") == [],
                     timeout=5)
    await quiesce()
    ns = sim.store.get(NSRT, None, "held")
    assert ns is not None and ns["status"]["phase"] == "Terminating"
    assert ns["spec"]["finalizers"] == ["kubernetes"]

    w = sim.store.get(W, "held", "w1")
    assert w is not None and w["metadata"]["deletionTimestamp"]
    w["metadata"]["finalizers"] = []
    await sim.store.update(W, w)
    await eventually(lambda: sim.store.get(NSRT, None, "held") is None, timeout=5,
                     message="namespace gone")
