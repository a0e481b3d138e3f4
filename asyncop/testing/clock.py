"""FakeClock: virtual time for tests.

Time only moves when a test calls `advance()` (or `run_until`). Timers and sleepers fire in
deadline order; after each firing the event loop is given a few turns so that woken
coroutines can schedule their next timers before the clock moves on. Invariant: nothing
fires before its deadline, and `monotonic()` never goes backwards.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class _FakeTimer:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    def __init__(self, start: datetime = _EPOCH, *, turns: int = 20) -> None:
        self._wall0 = start.astimezone(UTC)
        self._t = 0.0
        self._heap: list[tuple[float, int, _FakeTimer]] = []
        self._seq = itertools.count()
        self._turns = turns

    # Clock protocol ---------------------------------------------------------------
    def now(self) -> datetime:
        return self._wall0 + timedelta(seconds=self._t)

    def monotonic(self) -> float:
        return self._t

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not fut.done():
                fut.set_result(None)

        timer = self.call_later(seconds, wake)
        try:
            await fut
        finally:
            timer.cancel()

    def call_at(self, when: float, callback: Callable[[], None]) -> _FakeTimer:
        timer = _FakeTimer(callback)
        heapq.heappush(self._heap, (when, next(self._seq), timer))
        return timer

    def call_later(self, delay: float, callback: Callable[[], None]) -> _FakeTimer:
        return self.call_at(self._t + max(0.0, delay), callback)

    # Test controls ------------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Timers not yet fired or cancelled."""
        return sum(1 for _, _, t in self._heap if not t.cancelled)

    def next_deadline(self) -> float | None:
        self._drop_cancelled()
        return self._heap[0][0] if self._heap else None

    async def settle(self) -> None:
        """Give the event loop a few turns so woken tasks run to their next await."""
        for _ in range(self._turns):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, firing every timer due on the way, in order."""
        await self.run_until(self._t + seconds)

    async def run_until(self, when: float) -> None:
        await self.settle()
        while True:
            self._drop_cancelled()
            if not self._heap or self._heap[0][0] > when:
                break
            deadline, _, timer = heapq.heappop(self._heap)
            self._t = max(self._t, deadline)
            timer.callback()
            await self.settle()
        self._t = max(self._t, when)
        await self.settle()

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
