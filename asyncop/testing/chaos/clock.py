"""Virtual time for a soak: a FakeClock paced against real time, with jumps and wall steps.

Concept: the replicas, the API server, its simulators and its delay faults all run on ONE
`PacedClock`, and ONE `Pacer` task moves it at `rate` virtual seconds per real second (1:
real time). That is what makes clock faults possible: `Pacer.jump(s)` moves virtual time
ahead by `s` at once (every timer on the way fires, in order), `PacedClock.step_wall(s)`
moves the wall clock while the monotonic clock does not (NTP stepping a node's clock).

Invariants: only the Pacer advances the clock; `monotonic()` never goes backwards; a jump
is applied at the next tick, as part of one advance.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from asyncop.testing.clock import FakeClock


class PacedClock(FakeClock):
    """A FakeClock whose wall clock can also step on its own (NTP-style)."""

    def step_wall(self, seconds: float) -> None:
        """Move `now()` forward by `seconds`; `monotonic()` and the timers stay put."""
        self._wall0 += timedelta(seconds=seconds)


class Pacer:
    """The only task that moves the clock: `rate` virtual seconds per real second."""

    def __init__(self, clock: PacedClock, *, rate: float, tick: float = 0.05) -> None:
        self.clock, self.rate, self.tick = clock, rate, tick
        self._jump = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="soak-pacer")

    def jump(self, seconds: float) -> None:
        """At the next tick, move virtual time `seconds` further than the pace."""
        self._jump += seconds

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            step, self._jump = self.tick * self.rate + self._jump, 0.0
            await self.clock.advance(step)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def sleep(self, virtual: float) -> None:
        """Wait until `virtual` seconds have passed on the clock (the pacer moves it)."""
        await self.clock.sleep(virtual)
