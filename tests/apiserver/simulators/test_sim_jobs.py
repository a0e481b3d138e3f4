"""Jobs: pods run to completion on the FakeClock; Complete/Failed conditions; TTL; the switch."""

from __future__ import annotations

from typing import Any

import pytest

from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.testing import FakeClock
from tests.apiserver.simulators.simkit import Sim, quiesce, started, stop

NS = "default"


def job(name: str, *, completions: int = 1, parallelism: int = 1, backoff: int = 6,
        annotations: dict[str, str] | None = None, ttl: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "completions": completions, "parallelism": parallelism, "backoffLimit": backoff,
        "template": {"metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                     "spec": {"restartPolicy": "Never",
                              "containers": [{"name": "migrate", "image": "migrator:1"}]}}}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


@pytest.fixture
def sim_config() -> SimulatorConfig:
    return SimulatorConfig(pod_run_duration=5.0)


def get_job(sim: Sim, name: str) -> dict[str, Any]:
    obj = sim.store.get(sim.rt("batch", "v1", "jobs"), NS, name)
    assert obj is not None
    return obj


def job_pods(sim: Sim, name: str) -> list[dict[str, Any]]:
    return sim.store.list(sim.rt("", "v1", "pods"), NS,
                          label_selector={"batch.kubernetes.io/job-name": name})


def conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in obj.get("status", {}).get("conditions", [])}


async def step(sim: Sim, seconds: float) -> None:
    await sim.clock.advance(seconds)
    await quiesce()


async def test_job_runs_pods_one_at_a_time_until_complete(fake_sim: Sim) -> None:
    await fake_sim.store.create(fake_sim.rt("batch", "v1", "jobs"), job("mig", completions=2))
    await quiesce()
    [first] = job_pods(fake_sim, "mig")
    assert first["metadata"]["name"].startswith("mig-")
    assert first["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert first["metadata"]["labels"]["app"] == "mig"
    j = get_job(fake_sim, "mig")
    assert j["status"]["active"] == 1 and j["status"]["startTime"]
    assert conditions(j) == {}

    await step(fake_sim, 5.1)
    pods = job_pods(fake_sim, "mig")
    assert sorted(p["status"]["phase"] for p in pods) == ["Running", "Succeeded"]
    assert get_job(fake_sim, "mig")["status"]["succeeded"] == 1
    assert conditions(get_job(fake_sim, "mig")) == {}

    await step(fake_sim, 5.1)
    j = get_job(fake_sim, "mig")
    assert conditions(j) == {"SuccessCriteriaMet": "True", "Complete": "True"}
    assert (j["status"]["succeeded"], j["status"]["active"]) == (2, 0)
    assert j["status"]["completionTime"]
    await step(fake_sim, 60)
    assert len(job_pods(fake_sim, "mig")) == 2


async def test_failing_pods_exhaust_the_backoff_limit(fake_sim: Sim) -> None:
    await fake_sim.store.create(
        fake_sim.rt("batch", "v1", "jobs"),
        job("bad", backoff=1, annotations={"sim.asyncop.io/exit-code": "2"}))
    for _ in range(2):
        await step(fake_sim, 5.1)
    j = get_job(fake_sim, "bad")
    assert conditions(j) == {"FailureTarget": "True", "Failed": "True"}
    assert j["status"]["failed"] == 2
    failed = next(c for c in j["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "BackoffLimitExceeded"
    await step(fake_sim, 30)
    assert len(job_pods(fake_sim, "bad")) == 2


async def test_ttl_after_finished_deletes_the_job_and_its_pods(fake_sim: Sim) -> None:
    await fake_sim.store.create(fake_sim.rt("batch", "v1", "jobs"), job("once", ttl=10))
    await step(fake_sim, 5.1)
    assert conditions(get_job(fake_sim, "once")).get("Complete") == "True"
    await step(fake_sim, 9.5)
    assert fake_sim.store.get(fake_sim.rt("batch", "v1", "jobs"), NS, "once") is not None
    await step(fake_sim, 1.0)
    assert fake_sim.store.get(fake_sim.rt("batch", "v1", "jobs"), NS, "once") is None
    assert job_pods(fake_sim, "once") == []


async def test_jobs_off_runs_nothing() -> None:
    sim = await started(FakeClock(), SimulatorConfig(jobs=False))
    try:
        await sim.store.create(sim.rt("batch", "v1", "jobs"), job("idle"))
        await step(sim, 10)
        assert job_pods(sim, "idle") == []
        assert not get_job(sim, "idle").get("status")
    finally:
        await stop(sim)
