"""LeaderElector on a real Lease in the embedded ApiServer, time driven by a FakeClock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from asyncop.api.kinds import LEASE
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.runtime.leader import LeaderElector, format_micro_time
from asyncop.testing import FakeClock
from tests.runtime.lease_driver import TrackedClient, quiesce, step

NS = "default"


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[Client]:
    async with Client(ClientConfig(host=server.url), max_retries=0) as c:
        yield c


class Candidate:
    def __init__(self, client: Client, clock: FakeClock, identity: str) -> None:
        self.tracked = TrackedClient(client)
        self.started = 0
        self.stopped = 0
        self.elector = LeaderElector(
            self.tracked,  # type: ignore[arg-type]
            name="op",
            namespace=NS,
            identity=identity,
            clock=clock,
            on_started_leading=self._started,
            on_stopped_leading=self._stopped,
        )
        self.task: asyncio.Task[None] | None = None

    def _started(self) -> None:
        self.started += 1

    def _stopped(self) -> None:
        self.stopped += 1

    def start(self) -> None:
        self.task = asyncio.create_task(self.elector.run())

    async def cancel(self) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.wait([self.task])


async def lease(client: Client) -> dict[str, Any]:
    obj = await client.get(LEASE, "op", namespace=NS)
    return dict(obj["spec"])


@pytest.fixture
async def pair(client: Client) -> AsyncIterator[tuple[FakeClock, Candidate, Candidate]]:
    clock = FakeClock()
    a, b = Candidate(client, clock, "a"), Candidate(client, clock, "b")
    a.start()
    await quiesce(clock, a.tracked)  # a creates the lease first
    b.start()
    await quiesce(clock, a.tracked, b.tracked)
    yield clock, a, b
    for c in (a, b):
        if c.task is not None and not c.task.done():
            await c.cancel()


def test_micro_time_format() -> None:
    from datetime import UTC, datetime

    assert format_micro_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == (
        "2026-01-02T03:04:05.000000Z"
    )


async def test_exactly_one_leads_and_keeps_renewing(pair: Any, client: Client) -> None:
    clock, a, b = pair
    assert a.elector.is_leader and not b.elector.is_leader
    first = await lease(client)
    assert first["holderIdentity"] == "a"
    assert first["leaseDurationSeconds"] == 15
    assert first["leaseTransitions"] == 0
    assert first["renewTime"].endswith("Z") and len(first["renewTime"]) == 27
    # someone labels the lease: renewals keep the label (and survive the one Conflict)
    await client.patch(LEASE, "op", {"metadata": {"labels": {"team": "ops"}}}, namespace=NS)
    await step(clock, 40, a.tracked, b.tracked)
    assert a.elector.is_leader and not b.elector.is_leader
    assert (a.started, a.stopped, b.started) == (1, 0, 0)
    later = await lease(client)
    assert later["holderIdentity"] == "a"
    assert later["acquireTime"] == first["acquireTime"]
    assert later["renewTime"] > first["renewTime"]  # renewed on the (fake) wall clock
    assert later["leaseTransitions"] == 0
    assert b.elector.leader == "a"
    labels = (await client.get(LEASE, "op", namespace=NS))["metadata"].get("labels")
    assert labels == {"team": "ops"}


async def test_cancelled_leader_releases_and_standby_takes_over_within_a_retry(
    pair: Any, client: Client
) -> None:
    clock, a, b = pair
    await step(clock, 5, a.tracked, b.tracked)
    await a.cancel()
    assert a.stopped == 1 and not a.elector.is_leader
    released = await lease(client)
    assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
    await step(clock, b.elector.retry_period, b.tracked)
    assert b.elector.is_leader and b.started == 1
    spec = await lease(client)
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1


async def test_frozen_leader_is_replaced_after_the_lease_duration(
    pair: Any, client: Client
) -> None:
    clock, a, b = pair
    await step(clock, 3, a.tracked, b.tracked)
    last_seen = await lease(client)
    a.tracked.frozen = True  # a's requests hang: it cannot renew any more
    t0 = clock.monotonic()
    await step(clock, 12, b.tracked)
    # a gave up within the renew deadline (10 s) of its last renew; b still waits.
    assert not a.elector.is_leader and a.stopped == 1
    assert not b.elector.is_leader
    await step(clock, 8, b.tracked)
    # b observed the last renewal at most retry_period before t0: 15 s later it takes over.
    assert b.elector.is_leader, clock.monotonic() - t0
    taken = await lease(client)
    assert taken["holderIdentity"] == "b"
    assert taken["leaseTransitions"] == last_seen["leaseTransitions"] + 1
    # a wakes up again: it makes no further write, b keeps leading.
    a.tracked.frozen = False
    await step(clock, 30, a.tracked, b.tracked)
    final = await lease(client)
    assert final["holderIdentity"] == "b"
    assert final["leaseTransitions"] == taken["leaseTransitions"]
    assert not a.elector.is_leader and a.started == 1
    assert b.elector.is_leader and b.stopped == 0


async def test_leader_whose_writes_fail_steps_down(pair: Any, client: Client) -> None:
    clock, a, b = pair
    a.tracked.fail_writes = True
    await step(clock, 10.5, a.tracked, b.tracked)
    assert not a.elector.is_leader and a.stopped == 1
    await step(clock, 10, a.tracked, b.tracked)
    assert b.elector.is_leader
    assert (await lease(client))["holderIdentity"] == "b"


async def test_elector_validates_its_timings(client: Client) -> None:
    with pytest.raises(ValueError, match="lease_duration"):
        LeaderElector(client, name="x", namespace=NS, identity="i", clock=FakeClock(),
                      lease_duration=5, renew_deadline=10)
