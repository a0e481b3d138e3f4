"""The test kit's helpers: advance_until, Event assertions, the fake-clock server fixture, and
the pod annotations of the simulated kubelet (each claim of `POD_ANNOTATIONS` exercised).

The Events here are posted by hand, as an EventRecorder posts them (core/v1, the involved
object's uid, an aggregated `count`); docs/testing.md's examples (tests/testing/
test_testing_docs.py) check them on Events a running operator posted.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from asyncop.api import RawObject
from asyncop.api.kinds import CONFIGMAP, EVENT, POD
from asyncop.apiserver import ApiServer
from asyncop.apiserver.simulators import config as simconfig
from asyncop.client import Client, load_config
from asyncop.operator import Operator
from asyncop.testing import (
    POD_ANNOTATIONS,
    FakeClock,
    advance_until,
    events_about,
    expect_event,
    pod_annotations,
    run_operator,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def client(apiserver_no_sim: ApiServer) -> AsyncIterator[Client]:
    async with Client(await load_config(url=apiserver_no_sim.url)) as c:
        yield c


# -- advance_until -----------------------------------------------------------------------------

async def test_advance_until_steps_virtual_time_and_says_how_much_passed() -> None:
    clock = FakeClock()
    fired: list[float] = []
    clock.call_later(2.5, lambda: fired.append(clock.monotonic()))
    took = await advance_until(clock, lambda: bool(fired), within=10)
    assert fired == [2.5]
    assert took == 3.0  # three steps of one second: the timer fired on the way to 3
    assert await advance_until(clock, lambda: True, within=10) == 0.0


async def test_advance_until_fails_at_within_without_moving_past_it() -> None:
    clock = FakeClock()
    with pytest.raises(AssertionError, match=r"^the flag did not hold within 2.5 virtual "
                                             r"seconds \(last: False\)$"):
        await advance_until(clock, lambda: False, within=2.5, message="the flag")
    assert clock.monotonic() == 2.5  # steps of 1, 1, then the 0.5 left


async def test_advance_until_moves_time_only_once_caught_up() -> None:
    clock = FakeClock()
    done = asyncio.Event()
    asked: list[tuple[float, bool]] = []

    async def caught_up() -> bool:
        asked.append((clock.monotonic(), done.is_set()))
        return done.is_set()

    async def io() -> None:  # real I/O that the operator would finish before time moves
        await asyncio.sleep(0.05)
        done.set()

    task = asyncio.create_task(io())
    took = await advance_until(clock, lambda: clock.monotonic() >= 2, within=5,
                               caught_up=caught_up)
    await task
    assert took == 2.0
    assert any(not ok for _, ok in asked)  # it did wait
    assert all(at == 0.0 for at, ok in asked if not ok)  # and never moved while it waited


async def test_advance_until_fails_when_the_operator_never_catches_up() -> None:
    clock = FakeClock()
    with pytest.raises(AssertionError, match=r"caught up at 0 virtual seconds did not hold "
                                             r"within 0.05s"):
        await advance_until(clock, lambda: False, within=5, caught_up=lambda: False,
                            timeout=0.05)
    assert clock.monotonic() == 0.0
    with pytest.raises(ValueError, match="step must be > 0"):
        await advance_until(clock, lambda: False, within=5, step=0)


# -- Events ------------------------------------------------------------------------------------

async def post_event(client: Client, about: RawObject, name: str, *, reason: str,
                     message: str, type_: str = "Normal", count: int = 1) -> None:
    meta = about["metadata"]
    await client.create(EVENT, cast(RawObject, {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": meta["namespace"]},
        "involvedObject": {"apiVersion": about["apiVersion"], "kind": about["kind"],
                           "name": meta["name"], "namespace": meta["namespace"],
                           "uid": meta["uid"]},
        "reason": reason, "message": message, "type": type_, "count": count,
        "firstTimestamp": f"2026-01-01T00:00:0{count}Z",
        "lastTimestamp": f"2026-01-01T00:00:0{count}Z",
        "source": {"component": "test"},
    }))


async def test_events_about_an_object_filtered_by_reason_type_and_message(
        client: Client) -> None:
    cm = await client.create(CONFIGMAP, {"metadata": {"name": "cm", "namespace": "default"}})
    other = await client.create(CONFIGMAP, {"metadata": {"name": "other",
                                                         "namespace": "default"}})
    await post_event(client, cm, "cm.1", reason="Created", message="Deployment cm")
    await post_event(client, cm, "cm.2", reason="Failed", message="quota exceeded: 3 > 2",
                     type_="Warning", count=3)
    await post_event(client, other, "other.1", reason="Created", message="Deployment other")

    assert [e.get("reason") for e in await events_about(client, cm)] == ["Created", "Failed"]
    assert [e["metadata"]["name"] for e in await events_about(client, cm, reason="Created")] \
        == ["cm.1"]
    assert [e.get("reason") for e in await events_about(client, cm, type="Warning")] == [
        "Failed"]
    assert await events_about(client, cm, message="quota") != []
    assert await events_about(client, cm, message=re.compile(r"\d+ > \d+")) != []
    assert await events_about(client, cm, reason="Created", type="Warning") == []
    # an object built locally (no uid) is matched by kind, namespace and name
    local: RawObject = {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "other", "namespace": "default"}}
    assert [e["metadata"]["name"] for e in await events_about(client, local)] == ["other.1"]


async def test_expect_event_waits_counts_and_says_what_the_object_got(client: Client) -> None:
    cm = await client.create(CONFIGMAP, {"metadata": {"name": "cm", "namespace": "default"}})

    async def later() -> None:  # posted in the background, as an EventRecorder does
        await asyncio.sleep(0.1)
        await post_event(client, cm, "cm.1", reason="Retried", message="try again", count=2)

    task = asyncio.create_task(later())
    (found,) = await expect_event(client, cm, reason="Retried", timeout=5)
    await task
    assert found["metadata"]["name"] == "cm.1"
    assert await expect_event(client, cm, reason="Retried", count=2, timeout=1) == [found]
    with pytest.raises(AssertionError) as failed:
        await expect_event(client, cm, reason="Retried", count=3, timeout=0.1)
    assert str(failed.value) == (
        "no Event about ConfigMap default/cm with reason='Retried', count=3 within 0.1s; "
        "it got: Normal Retried: 'try again' (x2)")
    with pytest.raises(AssertionError, match=r"with reason='Created', type='Warning', "
                                             r"message='x' within 0.1s; it got: Normal Retried"):
        await expect_event(client, cm, reason="Created", type="Warning", message="x",
                           timeout=0.1)
    fresh = await client.create(CONFIGMAP, {"metadata": {"name": "fresh",
                                                         "namespace": "default"}})
    with pytest.raises(AssertionError, match=r"with any fields within 0\.1s; it got: none$"):
        await expect_event(client, fresh, timeout=0.1)


# -- the fake-clock server, and run_operator on its clock --------------------------------------

async def test_the_fake_clock_server_and_the_operator_share_its_clock(
        apiserver_on_fake_clock: ApiServer, fake_clock: FakeClock) -> None:
    assert apiserver_on_fake_clock.clock is fake_clock
    async with run_operator(Operator(name="none"), apiserver_on_fake_clock) as mgr:
        assert mgr.clock is fake_clock
        await fake_clock.advance(3600)
        cm = await mgr.client.create(CONFIGMAP, {"metadata": {"name": "t",
                                                              "namespace": "default"}})
        assert cm["metadata"]["creationTimestamp"] == "2026-01-01T01:00:00Z"


# -- what the simulated kubelet reads ----------------------------------------------------------

def test_pod_annotations_are_the_tables_and_typed() -> None:
    assert [a.name for a in POD_ANNOTATIONS] == [
        "sim.asyncop.io/start-seconds", "sim.asyncop.io/ready", "sim.asyncop.io/run-seconds",
        "sim.asyncop.io/exit-code"]
    assert pod_annotations() == {}
    assert pod_annotations(start_seconds=2, ready=False, run_seconds=0.5, exit_code=3) == {
        "sim.asyncop.io/exit-code": "3", "sim.asyncop.io/ready": "false",
        "sim.asyncop.io/run-seconds": "0.5", "sim.asyncop.io/start-seconds": "2"}
    with pytest.raises(ValueError, match="run-seconds: seconds must be a number >= 0"):
        pod_annotations(run_seconds=-1)
    with pytest.raises(ValueError, match="exit-code: must be an integer"):
        pod_annotations(exit_code=True)


def test_the_pod_simulator_reads_exactly_the_tables_annotations() -> None:
    """One table: no simulator spells an annotation of its own outside config.py."""
    names = {a.name for a in POD_ANNOTATIONS}
    for path in sorted((ROOT / "asyncop/apiserver/simulators").glob("*.py")):
        spelled = set(re.findall(r'"(sim\.asyncop\.io/[a-z-]+)"', path.read_text()))
        assert spelled <= (names if path.name == "config.py" else set()), path.name
    assert {simconfig.START_SECONDS_ANNOTATION, simconfig.READY_ANNOTATION,
            simconfig.RUN_SECONDS_ANNOTATION, simconfig.EXIT_CODE_ANNOTATION} == names


def job_pod(name: str, annotations: dict[str, str]) -> RawObject:
    return {"metadata": {"name": name, "namespace": "default", "annotations": annotations},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox"}]}}


async def test_each_annotation_does_what_the_table_says(
        apiserver_on_fake_clock: ApiServer, fake_clock: FakeClock) -> None:
    """kube: the phases and container states a kubelet reports (pkg/kubelet/status); here
    steered by the table's annotations on a FakeClock."""
    async with Client(await load_config(url=apiserver_on_fake_clock.url)) as client:
        async def status(name: str) -> dict[str, Any]:
            return (await client.get(POD, name, namespace="default")).get("status") or {}

        async def phase(name: str) -> str | None:
            return (await status(name)).get("phase")

        # no command, restartPolicy Never: run-seconds and exit-code make it run to completion
        await client.create(POD, job_pod("fails", pod_annotations(
            start_seconds=5, run_seconds=10, exit_code=3)))
        await client.create(POD, job_pod("unready", pod_annotations(ready=False)))
        await client.create(POD, job_pod("serves", {}))  # no command: runs until deleted

        async def running() -> bool:
            return await phase("fails") == "Running"

        async def failed() -> bool:
            return await phase("fails") == "Failed"

        assert await phase("fails") == "Pending"
        assert await advance_until(fake_clock, running, within=10) == 5.0
        assert await advance_until(fake_clock, failed, within=20) == 10.0
        (state,) = (await status("fails"))["containerStatuses"]
        assert state["state"]["terminated"]["exitCode"] == 3
        assert state["state"]["terminated"]["reason"] == "Error"

        unready = await status("unready")
        assert unready["phase"] == "Running"
        ready = {c["type"]: c for c in unready["conditions"]}["Ready"]
        assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
        await client.patch(POD, "unready", {"metadata": {"annotations": pod_annotations(
            ready=True)}}, namespace="default")

        async def now_ready() -> bool:
            conditions = (await status("unready"))["conditions"]
            return bool({c["type"]: c["status"] for c in conditions}["Ready"] == "True")

        assert await advance_until(fake_clock, now_ready, within=1) == 0.0
        assert await phase("serves") == "Running"  # 15 s and more: it never ends
