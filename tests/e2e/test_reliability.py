"""Reliability end to end: the six bundled operators converge, level-triggered, under trouble.

Each test runs every bundled controller in a Manager against an embedded ApiServer on a
FakeClock, creates a mix of objects (the samples and more), makes trouble while they
converge (bursts of spec updates, cut watches, 410 Expired, injected 5xx/429, a slow server,
a poison object, an API server restart, a leader change), and then checks the END STATE in
the server: every object matches what its latest spec implies (`reliability_kit.problems`)
and nothing was created twice (`reliability_kit.at_most_once`, from the server's own event
stream followed since before the first object existed). One test proves the checkers see
drift and a second run; one strict xfail records a known gap (409s on status writes with no
newer version are never retried).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
import structlog

from asyncop.api import Request
from asyncop.api.kinds import DEPLOYMENT, LEASE, POD
from asyncop.clock import format_time
from asyncop.controllers.kinds import AT, CRDKIND, FOO, JINGHZHU, NETWORK
from asyncop.runtime.manager import Manager
from asyncop.testing import FakeClock, eventually
from tests.e2e.reliability_kit import (
    EXPECT_READY,
    NS,
    World,
    at_most_once,
    errors,
    network,
    new_manager,
    obj,
    problems,
    running,
    samples,
    start_world,
    stop_manager,
)

DUE = "2019-04-12T10:12:00Z"


@pytest.fixture(autouse=True)
def quiet_logs() -> Iterator[None]:
    """Warnings and errors only, plain tracebacks: these tests log hundreds of expected
    failures, and the default console renderer's rich tracebacks cost ~0.5 s each."""
    saved = structlog.get_config()
    structlog.configure(
        processors=[structlog.processors.add_log_level,
                    structlog.dev.ConsoleRenderer(colors=False,
                                                  exception_formatter=structlog.dev.plain_traceback)],
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
    )
    try:
        yield
    finally:
        structlog.configure(**saved)


async def _populate(world: World) -> dict[str, list[int]]:
    """The samples plus more of each kind; returns each Jinghzhu's desired history."""
    for doc in samples():
        await world.create(doc)
    soon = format_time(world.clock.now() + timedelta(seconds=20))
    for i in range(4):
        await world.create(obj(FOO, f"foo-{i}", {"deploymentName": f"web-{i}", "replicas": 1}))
        await world.create(obj(AT, f"due-{i}", {"schedule": DUE, "command": f"echo {i}"}))
    await world.create(obj(AT, "soon", {"schedule": soon, "command": "echo soon"}))
    for i, choice in enumerate(("mysql", "tomcat", "mysql")):
        await world.create(obj(CRDKIND, f"ck-{i}", {"choice": choice, "replicas": 1}))
    history = {"jinghzhu-example": [2]}
    for i in range(3):
        await world.create(obj(JINGHZHU, f"jh-{i}", {"desired": 1 + i}))
        history[f"jh-{i}"] = [1 + i]
    await world.create(network("net-a", "10.0.0.0/24", "10.0.0.1", True))
    await world.create(network("net-b", "10.1.0.0/24", "10.2.0.1", False))
    return history


async def _burst(world: World, round_: int, history: dict[str, list[int]]) -> None:
    """One burst of spec updates: scale up/down, choice change, desired change, verdicts."""
    for i in range(4):
        await world.set_spec(FOO, f"foo-{i}", replicas=1 + (i + round_ * 3) % 4)
    if round_ == 1:
        await world.set_spec(CRDKIND, "ck-0", choice="tomcat")
        await world.set_spec(CRDKIND, "ck-1", choice="mysql")
    await world.set_spec(CRDKIND, "ck-2", replicas=1 + (round_ * 2) % 3)
    desired = {0: [3, 0, 2], 1: [0, 4, 1], 2: [5, 1, 3]}
    for i in range(3):
        value = desired[i][round_ % 3]
        await world.set_spec(JINGHZHU, f"jh-{i}", desired=value)
        history[f"jh-{i}"].append(value)
    if round_ % 2 == 0:  # the gateway is the broadcast address
        await world.set_spec(NETWORK, "net-a", cidr="10.0.0.0/24", gateway="10.0.0.255",
                             annotations={EXPECT_READY: "False"})
    else:
        await world.set_spec(NETWORK, "net-a", cidr="10.0.0.0/16", gateway="10.0.3.1",
                             annotations={EXPECT_READY: "True"})


async def _reacting(world: World, created: int) -> None:
    """Wait until `created` creations are on record: the operators are reacting. Informers
    back off on the fake clock after a cut and a 410, so virtual time moves on in small steps
    while waiting (in real time alone they could wait for ever)."""
    for _ in range(40):
        try:
            await eventually(lambda: world.ledger.created.total() >= created, timeout=0.25)
            return
        except AssertionError:
            await world.clock.advance(0.25)
    assert world.ledger.created.total() >= created, "the operators did not react"


