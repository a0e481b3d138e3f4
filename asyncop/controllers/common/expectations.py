"""Expectations: what a controller has just created or deleted and not yet seen in its cache.

The ReplicaSet controller's guard against a slow cache: after creating pod p (or deleting
it) the controller must not act on a cache that does not show p yet, or it would create (or
delete) a second time. Unlike client-go's counters, this version remembers the names and
asks the cache:

- a create is observed once the name is in the cache; a name that is not can be confirmed
  gone with a live GET by the caller (`observe_gone`) — created, then deleted before the
  cache looked;
- a delete is observed once the name is absent from the cache or shows a deletionTimestamp.

Why a second guard beside the Controller's read-your-own-writes (`asyncop.runtime.ownwrites`):
that one serves every controller and puts liveness first — it waits at most
`write_sync_timeout` (5 s) for the cache and then reconciles anyway, logging the lag. For a
controller that scales pods out, acting on a cache that misses its creates means a second
batch of pods, so this guard puts safety first: it never lets the reconcile act until the
cache shows (or a GET confirms) what it did, requeueing instead of waiting, for up to `ttl`.
Same problem, two deliberate trade-offs; jinghzhu uses both.

Invariants: expectations are per key and only touched by the worker reconciling that key
(the work queue never hands a key to two workers); entries expire after `ttl` seconds on
the clock, as a safety net, like the ReplicaSet controller's five minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from asyncop.api import RawObject
from asyncop.clock import Clock

Lookup = Callable[[str], RawObject | None]


@dataclass(slots=True)
class _Pending:
    deadline: float
    creates: set[str] = field(default_factory=set)
    deletes: set[str] = field(default_factory=set)


class Expectations:
    def __init__(self, *, clock: Clock, ttl: float = 300.0) -> None:
        self._clock = clock
        self._ttl = ttl
        self._pending: dict[str, _Pending] = {}

    def _entry(self, key: str) -> _Pending:
        entry = self._pending.get(key)
        deadline = self._clock.monotonic() + self._ttl
        if entry is None:
            entry = self._pending[key] = _Pending(deadline)
        entry.deadline = deadline
        return entry

    def expect_create(self, key: str, name: str) -> None:
        self._entry(key).creates.add(name)

    def expect_delete(self, key: str, name: str) -> None:
        self._entry(key).deletes.add(name)

    def unobserved_creates(self, key: str, lookup: Lookup) -> set[str]:
        """Drop the observed expectations of `key`; return the creates not yet seen."""
        entry = self._pending.get(key)
        if entry is None:
            return set()
        if self._clock.monotonic() >= entry.deadline:
            del self._pending[key]
            return set()
        entry.creates = {n for n in entry.creates if lookup(n) is None}
        entry.deletes = {
            n for n in entry.deletes
            if (obj := lookup(n)) is not None and not obj["metadata"].get("deletionTimestamp")
        }
        return set(entry.creates)

    def observe_gone(self, key: str, name: str) -> None:
        """A created object confirmed absent on the server: that create is settled."""
        entry = self._pending.get(key)
        if entry is not None:
            entry.creates.discard(name)

    def satisfied(self, key: str, lookup: Lookup) -> bool:
        """True when every create and delete of `key` has been observed (or expired)."""
        self.unobserved_creates(key, lookup)
        entry = self._pending.get(key)
        if entry is None:
            return True
        if not entry.creates and not entry.deletes:
            del self._pending[key]
            return True
        return False

    def forget(self, key: str) -> None:
        self._pending.pop(key, None)

    def __len__(self) -> int:
        return len(self._pending)
