"""Shard ownership as a value: the assignment of virtual shards to replicas, and the scope of
one replica (what it holds, what it admits, what is in flight), which its informers and
controllers follow.

`assign(shards, members, current)` is sticky, bounded-load rendezvous hashing: every
(member, shard) pair has a score `fnv1a64(f"{member}/{shard}")`; members keep the shards they
hold now up to their cap (`shards // len(members)`, one more for as many members as shards are
left over), and the rest go, best pair first, to members with room. Every replica computes it
from the same membership and the same Leases and gets the same answer; the load is balanced to
within one shard (max/mean <= ceil(S/M)/(S/M)), and a member joining or leaving moves about
S/M shards, not more.

`ShardScope` is one replica's state. A shard is *held* while this replica holds its Lease;
*active* while held and admitting work; *draining* while held, admitting nothing new, until
its in-flight reconciles are done (then its Lease is released). Informers list and watch the
held shards; controllers reconcile only keys of active shards. Invariants: `admit` and
`done` pair up per reconcile; `drain` returns once nothing of the shard is in flight (or
the grace period is over); `revoke` (a lost Lease) stops admitting at once; every change bumps
`version` and wakes `wait_changed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence

from asyncop.api.shards import ShardSelector, ShardSpace, fnv1a64
from asyncop.clock import Clock, wait_for


def score(member: str, shard: int) -> int:
    return fnv1a64(f"{member}/{shard}".encode())


def assign(shards: int, members: Sequence[str],
           current: Mapping[int, str] | None = None) -> dict[int, str]:
    """Shard -> member, balanced to within one shard, moving as few shards as it can.

    `current` is who holds each shard now (from the shard Leases). Each member keeps its
    current shards up to its cap (`shards // len(members)`, plus one for the members that hold
    the most now, as many as there are shards left over), best-scored first; every other shard
    goes, best (member, shard) score first, to a member with room.
    """
    ordered = sorted(set(members))
    if not ordered:
        return {}
    live = set(ordered)
    base, extra = divmod(shards, len(ordered))
    held: dict[str, list[int]] = {m: [] for m in ordered}
    for shard, member in sorted((current or {}).items()):
        if member in live and 0 <= shard < shards:
            held[member].append(shard)
    # the members that keep one more: those holding the most now (then by score of the name)
    bigger = sorted(ordered, key=lambda m: (-len(held[m]), score(m, -1)))[:extra]
    cap = {m: base + (1 if m in bigger else 0) for m in ordered}
    out: dict[int, str] = {}
    for member in ordered:
        keep = sorted(held[member], key=lambda sh: score(member, sh), reverse=True)
        for shard in keep[:cap[member]]:
            out[shard] = member
    load = {m: sum(1 for v in out.values() if v == m) for m in ordered}
    pairs = sorted(((score(m, sh), sh, m) for sh in range(shards) if sh not in out
                    for m in ordered), reverse=True)
    for _, shard, member in pairs:
        if shard not in out and load[member] < cap[member]:
            load[member] += 1
            out[shard] = member
    return out


class ShardScope:
    """What this replica holds and admits (see the module docstring)."""

    def __init__(self, space: ShardSpace, *, clock: Clock) -> None:
        self.space = space
        self.clock = clock
        self.active: set[int] = set()
        self.draining: set[int] = set()
        self.version = 0
        self._changed = asyncio.Event()
        self._in_flight: dict[int, int] = {}
        self._idle: dict[int, asyncio.Event] = {}
        self._listeners: list[Callable[[set[int]], None]] = []
        self._revoked: list[Callable[[set[int]], None]] = []

    # -- what is owned ------------------------------------------------------------------------
    @property
    def held(self) -> set[int]:
        return self.active | self.draining

    def selector(self) -> ShardSelector | None:
        """What the informers list and watch: every held shard."""
        return self.space.selector(self.held)

    def shard_of(self, uid: str) -> int:
        return self.space.shard_of_uid(uid)

    def holds_uid(self, uid: str) -> bool:
        return self.space.shard_of_uid(uid) in self.held

    def on_acquired(self, listener: Callable[[set[int]], None]) -> Callable[[], None]:
        """Call `listener(shards)` whenever shards become active; returns the remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def on_revoked(self, listener: Callable[[set[int]], None]) -> Callable[[], None]:
        """Call `listener(shards)` when Leases are lost; returns the remover."""
        self._revoked.append(listener)
        return lambda: self._revoked.remove(listener) if listener in self._revoked else None

    async def wait_changed(self, version: int) -> int:
        """Wait until `version` is out of date; the current version."""
        while self.version == version:
            await self._changed.wait()
        return self.version

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    # -- changes (from the ShardManager) -----------------------------------------------------
    def activate(self, shards: Iterable[int]) -> None:
        new = set(shards) - self.active
        if not new:
            return
        self.active |= new
        self.draining -= new
        self._bump()
        for listener in list(self._listeners):
            listener(new)

    async def drain(self, shard: int, *, grace: float) -> bool:
        """Stop admitting `shard`, wait (bounded) for its in-flight reconciles; True if idle."""
        if shard in self.active:
            self.active.discard(shard)
            self.draining.add(shard)
            self._bump()
        if not self._in_flight.get(shard):
            return True
        idle = self._idle.setdefault(shard, asyncio.Event())
        try:
            await wait_for(self.clock, idle.wait(), grace)
            return True
        except TimeoutError:
            return False

    def release(self, shard: int) -> None:
        """The shard's Lease was released (after `drain`): no longer held."""
        if shard in self.active or shard in self.draining:
            self.active.discard(shard)
            self.draining.discard(shard)
            self._bump()

    def revoke(self, shards: Iterable[int]) -> None:
        """The Leases were lost: stop at once (what is in flight is cancelled by the caller)."""
        lost = set(shards) & self.held
        if lost:
            self.active -= lost
            self.draining -= lost
            self._bump()
            for listener in list(self._revoked):
                listener(lost)

    # -- work (from controllers) -------------------------------------------------------------
    def admit(self, uid: str) -> int | None:
        """Start a reconcile of an object with `uid`: its shard, or None if not admitted."""
        shard = self.space.shard_of_uid(uid)
        if shard not in self.active:
            return None
        self._in_flight[shard] = self._in_flight.get(shard, 0) + 1
        return shard

    def done(self, shard: int) -> None:
        left = self._in_flight.get(shard, 0) - 1
        if left > 0:
            self._in_flight[shard] = left
            return
        self._in_flight.pop(shard, None)
        idle = self._idle.pop(shard, None)
        if idle is not None:
            idle.set()

    def in_flight(self, shard: int) -> int:
        return self._in_flight.get(shard, 0)