async def test_burst_of_updates_with_cut_watches_and_410_converges_once(
        fake_clock: FakeClock) -> None:
    clock = fake_clock
    async with start_world(clock) as world, running(world):
        mark = world.ledger.created.total()
        history = await _populate(world)
        for round_ in range(3):
            # Trouble while converging: the operators are reacting to the last changes (new
            # objects appear), then cuts, 410 and a new burst.
            await _reacting(world, mark + 10)
            world.server.faults.cut_watches()
            world.server.faults.expire_history()
            mark = world.ledger.created.total()
            await _burst(world, round_, history)
            await clock.advance(0.5)
            world.server.faults.cut_watches()
            await clock.advance(0.5)
        world.server.faults.expire_history()
        await world.drive(lambda: problems(world))
        assert at_most_once(world, desired_history=history) == []
        assert world.get(DEPLOYMENT, "web-3") is not None
        assert len(world.items(AT)) == 7


async def test_flaky_slow_server_and_a_poison_object(fake_clock: FakeClock) -> None:
    clock = fake_clock
    async with start_world(clock) as world, running(world) as mgr:
        faults = world.server.faults
        # The poison: a Foo whose status can never be written, so its reconcile always
        # raises (a 403, which the client does not retry: only the work queue's backoff
        # paces it).
        faults.fail(path="/foos/poison/status", status=403, count=None)
        await world.create(obj(FOO, "poison", {"deploymentName": "poison-web", "replicas": 1}))
        history = await _populate(world)
        for round_ in range(3):
            # A fraction of the traffic fails for a while: 5xx, 429 with Retry-After, and
            # a slow server, while a burst of updates lands.
            faults.fail(verb="create", status=500, count=3)
            faults.fail(verb="update", status=429, retry_after=1, count=3)
            faults.fail(verb="list", status=503, retry_after=2, count=2)
            faults.fail(verb="get", status=500, count=2)
            faults.fail(verb="delete", status=503, retry_after=1, count=2)
            faults.fail(verb="watch", status=500, count=2)
            faults.delay(seconds=0.4, count=30)
            hit = faults.injected + 8  # wait until the faults are biting
            await world.drive(lambda: [] if faults.injected >= hit else ["calm"],  # noqa: B023
                              limit=60)
            faults.cut_watches()
            await _burst(world, round_, history)
        await world.drive(lambda: problems(world, skip={"poison"}))
        assert faults.injected > 30
        assert at_most_once(world, desired_history=history) == []
        foo = world.controllers["foo"]
        assert foo.queue is not None
        poison = world.get(FOO, "poison")
        assert poison is not None and not poison.get("status")
        assert world.get(DEPLOYMENT, "poison-web") is not None
        # Its retries stay bounded: per-key exponential backoff (5 ms doubling), no hot
        # loop. The n-th failure waits 0.005 * 2**n s, so by virtual time t there are at
        # most log2(t / 0.005) + 1 of them; a few more come from its Deployment's events.
        faults.clear()  # only the poison is left failing
        faults.fail(path="/foos/poison/status", status=403, count=None)
        failures = foo.queue.num_requeues(Request("poison", "default"))
        assert failures >= 1
        before = errors(mgr, "foo")
        t1 = clock.monotonic() + 240
        await world.drive(lambda: [] if clock.monotonic() >= t1 else ["later"],
                          step=4, settle=0.03)
        quiet = errors(mgr, "foo") - before
        total = foo.queue.num_requeues(Request("poison", "default"))
        assert quiet >= 1 and total == failures + quiet, (failures, quiet)  # still retried
        assert total <= math.log2(t1 / 0.005) + 6, (failures, quiet, t1)
        assert problems(world, skip={"poison"}) == []


async def test_api_server_restarts_mid_convergence(fake_clock: FakeClock) -> None:
    clock = fake_clock
    async with start_world(clock) as world, running(world):
        history = await _populate(world)
        await eventually(lambda: len(world.items(POD)) > 6, timeout=10)
        await _burst(world, 0, history)
        await world.server.restart(keep_state=True)  # the operator's connections all break
        await clock.advance(1)
        await _burst(world, 1, history)
        await world.drive(lambda: [] if len(world.items(POD)) > 12 else ["calm"], limit=60)
        await world.server.restart(keep_state=True)
        await _burst(world, 2, history)
        await world.drive(lambda: problems(world))
        assert at_most_once(world, desired_history=history) == []


