"""ownerReference garbage collection: background, foreground, orphan, uid identity."""

from __future__ import annotations

from typing import Any

from asyncop.testing import eventually
from tests.apiserver.crdkit import simple_crd
from tests.apiserver.simulators.simkit import Sim, quiesce

NS = "default"


def cm(name: str, *owners: dict[str, Any], block: bool = True,
       finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if owners:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"], "blockOwnerDeletion": block} for o in owners]
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": name}}


def deployment(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def make(sim: Sim, name: str, *owners: dict[str, Any], **kw: Any) -> dict[str, Any]:
    obj: dict[str, Any] = await sim.store.create(sim.rt("", "v1", "configmaps"),
                                                 cm(name, *owners, **kw))
    return obj


def get(sim: Sim, name: str) -> dict[str, Any] | None:
    return sim.store.get(sim.rt("", "v1", "configmaps"), NS, name)


async def gone(sim: Sim, *names: str) -> None:
    await eventually(lambda: all(get(sim, n) is None for n in names), timeout=5,
                     message=f"{names} collected")


async def test_background_collects_dependents_whose_owners_are_all_gone(sim: Sim) -> None:
    CM = sim.rt("", "v1", "configmaps")
    owner = await make(sim, "owner")
    other = await make(sim, "other")
    child = await make(sim, "child", owner)
    await make(sim, "grandchild", child)
    await make(sim, "shared", owner, other)
    await sim.store.delete(CM, NS, "owner")
    await gone(sim, "child", "grandchild")
    shared = get(sim, "shared")
    assert shared is not None
    await eventually(lambda: [r["name"] for r in (get(sim, "shared") or {})["metadata"]
                              .get("ownerReferences", [])] == ["other"], timeout=5,
                     message="dangling reference removed")
    assert get(sim, "other") is not None


async def test_owner_with_same_name_but_other_uid_counts_as_gone(sim: Sim) -> None:
    CM = sim.rt("", "v1", "configmaps")
    owner = await make(sim, "reborn")
    await make(sim, "kept", owner)
    await sim.store.delete(CM, NS, "reborn")
    await make(sim, "reborn")  # same name, new uid
    await gone(sim, "kept")
    assert get(sim, "reborn") is not None


async def test_dependent_created_with_dangling_owner_is_collected(sim: Sim) -> None:
    fake_owner = {"metadata": {"name": "ghost", "uid": "00000000-0000-4000-8000-000000000000"}}
    await make(sim, "orphaned", fake_owner)
    await gone(sim, "orphaned")


async def test_foreground_deletes_dependents_first_then_owner(sim: Sim) -> None:
    CM = sim.rt("", "v1", "configmaps")
    owner = await make(sim, "fg")
    await make(sim, "blocker", owner, finalizers=["example.com/hold"])
    await make(sim, "plain", owner)
    left = await sim.store.delete(CM, NS, "fg", propagation_policy="Foreground")
    assert left is not None and "foregroundDeletion" in left["metadata"]["finalizers"]
    await gone(sim, "plain")

    def blocker_deleting() -> bool:
        b = get(sim, "blocker")
        return bool(b and b["metadata"].get("deletionTimestamp"))

    await eventually(blocker_deleting, timeout=5, message="blocker marked for deletion")
    await quiesce()
    fg = get(sim, "fg")
    assert fg is not None and fg["metadata"]["deletionTimestamp"]  # still waiting
    blocker = get(sim, "blocker")
    assert blocker is not None
    blocker["metadata"]["finalizers"] = []
    await sim.store.update(CM, blocker)
    await gone(sim, "fg", "blocker")


async def test_foreground_is_not_blocked_by_non_blocking_dependents(sim: Sim) -> None:
    CM = sim.rt("", "v1", "configmaps")
    owner = await make(sim, "fg2")
    await make(sim, "lazy", owner, block=False, finalizers=["example.com/hold"])
    await sim.store.delete(CM, NS, "fg2", propagation_policy="Foreground")
    await gone(sim, "fg2")
    lazy = get(sim, "lazy")
    assert lazy is not None and lazy["metadata"]["deletionTimestamp"]


async def test_orphan_keeps_dependents_without_the_reference(sim: Sim) -> None:
    CM = sim.rt("", "v1", "configmaps")
    owner = await make(sim, "parent")
    other = await make(sim, "other-parent")
    await make(sim, "kid", owner)
    await make(sim, "twin", owner, other)
    await sim.store.delete(CM, NS, "parent", propagation_policy="Orphan")
    await gone(sim, "parent")
    kid, twin = get(sim, "kid"), get(sim, "twin")
    assert kid is not None and not kid["metadata"].get("ownerReferences")
    assert twin is not None
    assert [r["name"] for r in twin["metadata"]["ownerReferences"]] == ["other-parent"]
    await quiesce()
    assert get(sim, "kid") is not None


async def test_deployment_deletion_cascades_to_replicasets_and_pods(sim: Sim) -> None:
    D, RS, P = (sim.rt("apps", "v1", "deployments"), sim.rt("apps", "v1", "replicasets"),
                sim.rt("", "v1", "pods"))
    await sim.store.create(D, deployment("casc"))
    await eventually(lambda: len(sim.store.list(P, NS)) == 2, timeout=5, message="pods")
    await sim.store.delete(D, NS, "casc")
    await eventually(lambda: not sim.store.list(RS, NS) and not sim.store.list(P, NS),
                     timeout=5, message="cascade")


async def test_foreground_deployment_deletion_waits_for_its_tree(sim: Sim) -> None:
    D, RS, P = (sim.rt("apps", "v1", "deployments"), sim.rt("apps", "v1", "replicasets"),
                sim.rt("", "v1", "pods"))
    await sim.store.create(D, deployment("fgd"))
    await eventually(lambda: len(sim.store.list(P, NS)) == 2, timeout=5, message="pods")
    await sim.store.delete(D, NS, "fgd", propagation_policy="Foreground")
    await eventually(lambda: sim.store.get(D, NS, "fgd") is None, timeout=5, message="owner")
    assert sim.store.list(RS, NS) == [] and sim.store.list(P, NS) == []


async def test_cluster_scoped_dependent_of_namespaced_kind_is_never_collected(sim: Sim) -> None:
    NSRT = sim.rt("", "v1", "namespaces")
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "nowhere",
           "uid": "00000000-0000-4000-8000-000000000001"}
    await sim.store.create(NSRT, {"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": "weird", "ownerReferences": [ref]}})
    await quiesce()
    assert sim.store.get(NSRT, None, "weird") is not None


