"""Shard assignment (balance, stickiness under churn) and a replica's ShardScope.

The simulation is the issue's: 64 replicas, 256 virtual shards, 1,000,000 keys (uids), with
replicas leaving and joining; each round every replica computes the assignment from the same
membership and the current holders, as the ShardManager does. Balance: max/mean owned shards
<= 1.25 (and the keys follow); hand-over: after one membership change, the shards that move are
about S/M, and the assignment is stable in the next round (bounded hand-over time: one round to
decide, then the drain and one retry period).
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter

from asyncop.api.shards import ShardSpace
from asyncop.runtime.shards import ShardScope, assign
from asyncop.testing import FakeClock


def uid_in(space: ShardSpace, shard: int) -> str:
    """A uid (a UUID, as the API server makes them) that falls in `shard`."""
    rng = random.Random(shard)
    while True:
        uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if space.shard_of_uid(uid) == shard:
            return uid


def loads(assignment: dict[int, str]) -> Counter[str]:
    return Counter(assignment.values())


def test_every_shard_is_assigned_once_and_balanced() -> None:
    for shards, members in ((16, 3), (16, 5), (256, 64), (64, 64), (4, 8)):
        names = [f"replica-{i}" for i in range(members)]
        out = assign(shards, names)
        assert sorted(out) == list(range(shards))
        load = loads(out)
        assert max(load.values()) - min(load.values(), default=0) <= 1 or members > shards
        assert max(load.values()) <= -(-shards // members)
    assert assign(16, []) == {}


def test_the_assignment_is_deterministic_and_sticky() -> None:
    names = ["a", "b", "c"]
    first = assign(16, names)
    assert assign(16, list(reversed(names))) == first
    assert assign(16, names, first) == first  # nothing changes: nothing moves
    joined = assign(16, [*names, "d"], first)
    assert sum(first[s] != joined[s] for s in range(16)) == 4  # exactly d's fair share
    assert loads(joined) == {"a": 4, "b": 4, "c": 4, "d": 4}
    left = assign(16, ["a", "b"], first)
    moved = {s for s in range(16) if first[s] != left[s]}
    assert moved == {s for s, m in first.items() if m == "c"}  # only c's shards move


def test_64_replicas_and_a_million_keys_stay_balanced_through_churn() -> None:
    space = ShardSpace(256)
    rng = random.Random(5866)
    uids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(1_000_000)]
    keys_per_shard = Counter(space.shard_of_uid(u) for u in uids)
    members = [f"replica-{i}" for i in range(64)]
    current = assign(256, members)
    worst_ratio, worst_moved = 0.0, 0
    for round_ in range(20):
        if round_ % 2 == 0:
            members.remove(rng.choice(members))  # a replica leaves (or dies)
        else:
            members.append(f"replica-new-{round_}")  # one joins
        nxt = assign(256, members, current)
        moved = sum(current.get(s) != nxt[s] for s in range(256))
        worst_moved = max(worst_moved, moved)
        assert assign(256, members, nxt) == nxt  # settled after one round
        load = loads(nxt)
        mean = 256 / len(members)
        worst_ratio = max(worst_ratio, max(load.values()) / mean)
        keys = Counter()
        for shard, member in nxt.items():
            keys[member] += keys_per_shard[shard]
        assert max(keys.values()) / (1_000_000 / len(members)) < 1.6
        current = nxt
    assert worst_ratio <= 1.25
    assert worst_moved <= 8  # about S/M = 4 per change, never a reshuffle


async def test_scope_admits_only_active_shards_and_drains_in_flight_work() -> None:
    clock = FakeClock()
    scope = ShardScope(ShardSpace(4), clock=clock)
    uid = uid_in(ShardSpace(4), 2)
    assert scope.admit(uid) is None and scope.selector() is None
    seen: list[set[int]] = []
    scope.on_acquired(seen.append)
    version = scope.version
    scope.activate([2, 3])
    assert seen == [{2, 3}] and scope.version > version
    assert scope.selector() == ShardSpace(4).selector([2, 3])
    shard = scope.admit(uid)
    assert shard == 2 and scope.in_flight(2) == 1
    drained = asyncio.create_task(scope.drain(2, grace=30))
    await asyncio.sleep(0)
    assert not drained.done() and scope.admit(uid) is None  # draining: nothing new
    assert 2 in scope.held  # still held (and watched) until released
    scope.done(shard)
    assert await drained is True
    scope.release(2)
    assert scope.held == {3}


async def test_a_drain_is_bounded_and_a_revoke_is_immediate() -> None:
    clock = FakeClock()
    scope = ShardScope(ShardSpace(2), clock=clock)
    scope.activate([0, 1])
    uid = uid_in(ShardSpace(2), 0)
    scope.admit(uid)
    drained = asyncio.create_task(scope.drain(0, grace=5))
    await clock.advance(5)
    assert await drained is False  # the grace period ran out
    lost: list[set[int]] = []
    scope.on_revoked(lost.append)
    scope.revoke([0, 1])
    assert lost == [{0, 1}] and scope.held == set() and scope.admit(uid) is None
