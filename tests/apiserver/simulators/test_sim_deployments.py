"""Deployment -> ReplicaSet -> Pods, status counts and conditions, scaling, template changes."""

from __future__ import annotations

from typing import Any

import pytest

from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.testing import FakeClock, eventually
from tests.apiserver.simulators.simkit import Sim, quiesce, started, stop

NS = "default"


def deployment(name: str, replicas: int, image: str = "nginx:1.27") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name, "tier": "web"}},
                              "spec": {"containers": [{"name": "c", "image": image}]}}},
    }


def kstatus_current(d: dict[str, Any]) -> bool:
    """Helm's kstatus rules for a Deployment (docs/apiserver.md, "What Helm sends")."""
    spec, status = d["spec"], d.get("status") or {}
    want = spec.get("replicas", 1)
    conds = {c["type"]: c for c in status.get("conditions") or ()}
    return (
        status.get("observedGeneration") == d["metadata"]["generation"]
        and want <= status.get("replicas", 0)
        and want <= status.get("updatedReplicas", 0)
        and want <= status.get("readyReplicas", 0)
        and status.get("updatedReplicas", 0) <= status.get("availableReplicas", 0)
        and status.get("replicas", 0) <= want
        and conds.get("Available", {}).get("status") == "True"
        and (conds.get("Progressing", {}).get("status"),
             conds.get("Progressing", {}).get("reason")) == ("True", "NewReplicaSetAvailable")
    )


async def rolled_out(sim: Sim, name: str) -> dict[str, Any]:
    D = sim.rt("apps", "v1", "deployments")

    def check() -> dict[str, Any] | None:
        d = sim.store.get(D, NS, name)
        return d if d and kstatus_current(d) else None

    result: dict[str, Any] = await eventually(check, timeout=10, message=f"{name} rolled out")
    return result


def owned(sim: Sim, plural: str, owner: dict[str, Any]) -> list[dict[str, Any]]:
    rt = sim.rt("apps", "v1", plural) if plural == "replicasets" else sim.rt("", "v1", plural)
    uid = owner["metadata"]["uid"]
    return [o for o in sim.store.list(rt, NS)
            if any(r["uid"] == uid and r.get("controller")
                   for r in o["metadata"].get("ownerReferences") or ())]


def running_pods(sim: Sim, rs: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in owned(sim, "pods", rs) if p["status"].get("phase") == "Running"]


