"""run_soak, the pytest variant: a user's operator and scenario, a short seeded run.

The operator and its scenario are the files a user adds to a scaffolded project
(chaos_project.py): a Memcached controller keeping one Deployment of spec.size pods, a
workload that resizes and replaces Memcacheds, and two invariants of their own ("every
Memcached has one Deployment with spec.size replicas", "never a second Deployment per
Memcached"). The correct controller keeps them under every fault the short run draws; the
broken one (it creates a second child when its status write failed) is caught, with the
invariant and the seed named. User code that raises during a run (a workload op, the
summary) is a `soak` violation, never a crash. The scaffold's chaos test is covered in
tests/project and by the e2e tutorial tests (a fresh project's `make test` runs it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.commands.soak import resolve_scenario
from asyncop.operator import Operator
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.testing.chaos import (
    FAULT_KINDS,
    History,
    Scenario,
    Snapshot,
    SoakConfig,
    SoakFailed,
    Workload,
    World,
    run_soak,
    soak,
)
from tests.testing.chaos_project import CAUGHT, write


@pytest.mark.timeout(90)
async def test_a_correct_operator_keeps_every_invariant(workdir: Path) -> None:
    scenario = resolve_scenario(str(write(workdir)))
    report = await run_soak(scenario, seed=3, seconds=60)
    data = report.data
    assert report.ok and data["violations"] == []
    assert data["soak"] == "memcached-operator" and data["seed"] == 3
    assert data["faults_total"] >= 4  # a fault every 5 virtual seconds or so
    assert data["objects_created"]["memcacheds"] >= 4
    assert data["objects_created"]["deployments"] >= 4
    assert data["reconciles"] > 20
    assert data["convergence_s"]["changes_measured"] > 10
    assert data["convergence_s"]["after_last_fault"] is not None


@pytest.mark.timeout(90)
async def test_a_second_child_on_a_retry_is_caught(workdir: Path) -> None:
    scenario = resolve_scenario(str(write(workdir, broken=True)))
    with pytest.raises(SoakFailed) as failed:
        await run_soak(scenario, seed=3, seconds=60)
    report = failed.value.report
    assert CAUGHT in report.violated, report.data
    assert not report.ok and report.data["ok"] is False
    caught = [str(v) for v in report.violations if v.invariant == CAUGHT]
    assert "deployments created" in caught[0] and "at most 1" in caught[0]
    message = str(failed.value)
    assert f"violation(s) of {', '.join(report.violated)} (seed 3," in message
    assert "reproduce: run again with seed=3" in message


async def test_user_code_that_raises_is_a_violation_not_a_crash() -> None:
    async def noop(_: Request) -> Result:
        return Result()

    def watcher(mgr: Manager) -> Controller:
        return Controller("noop", reconciler(noop), watches=[for_(CONFIGMAP)], workers=1)

    async def boom(world: World) -> None:
        raise KeyError("size")

    def summary(snap: Snapshot, history: History) -> dict[str, Any]:
        raise ZeroDivisionError("no")

    scenario = Scenario(operator=Operator(name="noop", controllers={"noop": watcher}),
                        workload=Workload(ops={"boom": boom}, per_second=3), summary=summary)
    no_faults = dict.fromkeys(FAULT_KINDS, 0.0)
    report = await soak(scenario, SoakConfig(seed=1, seconds=4, rate=10, faults=no_faults))
    assert report.violated == ["soak"] and report.data["faults_total"] == 0
    assert [v.message for v in report.violations] == [
        "the workload's op 'boom' raised KeyError('size')",
        "the scenario's summary raised ZeroDivisionError('no')"]
