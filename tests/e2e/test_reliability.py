"""SPEC §9 end to end: the six bundled operators converge, level-triggered, under trouble.

Each test runs every bundled controller in a Manager against an embedded ApiServer on a
FakeClock, creates a mix of objects (the samples and more), makes trouble while they
converge (bursts of spec updates, cut watches, 410 Expired, injected 5xx/429, a slow server,
a poison object, an API server restart, a leader change), and then checks the END STATE in
the server: every object matches what its latest spec implies (`reliability_kit.problems`)
and nothing was created twice (`reliability_kit.at_most_once`, from the server's own event
stream followed since before the first object existed).
"""

from __future__ import annotations

from datetime import timedelta

from reliability_kit import (
    EXPECT_READY,
    World,
    at_most_once,
    network,
    obj,
    problems,
    running,
    samples,
    start_world,
)

from asyncop.api.kinds import DEPLOYMENT, POD
from asyncop.clock import format_time
from asyncop.controllers.kinds import AT, CRDKIND, FOO, JINGHZHU, NETWORK
from asyncop.testing import FakeClock, eventually

DUE = "2019-04-12T10:12:00Z"


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


async def test_burst_of_updates_with_cut_watches_and_410_converges_once(
        fake_clock: FakeClock) -> None:
    clock = fake_clock
    async with start_world(clock) as world, running(world):
        history = await _populate(world)
        for round_ in range(3):
            # Trouble while converging: partial progress, then cuts, 410 and a new burst.
            floor = 3 * (round_ + 1)
            await eventually(lambda: len(world.items(POD)) > floor, timeout=10)  # noqa: B023
            world.server.faults.cut_watches()
            world.server.faults.expire_history()
            await _burst(world, round_, history)
            await clock.advance(0.5)
            world.server.faults.cut_watches()
            await clock.advance(0.5)
        world.server.faults.expire_history()
        await world.drive(lambda: problems(world))
        assert at_most_once(world, desired_history=history) == []
        assert world.get(DEPLOYMENT, "web-3") is not None
        assert len(world.items(AT)) == 7