async def test_deployment_creates_replicaset_and_running_pods(sim: Sim) -> None:
    D = sim.rt("apps", "v1", "deployments")
    await sim.store.create(D, deployment("web", 3))
    d = await rolled_out(sim, "web")
    status = d["status"]
    assert status["observedGeneration"] == d["metadata"]["generation"] == 1
    assert (status["replicas"], status["updatedReplicas"], status["readyReplicas"],
            status["availableReplicas"]) == (3, 3, 3, 3)
    assert "unavailableReplicas" not in status
    conds = {c["type"]: c for c in status["conditions"]}
    assert conds["Available"]["reason"] == "MinimumReplicasAvailable"

    [rs] = owned(sim, "replicasets", d)
    thash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{thash}"
    assert len(thash) == 10
    assert set(thash) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert rs["metadata"]["labels"]["app"] == "web"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": thash}
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    ref = rs["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("Deployment", "web", True)
    assert conds["Progressing"]["message"] == (
        f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.')
    assert {k: rs["status"][k] for k in ("replicas", "fullyLabeledReplicas", "readyReplicas",
                                         "availableReplicas", "observedGeneration")} == {
        "replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
        "observedGeneration": 1}

    pods = owned(sim, "pods", rs)
    assert len(pods) == 3
    for pod in pods:
        name = pod["metadata"]["name"]
        assert name.startswith(rs["metadata"]["name"] + "-")
        assert len(name) == len(rs["metadata"]["name"]) + 6
        assert pod["metadata"]["labels"] == {"app": "web", "tier": "web",
                                             "pod-template-hash": thash}
        assert pod["status"]["phase"] == "Running"
        assert pod["spec"]["nodeName"] == "asyncop-node"


async def test_scale_up_and_down(sim: Sim) -> None:
    D = sim.rt("apps", "v1", "deployments")
    await sim.store.create(D, deployment("scaled", 2))
    d = await rolled_out(sim, "scaled")
    [rs] = owned(sim, "replicasets", d)

    d["spec"]["replicas"] = 5
    await sim.store.update(D, d)
    d = await rolled_out(sim, "scaled")
    assert d["metadata"]["generation"] == 2 == d["status"]["observedGeneration"]
    assert d["status"]["readyReplicas"] == 5
    assert len(running_pods(sim, rs)) == 5

    d["spec"]["replicas"] = 1
    await sim.store.update(D, d)
    d = await rolled_out(sim, "scaled")
    assert d["status"]["replicas"] == 1
    assert len(owned(sim, "pods", rs)) == 1
    [same] = owned(sim, "replicasets", d)
    assert same["metadata"]["uid"] == rs["metadata"]["uid"]
    assert same["spec"]["replicas"] == 1


async def test_template_change_rolls_to_new_replicaset(sim: Sim) -> None:
    D = sim.rt("apps", "v1", "deployments")
    await sim.store.create(D, deployment("roll", 2, image="nginx:1.26"))
    d = await rolled_out(sim, "roll")
    [old] = owned(sim, "replicasets", d)

    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    await sim.store.update(D, d)

    def settled() -> dict[str, Any] | None:
        cur = sim.store.get(D, NS, "roll")
        rses = owned(sim, "replicasets", cur) if cur else []
        pods = [p for rs in rses for p in owned(sim, "pods", rs)]
        if cur and kstatus_current(cur) and len(rses) == 2 and len(pods) == 2:
            return cur
        return None

    d = await eventually(settled, timeout=10, message="rolled to the new template")
    rses = {rs["metadata"]["uid"]: rs for rs in owned(sim, "replicasets", d)}
    new = next(rs for uid, rs in rses.items() if uid != old["metadata"]["uid"])
    assert rses[old["metadata"]["uid"]]["spec"]["replicas"] == 0
    assert owned(sim, "pods", old) == []
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert new["metadata"]["labels"]["pod-template-hash"] != \
        old["metadata"]["labels"]["pod-template-hash"]
    assert {c["image"] for p in owned(sim, "pods", new) for c in p["spec"]["containers"]} == {
        "nginx:1.27"}
    assert d["status"]["updatedReplicas"] == 2


async def test_bare_replicaset_is_reconciled(sim: Sim) -> None:
    RS = sim.rt("apps", "v1", "replicasets")
    await sim.store.create(RS, {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "bare", "namespace": NS},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "bare"}},
                 "template": {"metadata": {"labels": {"app": "bare"}},
                              "spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
    })

    def ready() -> dict[str, Any] | None:
        rs = sim.store.get(RS, NS, "bare")
        return rs if rs and rs.get("status", {}).get("readyReplicas") == 2 else None

    rs = await eventually(ready, timeout=10, message="bare replicaset ready")
    assert rs["status"]["replicas"] == 2
    assert len(running_pods(sim, rs)) == 2


async def test_deleted_pod_is_replaced(sim: Sim) -> None:
    D, P = sim.rt("apps", "v1", "deployments"), sim.rt("", "v1", "pods")
    await sim.store.create(D, deployment("heal", 2))
    d = await rolled_out(sim, "heal")
    [rs] = owned(sim, "replicasets", d)
    victim = owned(sim, "pods", rs)[0]["metadata"]["name"]
    await sim.store.delete(P, NS, victim)

    def healed() -> bool:
        pods = running_pods(sim, rs)
        return len(pods) == 2 and victim not in {p["metadata"]["name"] for p in pods}

    await eventually(healed, timeout=10, message="pod replaced")


