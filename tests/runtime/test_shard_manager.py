"""ShardManager: shard Leases on the embedded API server, round by round on a FakeClock.

Every check below also asserts the safety property after each round: no shard is held by two
replicas at once (their ShardScopes are disjoint), which is what keeps a key from being
reconciled by two replicas at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from asyncop.api.kinds import LEASE
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.runtime.sharding import ShardingConfig, ShardManager, shard_lease_name
from asyncop.testing import FakeClock, advance_until
from asyncop.testing.chaos.links import Link

SHARDS = 16


@pytest.fixture
async def client(apiserver_no_sim: ApiServer) -> AsyncIterator[Client]:
    async with Client(ClientConfig(host=apiserver_no_sim.url), max_retries=0) as c:
        yield c


def manager(client: Client, clock: FakeClock, name: str) -> ShardManager:
    config = ShardingConfig(name="ops", namespace="default", shards=SHARDS)
    return ShardManager(client, config, identity=name, clock=clock)


async def rounds(clock: FakeClock, managers: list[ShardManager], n: int = 1) -> None:
    """`n` rounds: every manager ticks, hand-overs finish, then a retry period passes."""
    for _ in range(n):
        for m in managers:
            await m.tick()
            m._expire_unrenewed()
        for m in managers:
            await m.settle()
        assert_disjoint(managers)
        await clock.advance(2.0)


def assert_disjoint(managers: list[ShardManager]) -> None:
    seen: dict[int, str] = {}
    for m in managers:
        for shard in m.scope.held:
            assert shard not in seen, f"shard {shard} held by {seen[shard]} and {m.identity}"
            seen[shard] = m.identity


def owned(*managers: ShardManager) -> list[int]:
    return sorted(len(m.scope.held) for m in managers)


async def test_replicas_share_the_shards_evenly(client: Client) -> None:
    clock = FakeClock()
    ms = [manager(client, clock, n) for n in ("a", "b", "c")]
    await rounds(clock, ms, 3)
    assert owned(*ms) == [5, 5, 6]
    assert set().union(*(m.scope.held for m in ms)) == set(range(SHARDS))
    lease = await client.get(LEASE, shard_lease_name("ops", 0), namespace="default")
    holder = next(m.identity for m in ms if 0 in m.scope.held)
    assert lease["spec"]["holderIdentity"] == holder
    assert all(m.scope.active == m.scope.held for m in ms)


async def test_a_replica_that_leaves_hands_its_shards_over(client: Client) -> None:
    clock = FakeClock()
    a, b, c = (manager(client, clock, n) for n in ("a", "b", "c"))
    await rounds(clock, [a, b, c], 3)
    gone = set(c.scope.held)
    await c.stop()  # drains, releases its shard Leases, deletes its member Lease
    assert c.scope.held == set() and c.handovers == len(gone)
    await rounds(clock, [a, b], 2)  # no waiting for the lease duration
    assert owned(a, b) == [8, 8] and gone <= a.scope.held | b.scope.held


async def test_a_joining_replica_gets_its_share_by_hand_over(client: Client) -> None:
    clock = FakeClock()
    a, b = manager(client, clock, "a"), manager(client, clock, "b")
    await rounds(clock, [a, b], 3)
    before = a.handovers + b.handovers
    c = manager(client, clock, "c")
    await rounds(clock, [a, b, c], 4)
    assert owned(a, b, c) == [5, 5, 6]
    assert a.handovers + b.handovers - before == len(c.scope.held)  # moved: c's share only


async def test_a_replica_cut_off_from_the_server_stops_after_one_retry_cycle(
    apiserver_no_sim: ApiServer,
) -> None:
    """SIGTERM while the API server cannot be reached: the shards' releases fail together,
    after one request's retries (a PUT with a resourceVersion is retried 5 times, at most
    0.2 + 0.4 + 0.8 + 1.6 + 3.2 = 6.2 s), not one retry cycle per held shard (16 of them,
    at least 16 x 3.1 s one after the other), and the member Lease is not tried at all: a
    pod must exit within its grace period (30 s by default)."""
    clock = FakeClock()
    link = Link(apiserver_no_sim.port)
    await link.start()
    try:
        async with Client(ClientConfig(host=f"http://127.0.0.1:{link.port}"),
                          clock=clock) as c:
            a = manager(c, clock, "a")
            await rounds(clock, [a], 3)
            assert len(a.scope.held) == SHARDS
            link.cut()
            stopping = asyncio.create_task(a.stop())
            took = await advance_until(clock, stopping.done, within=120.0, step=0.25,
                                       interval=0.05, message="the stop")
            await stopping
    finally:
        await link.close()
    assert a.scope.held == set() and a.handovers == 0  # nothing was released
    assert took <= 10.0, took


async def test_a_crashed_replica_is_replaced_after_the_lease_duration(client: Client) -> None:
    clock = FakeClock()
    a, b, c = (manager(client, clock, n) for n in ("a", "b", "c"))
    await rounds(clock, [a, b, c], 3)
    orphans = set(c.scope.held)  # c stops renewing without releasing (SIGKILL)
    await rounds(clock, [a, b], 5)  # 10 s < 15 s: the Leases are still valid
    assert not orphans & (a.scope.held | b.scope.held)
    await rounds(clock, [a, b], 4)  # past the lease duration by our observation
    assert orphans <= a.scope.held | b.scope.held and owned(a, b) == [8, 8]


async def test_a_replica_that_cannot_renew_stops_before_anyone_else_starts(
    apiserver_no_sim: ApiServer, client: Client
) -> None:
    clock = FakeClock()
    a, b = manager(client, clock, "a"), manager(client, clock, "b")
    await rounds(clock, [a, b], 3)
    held = set(a.scope.held)
    revoked: list[set[int]] = []
    a.scope.on_revoked(revoked.append)
    apiserver_no_sim.faults.fail(verb="update", path="/leases/ops-shard-", status=500,
                                 count=None)
    await rounds(clock, [a], 6)  # 12 s without a renewal: past the 10 s renew deadline
    assert a.scope.held == set() and revoked and set().union(*revoked) == held
    assert a.losses == len(held)
    apiserver_no_sim.faults.clear()
    await rounds(clock, [a, b], 4)
    assert owned(a, b) == [8, 8]


@pytest.mark.parametrize("order", ["abc", "cba"])
async def test_deleted_leases_give_no_shard_to_two_replicas(client: Client, order: str) -> None:
    """Every Lease of the group deleted under the replicas (a stateless API server restart,
    `kubectl delete leases -l ...`): a Lease that vanished while held is still held by our
    observation until the lease duration passes, so nobody takes its shard while its holder
    may still be working on it (the holder stops at its renew deadline, as when it cannot
    renew); then the shards are shared again. Found by the chaos soak (docs/soak.md)."""
    clock = FakeClock()
    by_name = {n: manager(client, clock, n) for n in "abc"}
    ms = [by_name[n] for n in order]
    await rounds(clock, ms, 3)
    for lease in (await client.list(LEASE, namespace="default"))["items"]:
        await client.delete(LEASE, lease["metadata"]["name"], namespace="default")
    await rounds(clock, ms, 10)  # past renew deadline and lease duration: disjoint throughout
    assert set().union(*(m.scope.held for m in ms)) == set(range(SHARDS))
    assert owned(*ms) == [5, 5, 6]
