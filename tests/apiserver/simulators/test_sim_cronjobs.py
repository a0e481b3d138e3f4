"""Cron schedules, and CronJobs creating Jobs on the FakeClock (history, Forbid, suspend)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from asyncop.apiserver.builtin.cron import next_after, parse_schedule
from tests.apiserver.simulators.simkit import Sim, quiesce

NS = "default"


def at(text: str, tz: Any = UTC) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=tz)


@pytest.mark.parametrize(("schedule", "after", "expected"), [
    ("*/5 * * * *", "2026-01-01T00:00:00", "2026-01-01T00:05:00"),
    ("*/5 * * * *", "2026-01-01T00:04:59", "2026-01-01T00:05:00"),
    ("30 2 * * *", "2026-01-01T03:00:00", "2026-01-02T02:30:00"),
    ("0 9 * * MON-FRI", "2026-01-02T10:00:00", "2026-01-05T09:00:00"),  # Fri -> Mon
    ("0 0 13 * 5", "2026-01-01T00:00:00", "2026-01-02T00:00:00"),  # Friday OR the 13th
    ("0 0 29 FEB *", "2026-01-01T00:00:00", "2028-02-29T00:00:00"),
    ("@hourly", "2026-01-01T00:59:00", "2026-01-01T01:00:00"),
    ("@weekly", "2026-01-01T00:00:00", "2026-01-04T00:00:00"),  # Sunday
    ("15-45/15 1,3 * * 0", "2026-01-03T23:00:00", "2026-01-04T01:15:00"),
    ("0 0 1 * */2", "2026-01-01T00:00:00", "2026-01-03T00:00:00"),  # a stepped day-of-week
    # is no star: the 1st of the month OR every other weekday (kube: robfig/cron's star bit)
    ("@every 90s", "2026-01-01T00:00:10.5", "2026-01-01T00:01:40"),
])
def test_next_after(schedule: str, after: str, expected: str) -> None:
    assert next_after(parse_schedule(schedule), at(after)) == at(expected)


def test_next_after_in_a_time_zone() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    nxt = next_after(parse_schedule("0 9 * * *"), at("2026-01-01T10:00:00", berlin))
    assert nxt == at("2026-01-02T09:00:00", berlin)
    assert nxt is not None and nxt.astimezone(UTC).hour == 8


@pytest.mark.parametrize("bad", ["* * * *", "60 * * * *", "* * * * MOO", "*/0 * * * *",
                                 "5-1 * * * *", "* * * * 7"])  # kube: robfig/cron, 0-6
def test_invalid_schedules(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_schedule(bad)


def cronjob(name: str, schedule: str, **spec: Any) -> dict[str, Any]:
    run = spec.pop("run_seconds", None)
    annotations = {"sim.asyncop.io/run-seconds": str(run)} if run is not None else {}
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"schedule": schedule, **spec, "jobTemplate": {"spec": {"template": {
                "metadata": {"annotations": annotations},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "tick:1"}]}}}}}}


def jobs(sim: Sim, name: str) -> list[dict[str, Any]]:
    return sorted((j for j in sim.store.list(sim.rt("batch", "v1", "jobs"), NS)
                   if j["metadata"]["name"].startswith(name + "-")),
                  key=lambda j: j["metadata"]["name"])


async def step(sim: Sim, seconds: float) -> None:
    await sim.clock.advance(seconds)
    await quiesce()


async def test_cronjob_runs_on_schedule_and_keeps_its_history(fake_sim: Sim) -> None:
    CJ = fake_sim.rt("batch", "v1", "cronjobs")
    await fake_sim.store.create(CJ, cronjob("tick", "*/5 * * * *",
                                            successfulJobsHistoryLimit=2))
    await step(fake_sim, 299)
    assert jobs(fake_sim, "tick") == []
    await step(fake_sim, 1.5)
    [job] = jobs(fake_sim, "tick")
    minutes = int(at("2026-01-01T00:05:00").timestamp()) // 60
    assert job["metadata"]["name"] == f"tick-{minutes}"
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] \
        == "2026-01-01T00:05:00Z"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    cj = fake_sim.store.get(CJ, NS, "tick")
    assert cj is not None and cj["status"]["lastScheduleTime"] == "2026-01-01T00:05:00Z"
    assert [r["name"] for r in cj["status"]["active"]] == [job["metadata"]["name"]]

    await step(fake_sim, 2)  # the pod runs 1 s: the Job completes
    cj = fake_sim.store.get(CJ, NS, "tick")
    assert cj is not None and "active" not in cj["status"]
    assert cj["status"]["lastSuccessfulTime"]

    for _ in range(3):
        await step(fake_sim, 300)
    names = [j["metadata"]["name"] for j in jobs(fake_sim, "tick")]
    assert len(names) == 2  # successfulJobsHistoryLimit
    assert names[-1] == f"tick-{minutes + 15}"


async def test_forbid_skips_while_a_job_is_active(fake_sim: Sim) -> None:
    CJ = fake_sim.rt("batch", "v1", "cronjobs")
    await fake_sim.store.create(CJ, cronjob("slow", "* * * * *", concurrencyPolicy="Forbid",
                                            run_seconds=150))
    await step(fake_sim, 61)
    assert len(jobs(fake_sim, "slow")) == 1
    await step(fake_sim, 120)
    assert len(jobs(fake_sim, "slow")) == 1  # 00:02, 00:03 skipped: the first still runs
    await step(fake_sim, 30)  # the first finishes at 00:03:30: 00:03 runs late then
    [_first, second] = jobs(fake_sim, "slow")
    assert second["metadata"]["annotations"][
        "batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2026-01-01T00:03:00Z"
    await step(fake_sim, 60)
    assert len(jobs(fake_sim, "slow")) == 2  # 00:04 skipped: the second still runs


async def test_suspended_cronjob_runs_nothing(fake_sim: Sim) -> None:
    CJ = fake_sim.rt("batch", "v1", "cronjobs")
    await fake_sim.store.create(CJ, cronjob("paused", "* * * * *", suspend=True))
    await step(fake_sim, 600)
    assert jobs(fake_sim, "paused") == []
