"""The shared machinery: event routing, resync after a lost subscription, retries on errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from asyncop.api import Conflict, status_body
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import Obj, Simulator, pump
from asyncop.testing import FakeClock
from tests.apiserver.simulators.simkit import cancel_all, quiesce

PODS = ResourceType(group="", version="v1", plural="pods", kind="Pod")
CMS = ResourceType(group="", version="v1", plural="configmaps", kind="ConfigMap")


class ScriptedStore:
    """Only what `pump` uses: each subscribe() plays the next script, then ends."""

    def __init__(self, *scripts: list[tuple[str, ResourceType, Obj]]) -> None:
        self.scripts = list(scripts)

    async def subscribe(self) -> AsyncIterator[tuple[str, ResourceType, Obj]]:
        if not self.scripts:
            await asyncio.Event().wait()  # the last subscription stays open
        for event in self.scripts.pop(0):
            yield event


class Recorder(Simulator[str]):
    watched = frozenset({("", "pods")})

    def __init__(self, clock: FakeClock, *, fail: dict[str, Exception] | None = None,
                 resync_period: float | None = None) -> None:
        super().__init__(None, clock, retry_delay=1.0,  # type: ignore[arg-type]
                         resync_period=resync_period)
        self.seen: list[str] = []
        self.synced: list[str] = []
        self.resyncs = 0
        self.fail = fail or {}
        self.always_fail: set[str] = set()

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        self.seen.append(f"{event} {rt.plural}/{obj['metadata']['name']}")
        self.add(obj["metadata"]["name"])

    async def resync(self) -> None:
        self.resyncs += 1

    async def sync(self, key: str) -> None:
        self.synced.append(key)
        error = self.fail.pop(key, None)
        if error is not None:
            raise error
        if key in self.always_fail:
            raise RuntimeError("still failing")


def ev(event: str, rt: ResourceType, name: str) -> tuple[str, ResourceType, Obj]:
    return (event, rt, {"metadata": {"name": name}})


async def test_pump_routes_by_resource_and_resyncs_after_a_lost_subscription() -> None:
    clock = FakeClock()
    sim = Recorder(clock)
    store = ScriptedStore([ev("ADDED", PODS, "a"), ev("ADDED", CMS, "c")],
                          [ev("MODIFIED", PODS, "a")])
    tasks = [asyncio.create_task(sim.run())]
    try:
        await quiesce()
        assert sim.resyncs == 1  # at start
        tasks.append(asyncio.create_task(
            pump(store, clock, [sim], retry_delay=1.0)))  # type: ignore[arg-type]
        await quiesce()
        assert sim.seen == ["ADDED pods/a", "MODIFIED pods/a"]  # configmaps not routed
        assert sim.resyncs >= 2  # the lost subscriptions asked for a (coalesced) resync
        assert "a" in sim.synced
    finally:
        await cancel_all(tasks)


async def test_conflicts_retry_at_once_other_errors_after_the_retry_delay() -> None:
    clock = FakeClock()
    conflict = Conflict(status_body(409, "stale", reason="Conflict"))
    sim = Recorder(clock, fail={"x": conflict, "y": RuntimeError("boom")})
    task = asyncio.create_task(sim.run())
    try:
        sim.add("x")
        sim.add("y")
        await quiesce()
        assert sim.synced.count("x") == 2  # retried at once after the Conflict
        assert sim.synced.count("y") == 1
        await clock.advance(0.9)
        await quiesce()
        assert sim.synced.count("y") == 1
        await clock.advance(0.2)
        await quiesce()
        assert sim.synced.count("y") == 2  # retried after retry_delay on the clock
    finally:
        await cancel_all([task])


async def test_periodic_resync_only_when_configured() -> None:
    clock = FakeClock()
    quiet, periodic = Recorder(clock), Recorder(clock, resync_period=10.0)
    tasks = [asyncio.create_task(quiet.run()), asyncio.create_task(periodic.run())]
    try:
        await quiesce()
        await clock.advance(25)
        await quiesce()
        assert (quiet.resyncs, periodic.resyncs) == (1, 3)
    finally:
        await cancel_all(tasks)


async def test_failing_keys_back_off_exponentially() -> None:
    clock = FakeClock()
    sim = Recorder(clock)
    sim.always_fail.add("z")
    task = asyncio.create_task(sim.run())
    try:
        sim.add("z")
        await quiesce()
        attempts = []
        for _ in range(16):
            await clock.advance(1.0)
            await quiesce()
            attempts.append(sim.synced.count("z"))
        # first try at 0, then after 1, 2, 4, 8 seconds: at t = 1, 3, 7, 15
        assert [t + 1 for t, n in enumerate(attempts) if n > (attempts[t - 1] if t else 1)] \
            == [1, 3, 7, 15]
        sim.always_fail.clear()
        await clock.advance(16)
        await quiesce()
        n = sim.synced.count("z")
        sim.add("z")  # a success resets the back-off
        await quiesce()
        assert sim.synced.count("z") == n + 1
    finally:
        await cancel_all([task])