async def test_leader_change_mid_convergence_runs_no_command_twice(
        fake_clock: FakeClock) -> None:
    clock = fake_clock
    async with start_world(clock) as world:
        first = new_manager(world, identity="first")
        await first.start()
        second: Manager | None = None
        try:
            await eventually(lambda: first.is_leader, timeout=10)
            second = new_manager(world, identity="second")
            await second.start()
            history = await _populate(world)
            # The leader has started the due Ats (RUNNING, pods created, not finished: time
            # stands still) and is half-way through the rest when it dies without releasing
            # its lease.
            await eventually(lambda: all(world.ledger.created[("pods", f"due-{i}-pod")]
                                         for i in range(4)), timeout=10)
            assert not second.is_leader
            await stop_manager(world, first)
            dead = clock.now()
            await _burst(world, 0, history)
            # The standby takes over within the lease duration (15 s) plus one jittered
            # retry period (2 s, jitter 1.2), as the Lease it acquired records.
            await world.drive(lambda: [] if second.is_leader else ["standby"], step=1, limit=30)
            lease = world.get(LEASE, "asyncop-reliability")
            assert lease is not None and lease["spec"]["holderIdentity"] == "second"
            acquired = datetime.fromisoformat(lease["spec"]["acquireTime"])
            assert (acquired - dead).total_seconds() <= 15 + 2 * 2.2 + 1, (acquired, dead)
            await world.drive(lambda: problems(world))
            assert second.is_leader
            assert at_most_once(world, desired_history=history) == []
        finally:
            if second is not None:
                await stop_manager(world, second)
            await stop_manager(world, first)


async def test_graceful_stop_mid_convergence_hands_the_lease_over_at_once(
        fake_clock: FakeClock) -> None:
    clock = fake_clock
    async with start_world(clock) as world:
        first = new_manager(world, identity="first", release_on_cancel=True)
        await first.start()
        second: Manager | None = None
        try:
            await eventually(lambda: first.is_leader, timeout=10)
            second = new_manager(world, identity="second")
            await second.start()
            history = await _populate(world)
            await eventually(lambda: all(world.ledger.created[("pods", f"due-{i}-pod")]
                                         for i in range(4)), timeout=10)
            await stop_manager(world, first)  # SIGTERM: drain, then release the lease
            stopped = clock.now()
            lease = world.get(LEASE, "asyncop-reliability")
            assert lease is not None and not lease["spec"].get("holderIdentity")
            # Released, the lease is taken within a retry period, not a lease duration.
            await world.drive(lambda: [] if second.is_leader else ["standby"], step=0.5,
                              limit=30)
            lease = world.get(LEASE, "asyncop-reliability")
            assert lease is not None and lease["spec"]["holderIdentity"] == "second"
            acquired = datetime.fromisoformat(lease["spec"]["acquireTime"])
            assert (acquired - stopped).total_seconds() <= 1 + 2 * 2.2 + 1, (acquired, stopped)
            await _burst(world, 1, history)
            await world.drive(lambda: problems(world))
            assert at_most_once(world, desired_history=history) == []
        finally:
            if second is not None:
                await stop_manager(world, second)
            await stop_manager(world, first)


async def test_injected_status_conflicts_are_retried(fake_clock: FakeClock) -> None:
    clock = fake_clock
    async with start_world(clock) as world, running(world):
        faults = world.server.faults
        faults.fail(verb="update", path="/status", status=409, count=2)
        await world.create(network("net-a", "10.0.0.0/24", "10.0.0.1", True))
        await world.create(network("net-b", "10.1.0.0/24", "10.2.0.1", False))
        await world.drive(lambda: problems(world), step=2, limit=20)
        assert faults.injected == 2


async def test_the_checks_see_drift_and_a_second_run(fake_clock: FakeClock) -> None:
    """The checkers themselves: a converged world passes; drift and a re-run do not."""
    clock = fake_clock
    async with start_world(clock) as world:
        async with running(world):
            await world.create(obj(AT, "once", {"schedule": DUE, "command": "true"}))
            await world.create(obj(FOO, "foo", {"deploymentName": "web", "replicas": 2}))
            await world.drive(lambda: problems(world))
            assert at_most_once(world, desired_history={}) == []
        # With no operator running: drift in a Deployment, and the At's pod run again.
        dep = world.get(DEPLOYMENT, "web")
        assert dep is not None
        dep["spec"]["replicas"] = 3
        await world.server.store.update(world.rt(DEPLOYMENT), dict(dep))
        assert problems(world) == ["foo foo: deployment replicas 3 != 2"]
        pod = world.get(POD, "once-pod")
        assert pod is not None
        pod["metadata"]["finalizers"] = []
        await world.server.store.update(world.rt(POD), dict(pod))
        await world.server.store.delete(world.rt(POD), NS, "once-pod")
        await eventually(lambda: world.ledger.created[("pods", "once-pod")] == 1
                         and world.get(POD, "once-pod") is None, timeout=10)
        del pod["metadata"]["resourceVersion"], pod["metadata"]["uid"]
        await world.server.store.create(world.rt(POD), dict(pod))
        await eventually(lambda: world.ledger.created[("pods", "once-pod")] == 2, timeout=10)
        assert at_most_once(world, desired_history={}) == ["once-pod created 2 times",
                                                           "pods/once-pod created 2 times"]
