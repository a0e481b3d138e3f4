"""Delays: the delayed adds of a WorkQueue (`add_after`, rate-limited retries).

One heap of (deadline, seq, key) and ONE clock timer, armed for the earliest deadline. Per
key only one delayed add is live (`waiting[key] = (deadline, seq, priority)`); heap entries
whose seq is not the live one are superseded and skipped when they surface.

Invariants: for the same key the earliest deadline wins (a later one never postpones it) and
the highest priority asked for is kept; when a deadline passes, `fire(key, why, priority)` is
called once, from the clock's timer, in deadline order; superseded entries are dropped once
they outnumber the live ones (the heap stays O(live keys)); `clear()` cancels the timer and
forgets everything. `why` is kept only with `track=True` (the queue's trigger tracking).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from asyncop.clock import Clock, Timer

K = TypeVar("K", bound=Hashable)


class Delays(Generic[K]):
    __slots__ = ("_clock", "_fire", "_heap", "_later", "_seq", "_timer", "_timer_at",
                 "waiting")

    def __init__(self, *, clock: Clock, fire: Callable[[K, object, int], None],
                 track: bool = False) -> None:
        self._clock = clock
        self._fire = fire
        self._heap: list[tuple[float, int, K]] = []
        self.waiting: dict[K, tuple[float, int, int]] = {}
        """The live delayed add per key: (monotonic deadline, seq, priority)."""
        self._later: dict[K, object] | None = {} if track else None
        self._seq = itertools.count()
        self._timer: Timer | None = None
        self._timer_at = 0.0

    def __len__(self) -> int:
        return len(self.waiting)

    def why(self, key: K) -> object:
        """The `why` of `key`'s delayed add (tracked only)."""
        return None if self._later is None else self._later.get(key)

    def add(self, key: K, deadline: float, why: object, priority: int) -> None:
        current = self.waiting.get(key)
        if current is not None:
            priority = max(priority, current[2])
            if current[0] <= deadline:
                if priority > current[2]:
                    self.waiting[key] = (current[0], current[1], priority)
                return
        seq = next(self._seq)
        self.waiting[key] = (deadline, seq, priority)
        if self._later is not None:
            self._later[key] = why
        heapq.heappush(self._heap, (deadline, seq, key))
        if current is not None and len(self._heap) > 2 * len(self.waiting) + 64:
            self._heap = [(d, s, k) for k, (d, s, _) in self.waiting.items()]
            heapq.heapify(self._heap)
        if self._timer is None or deadline < self._timer_at:
            self._arm(deadline)

    def clear(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()
        self.waiting.clear()
        if self._later is not None:
            self._later.clear()

    def _arm(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self._clock.call_at(deadline, self._due)

    def _due(self) -> None:
        self._timer = None
        now = self._clock.monotonic()
        heap = self._heap
        waiting = self.waiting
        while heap:
            deadline, seq, key = heap[0]
            live = waiting.get(key)
            if live is None or live[1] != seq:
                heapq.heappop(heap)  # superseded by an earlier deadline, or already added
                continue
            if deadline > now:
                self._arm(deadline)
                return
            heapq.heappop(heap)
            del waiting[key]
            later = self._later
            self._fire(key, None if later is None else later.pop(key, None), live[2])
