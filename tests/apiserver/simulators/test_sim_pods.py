"""The scheduler + kubelet stand-in: Pending -> Running -> Succeeded/Failed on a FakeClock."""

from __future__ import annotations

from typing import Any

import pytest

from asyncop.apiserver.simulators import SimulatorConfig
from tests.apiserver.simulators.simkit import Sim, quiesce

NS = "default"


def pod(name: str, *, restart: str = "Never", command: bool = True,
        annotations: dict[str, str] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox:1.36"}
    if command:
        container["command"] = ["sh", "-c", "echo hi"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "annotations": annotations or {}},
            "spec": {"restartPolicy": restart, "containers": [container],
                     "initContainers": [{"name": "init", "image": "busybox:1.36",
                                         "command": ["true"]}]}}


def get(sim: Sim, name: str) -> dict[str, Any]:
    obj = sim.store.get(sim.rt("", "v1", "pods"), NS, name)
    assert obj is not None
    return obj


def phase(sim: Sim, name: str) -> str:
    return str(get(sim, name)["status"]["phase"])


@pytest.fixture
def sim_config() -> SimulatorConfig:
    return SimulatorConfig(pod_start_delay=2.0, pod_run_duration=5.0)


async def test_pending_running_succeeded_on_schedule(fake_sim: Sim) -> None:
    clock = fake_sim.clock
    await fake_sim.store.create(fake_sim.rt("", "v1", "pods"), pod("job"))
    await quiesce()
    p = get(fake_sim, "job")
    assert p["spec"]["nodeName"] == "asyncop-node"
    assert p["metadata"]["generation"] == 1  # bound through pods/binding, as kube's scheduler
    assert p["status"]["phase"] == "Pending"
    assert [c["type"] for c in p["status"]["conditions"]] == ["PodScheduled"]

    await clock.advance(1.9)
    await quiesce()
    assert phase(fake_sim, "job") == "Pending"
    await clock.advance(0.2)
    await quiesce()
    p = get(fake_sim, "job")
    status = p["status"]
    assert status["phase"] == "Running"
    assert status["hostIP"] == "172.18.0.2" and status["podIP"].startswith("10.244.")
    assert status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["startTime"] == "2026-01-01T00:00:02Z"
    conds = {c["type"]: c["status"] for c in status["conditions"]}
    assert conds == {"PodScheduled": "True", "Initialized": "True", "ContainersReady": "True",
                     "Ready": "True", "PodReadyToStartContainers": "True"}
    [cs] = status["containerStatuses"]
    assert (cs["name"], cs["ready"], cs["started"], cs["restartCount"]) == ("main", True, True, 0)
    assert cs["state"] == {"running": {"startedAt": "2026-01-01T00:00:02Z"}}
    assert status["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"

    await clock.advance(4.8)
    await quiesce()
    assert phase(fake_sim, "job") == "Running"
    await clock.advance(0.3)
    await quiesce()
    status = get(fake_sim, "job")["status"]
    assert status["phase"] == "Succeeded"
    [cs] = status["containerStatuses"]
    assert cs["ready"] is False
    term = cs["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (0, "Completed")
    conds = {c["type"]: (c["status"], c.get("reason")) for c in status["conditions"]}
    assert conds["Ready"] == ("False", "PodCompleted")

    await clock.advance(100)
    await quiesce()
    assert phase(fake_sim, "job") == "Succeeded"


async def test_exit_code_annotation_fails_the_pod(fake_sim: Sim) -> None:
    await fake_sim.store.create(fake_sim.rt("", "v1", "pods"),
                                pod("bad", restart="OnFailure",
                                    annotations={"sim.asyncop.io/exit-code": "3"}))
    await fake_sim.clock.advance(7.1)
    await quiesce()
    status = get(fake_sim, "bad")["status"]
    assert status["phase"] == "Failed"
    term = status["containerStatuses"][0]["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (3, "Error")


async def test_run_seconds_annotation_overrides_duration(fake_sim: Sim) -> None:
    await fake_sim.store.create(fake_sim.rt("", "v1", "pods"),
                                pod("quick", annotations={"sim.asyncop.io/run-seconds": "0.5"}))
    await fake_sim.clock.advance(2.0)
    await quiesce()
    assert phase(fake_sim, "quick") == "Running"
    await fake_sim.clock.advance(0.4)
    await quiesce()
    assert phase(fake_sim, "quick") == "Running"
    await fake_sim.clock.advance(0.2)
    await quiesce()
    assert phase(fake_sim, "quick") == "Succeeded"


@pytest.mark.parametrize(("restart", "command"), [("Always", True), ("Never", False)])
async def test_long_running_pods_keep_running(fake_sim: Sim, restart: str, command: bool) -> None:
    await fake_sim.store.create(fake_sim.rt("", "v1", "pods"),
                                pod("server", restart=restart, command=command))
    await fake_sim.clock.advance(2.0)
    await quiesce()
    assert phase(fake_sim, "server") == "Running"
    await fake_sim.clock.advance(600)
    await quiesce()
    assert phase(fake_sim, "server") == "Running"


async def test_pods_get_distinct_ips(fake_sim: Sim) -> None:
    P = fake_sim.rt("", "v1", "pods")
    for i in range(3):
        await fake_sim.store.create(P, pod(f"p{i}", restart="Always"))
    await fake_sim.clock.advance(2.0)
    await quiesce()
    ips = {get(fake_sim, f"p{i}")["status"]["podIP"] for i in range(3)}
    assert len(ips) == 3


async def test_pod_with_finalizer_goes_once_released(fake_sim: Sim) -> None:
    P = fake_sim.rt("", "v1", "pods")
    body = pod("held", restart="Always")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await fake_sim.store.create(P, body)
    await fake_sim.clock.advance(2.0)
    await quiesce()
    left = await fake_sim.store.delete(P, NS, "held")
    assert left is not None and left["metadata"]["deletionTimestamp"]
    await quiesce()
    p = get(fake_sim, "held")
    p["metadata"]["finalizers"] = []
    await fake_sim.store.update(P, p)
    await quiesce()
    assert fake_sim.store.get(P, NS, "held") is None


async def test_ready_annotation_and_start_seconds(fake_sim: Sim) -> None:
    P = fake_sim.rt("", "v1", "pods")
    await fake_sim.store.create(P, pod("slow", restart="Always", annotations={
        "sim.asyncop.io/ready": "false", "sim.asyncop.io/start-seconds": "10"}))
    await fake_sim.clock.advance(9.9)
    await quiesce()
    assert phase(fake_sim, "slow") == "Pending"
    await fake_sim.clock.advance(0.2)
    await quiesce()
    p = get(fake_sim, "slow")
    conds = {c["type"]: (c["status"], c.get("reason")) for c in p["status"]["conditions"]}
    assert p["status"]["phase"] == "Running"
    assert conds["Ready"] == conds["ContainersReady"] == ("False", "ContainersNotReady")
    assert p["status"]["containerStatuses"][0]["ready"] is False
    started = p["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]

    p["metadata"]["annotations"]["sim.asyncop.io/ready"] = "true"
    await fake_sim.store.update(P, p)
    await fake_sim.clock.advance(5)
    await quiesce()
    p = get(fake_sim, "slow")
    conds = {c["type"]: c["status"] for c in p["status"]["conditions"]}
    assert conds["Ready"] == conds["ContainersReady"] == "True"
    assert p["status"]["containerStatuses"][0]["ready"] is True
    assert p["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] == started


async def test_a_status_written_by_someone_else_is_not_overwritten(fake_sim: Sim) -> None:
    P = fake_sim.rt("", "v1", "pods")
    await fake_sim.store.create(P, pod("manual", restart="Always"))
    await fake_sim.clock.advance(2.0)
    await quiesce()
    p = get(fake_sim, "manual")
    for cond in p["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["status"] = "False"
    await fake_sim.store.update_status(P, p)
    await fake_sim.clock.advance(60)
    await quiesce()
    ready = [c for c in get(fake_sim, "manual")["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["status"] == "False"


async def test_the_node_is_registered_ready(fake_sim: Sim) -> None:
    node = fake_sim.store.get(fake_sim.rt("", "v1", "nodes"), None, "asyncop-node")
    assert node is not None
    conds = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert conds == {"Ready": "True", "MemoryPressure": "False", "DiskPressure": "False",
                     "PIDPressure": "False"}
    assert {"type": "InternalIP", "address": "172.18.0.2"} in node["status"]["addresses"]
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "asyncop-node"
