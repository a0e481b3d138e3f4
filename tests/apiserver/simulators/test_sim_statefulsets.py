"""StatefulSets (ordinal pods, OrderedReady, rolling update) and DaemonSets (one pod)."""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.testing import FakeClock, eventually
from tests.apiserver.simulators.simkit import Sim, quiesce, started, stop

NS = "default"


def workload(kind: str, name: str, image: str = "redis:7", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}},
                     **spec}}


def sts_current(sts: dict[str, Any] | None) -> bool:
    """kstatus's StatefulSet rules (RollingUpdate, no partition)."""
    if not sts:
        return False
    want, st = sts["spec"].get("replicas", 1), sts.get("status") or {}
    return (st.get("observedGeneration") == sts["metadata"]["generation"]
            and st.get("replicas") == want and st.get("readyReplicas") == want
            and st.get("currentReplicas") == want and st.get("updatedReplicas") == want
            and st.get("currentRevision") == st.get("updateRevision"))


def pods_of(sim: Sim, app: str) -> list[dict[str, Any]]:
    return sim.store.list(sim.rt("", "v1", "pods"), NS, label_selector={"app": app})


async def test_statefulset_creates_ordinal_pods_and_rolls_updates(sim: Sim) -> None:
    STS = sim.rt("apps", "v1", "statefulsets")
    await sim.store.create(STS, workload("StatefulSet", "db", replicas=3, serviceName="db"))
    sts = await eventually(lambda: (s := sim.store.get(STS, NS, "db")) and sts_current(s) and s,
                           timeout=10, message="statefulset ready")
    pods = {p["metadata"]["name"]: p for p in pods_of(sim, "db")}
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    p1 = pods["db-1"]
    assert p1["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert p1["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    assert p1["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]
    assert (p1["spec"]["hostname"], p1["spec"]["subdomain"]) == ("db-1", "db")
    first_revision = sts["status"]["updateRevision"]

    sts["spec"]["template"]["spec"]["containers"][0]["image"] = "redis:7.2"
    await sim.store.update(STS, sts)

    def rolled() -> dict[str, Any] | None:
        s = sim.store.get(STS, NS, "db")
        ok = s and sts_current(s) and s["status"]["updateRevision"] != first_revision
        return s if ok else None

    sts = await eventually(rolled, timeout=10, message="statefulset rolled")
    assert {c["image"] for p in pods_of(sim, "db") for c in p["spec"]["containers"]} == {
        "redis:7.2"}

    sts["spec"]["replicas"] = 1
    await sim.store.update(STS, sts)
    await eventually(lambda: [p["metadata"]["name"] for p in pods_of(sim, "db")] == ["db-0"]
                     and sts_current(sim.store.get(STS, NS, "db")), timeout=10,
                     message="scaled down to db-0")


async def test_daemonset_runs_one_pod_and_replaces_it_on_update(sim: Sim) -> None:
    DS = sim.rt("apps", "v1", "daemonsets")
    await sim.store.create(DS, workload("DaemonSet", "agent"))

    def ready(image: str) -> dict[str, Any] | None:
        ds = sim.store.get(DS, NS, "agent")
        st = (ds or {}).get("status") or {}
        pods = pods_of(sim, "agent")
        ok = (ds and st.get("observedGeneration") == ds["metadata"]["generation"]
              and st.get("numberReady") == st.get("updatedNumberScheduled") == 1
              and len(pods) == 1 and pods[0]["spec"]["containers"][0]["image"] == image)
        return ds if ok else None

    ds = await eventually(lambda: ready("redis:7"), timeout=10, message="daemonset ready")
    assert ds["status"]["desiredNumberScheduled"] == 1
    assert "numberUnavailable" not in ds["status"]
    [pod] = pods_of(sim, "agent")
    assert pod["spec"]["nodeName"] == "asyncop-node" and pod["status"]["phase"] == "Running"

    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "redis:8"
    await sim.store.update(DS, ds)
    await eventually(lambda: ready("redis:8"), timeout=10, message="daemonset updated")


async def test_ordered_ready_waits_for_each_ordinal_and_parallel_does_not() -> None:
    sim = await started(FakeClock(), SimulatorConfig(pod_start_delay=1.0))
    try:
        STS = sim.rt("apps", "v1", "statefulsets")
        await sim.store.create(STS, workload("StatefulSet", "ord", replicas=3))
        await sim.store.create(STS, workload("StatefulSet", "par", replicas=3,
                                             podManagementPolicy="Parallel"))
        await quiesce()

        def names(app: str) -> list[str]:
            return sorted(p["metadata"]["name"] for p in pods_of(sim, app))

        assert names("ord") == ["ord-0"]
        assert names("par") == ["par-0", "par-1", "par-2"]
        await sim.clock.advance(1.0)
        await quiesce()
        assert names("ord") == ["ord-0", "ord-1"]
        await sim.clock.advance(1.0)
        await quiesce()
        assert names("ord") == ["ord-0", "ord-1", "ord-2"]
        assert not sts_current(sim.store.get(STS, NS, "ord"))
        await sim.clock.advance(1.0)
        await quiesce()
        assert sts_current(sim.store.get(STS, NS, "ord"))
        assert sts_current(sim.store.get(STS, NS, "par"))
    finally:
        await stop(sim)


async def test_claims_are_provisioned_bound_and_mounted(sim: Sim) -> None:
    STS, PVC, PV = (sim.rt("apps", "v1", "statefulsets"),
                    sim.rt("", "v1", "persistentvolumeclaims"),
                    sim.rt("", "v1", "persistentvolumes"))
    claim_template = {"metadata": {"name": "data"},
                      "spec": {"accessModes": ["ReadWriteOnce"],
                               "resources": {"requests": {"storage": "5Gi"}}}}
    await sim.store.create(STS, workload("StatefulSet", "pg", replicas=2,
                                         volumeClaimTemplates=[claim_template]))
    await eventually(lambda: sts_current(sim.store.get(STS, NS, "pg")), timeout=10,
                     message="statefulset with claims ready")
    for i in range(2):
        claim = sim.store.get(PVC, NS, f"data-pg-{i}")
        assert claim is not None
        assert claim["metadata"]["labels"] == {"app": "pg"}
        assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                   "capacity": {"storage": "5Gi"}}
        pv = sim.store.get(PV, None, claim["spec"]["volumeName"])
        assert pv is not None and pv["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
        assert pv["status"]["phase"] == "Bound"
        pod = sim.store.get(sim.rt("", "v1", "pods"), NS, f"pg-{i}")
        assert pod is not None
        assert {"name": "data", "persistentVolumeClaim": {"claimName": f"data-pg-{i}"}} in \
            pod["spec"]["volumes"]

    claim = sim.store.get(PVC, NS, "data-pg-1")
    assert claim is not None
    await sim.store.delete(PVC, NS, "data-pg-1")
    await eventually(lambda: sim.store.get(PV, None, claim["spec"]["volumeName"]) is None,
                     timeout=5, message="provisioned volume reclaimed")