async def test_progress_deadline_exceeded_then_recovered() -> None:
    sim = await started(FakeClock(), SimulatorConfig())
    try:
        D, P = sim.rt("apps", "v1", "deployments"), sim.rt("", "v1", "pods")
        body = deployment("stuck", 2)
        body["spec"]["progressDeadlineSeconds"] = 30
        body["spec"]["template"]["metadata"]["annotations"] = {"sim.asyncop.io/ready": "false"}
        await sim.store.create(D, body)
        await quiesce()

        def progressing() -> tuple[str, str]:
            d = sim.store.get(D, NS, "stuck") or {}
            cond = next(c for c in d["status"]["conditions"] if c["type"] == "Progressing")
            return cond["status"], cond["reason"]

        assert progressing()[0] == "True"
        await sim.clock.advance(29)
        await quiesce()
        assert progressing()[0] == "True"
        await sim.clock.advance(2)
        await quiesce()
        assert progressing() == ("False", "ProgressDeadlineExceeded")
        d = sim.store.get(D, NS, "stuck")
        assert d is not None and d["status"]["unavailableReplicas"] == 2
        assert not kstatus_current(d)

        for p in sim.store.list(P, NS, label_selector={"app": "stuck"}):
            p["metadata"]["annotations"]["sim.asyncop.io/ready"] = "true"
            await sim.store.update(P, p)
        await quiesce()
        assert progressing() == ("True", "NewReplicaSetAvailable")
        d = sim.store.get(D, NS, "stuck")
        assert d is not None and kstatus_current(d)
    finally:
        await stop(sim)


@pytest.mark.parametrize(("strategy", "max_pods", "min_ready"), [
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}, 5, 4),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "50%"}}, 4, 2),
    ({"type": "Recreate"}, 4, 0),
])
async def test_rollout_respects_the_strategy(strategy: dict[str, Any], max_pods: int,
                                             min_ready: int) -> None:
    sim = await started(FakeClock(), SimulatorConfig(pod_start_delay=1.0))
    try:
        D, P = sim.rt("apps", "v1", "deployments"), sim.rt("", "v1", "pods")
        body = deployment("roll", 4, image="app:1")
        body["spec"]["strategy"] = strategy
        await sim.store.create(D, body)
        await quiesce()
        await sim.clock.advance(1.0)
        await quiesce()
        d = sim.store.get(D, NS, "roll")
        assert d is not None and kstatus_current(d)
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "app:2"
        await sim.store.update(D, d)

        def pods() -> list[dict[str, Any]]:
            return [p for p in sim.store.list(P, NS, label_selector={"app": "roll"})
                    if not p["metadata"].get("deletionTimestamp")]

        def ready(pod: dict[str, Any]) -> bool:
            return any(c["type"] == "Ready" and c["status"] == "True"
                       for c in pod["status"].get("conditions", []))

        for _ in range(20):
            await quiesce()
            current = pods()
            assert len(current) <= max_pods
            assert sum(1 for p in current if ready(p)) >= min_ready
            d = sim.store.get(D, NS, "roll")
            images = {p["spec"]["containers"][0]["image"] for p in current}
            if d is not None and kstatus_current(d) and images == {"app:2"} and \
                    len(current) == 4:
                break
            await sim.clock.advance(1.0)
        else:
            raise AssertionError("rollout did not finish")
    finally:
        await stop(sim)


async def test_min_ready_seconds_delays_availability() -> None:
    sim = await started(FakeClock(), SimulatorConfig())
    try:
        D = sim.rt("apps", "v1", "deployments")
        body = deployment("patient", 2)
        body["spec"]["minReadySeconds"] = 5
        await sim.store.create(D, body)
        await quiesce()

        def status() -> dict[str, Any]:
            d = sim.store.get(D, NS, "patient") or {}
            conds = {c["type"]: c["status"] for c in d["status"]["conditions"]}
            return {"ready": d["status"]["readyReplicas"],
                    "available": d["status"]["availableReplicas"],
                    "Available": conds["Available"]}

        assert status() == {"ready": 2, "available": 0, "Available": "False"}
        await sim.clock.advance(4.9)
        await quiesce()
        assert status()["available"] == 0
        await sim.clock.advance(0.2)
        await quiesce()
        assert status() == {"ready": 2, "available": 2, "Available": "True"}

        d = sim.store.get(D, NS, "patient")
        assert d is not None
        d["spec"]["minReadySeconds"] = 0  # propagates to the ReplicaSet without a new one
        await sim.store.update(D, d)
        await quiesce()
        [rs] = sim.store.list(sim.rt("apps", "v1", "replicasets"), NS,
                              label_selector={"app": "patient"})
        assert rs["spec"]["minReadySeconds"] == 0
    finally:
        await stop(sim)