async def test_cross_namespace_owner_reference_counts_as_absent(sim: Sim) -> None:
    NSRT, CM = sim.rt("", "v1", "namespaces"), sim.rt("", "v1", "configmaps")
    await sim.store.create(NSRT, {"metadata": {"name": "elsewhere"}})
    owner = await make(sim, "home-owner")  # lives in "default"
    body = cm("stray", owner)
    body["metadata"]["namespace"] = "elsewhere"
    await sim.store.create(CM, body)
    await eventually(lambda: sim.store.get(CM, "elsewhere", "stray") is None, timeout=5,
                     message="cross-namespace dependent collected")
    assert get(sim, "home-owner") is not None


async def test_custom_resource_owner_takes_its_whole_tree(sim: Sim) -> None:
    crd = simple_crd("gadgets", "Gadget")
    await sim.store.create(sim.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
                           crd)
    G = await eventually(lambda: sim.store.type_for_kind("example.com/v1", "Gadget"), timeout=5)
    D, P, CM = (sim.rt("apps", "v1", "deployments"), sim.rt("", "v1", "pods"),
                sim.rt("", "v1", "configmaps"))
    gadget = await sim.store.create(G, {"apiVersion": "example.com/v1", "kind": "Gadget",
                                        "metadata": {"name": "g1", "namespace": NS}})
    ref = {"apiVersion": "example.com/v1", "kind": "Gadget", "name": "g1",
           "uid": gadget["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    body = deployment("gadget-app")
    body["metadata"]["ownerReferences"] = [ref]
    await sim.store.create(D, body)
    await sim.store.create(CM, {"metadata": {"name": "gadget-cfg", "namespace": NS,
                                             "ownerReferences": [ref]}})
    await eventually(lambda: len(sim.store.list(P, NS, label_selector={"app": "gadget-app"}))
                     == 2, timeout=5, message="pods")
    await sim.store.delete(G, NS, "g1")
    await eventually(lambda: sim.store.get(D, NS, "gadget-app") is None
                     and get(sim, "gadget-cfg") is None
                     and not sim.store.list(P, NS, label_selector={"app": "gadget-app"}),
                     timeout=5, message="the gadget's tree collected")


async def test_cluster_scoped_owner_of_namespaced_dependents(sim: Sim) -> None:
    CR = sim.rt("rbac.authorization.k8s.io", "v1", "clusterroles")
    CM = sim.rt("", "v1", "configmaps")
    owner = await sim.store.create(CR, {"metadata": {"name": "viewer"}, "rules": []})
    ref = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "name": "viewer", "uid": owner["metadata"]["uid"]}
    await sim.store.create(CM, {"metadata": {"name": "per-role", "namespace": NS,
                                             "ownerReferences": [ref]}})
    await quiesce()
    assert get(sim, "per-role") is not None  # its owner is there
    await sim.store.delete(CR, None, "viewer")
    await gone(sim, "per-role")


GADGET_CRD = simple_crd("gizmos", "Gizmo")


async def test_deleting_a_crd_takes_its_objects_dependents_too(sim: Sim) -> None:
    """The custom objects go with their CRD (customresourcecleanup); their dependents go
    after them even though the owner kind no longer resolves by then."""
    CRD = sim.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    await sim.store.create(CRD, GADGET_CRD)
    G = await eventually(lambda: sim.store.type_for_kind("example.com/v1", "Gizmo"), timeout=5)
    P = sim.rt("", "v1", "pods")
    owners = [await sim.store.create(G, {"apiVersion": "example.com/v1", "kind": "Gizmo",
                                         "metadata": {"name": f"g{i}", "namespace": NS}})
              for i in range(3)]
    for i, owner in enumerate(owners):
        await sim.store.create(P, {"metadata": {
            "name": f"p{i}", "namespace": NS, "ownerReferences": [{
                "apiVersion": "example.com/v1", "kind": "Gizmo", "name": f"g{i}",
                "uid": owner["metadata"]["uid"], "controller": True}]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    await sim.store.delete(CRD, None, "gizmos.example.com")
    await eventually(lambda: sim.store.type_for_kind("example.com/v1", "Gizmo") is None,
                     timeout=5, message="the CRD gone")
    await eventually(lambda: not [p for p in sim.store.list(P, NS)
                                  if p["metadata"]["name"] in ("p0", "p1", "p2")],
                     timeout=10, message="the gizmos' pods collected")


async def test_an_owner_of_an_unserved_kind_is_retried_not_trusted(fake_sim: Sim) -> None:
    """A reference to a kind nobody serves keeps the dependent (the owner may exist once the
    kind is served), and the collector looks again: once the kind is served and the owner
    is missing, the dependent goes."""
    sim = fake_sim
    CM = sim.rt("", "v1", "configmaps")
    CRD = sim.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    ref = {"apiVersion": "example.com/v1", "kind": "Gizmo", "name": "ghost", "uid": "u-ghost"}
    await sim.store.create(CM, {"metadata": {"name": "waits", "namespace": NS,
                                             "ownerReferences": [ref]}})
    for _ in range(3):
        await quiesce()
        await sim.clock.advance(5.0)
    assert get(sim, "waits") is not None  # unresolvable: kept
    await sim.store.create(CRD, GADGET_CRD)  # now the kind resolves, and "ghost" is absent
    await quiesce()
    assert sim.store.type_for_kind("example.com/v1", "Gizmo") is not None
    assert get(sim, "waits") is not None  # nothing told the collector yet
    await sim.clock.advance(5.0)  # its retry
    await quiesce()
    await gone(sim, "waits")
