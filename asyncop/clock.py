"""Clock: the one source of time for asyncop (a leaf module: it imports nothing from asyncop).

Every sleep, timer, timeout and timestamp in asyncop goes through a Clock, so that tests can
substitute `asyncop.testing.FakeClock` and run an hour of schedule in milliseconds.
`monotonic()` is for durations and deadlines; `now()` is wall time (UTC, timezone-aware)
for timestamps written into objects. Invariant: timers fire in deadline order and never
before their deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Protocol, TypeVar

T = TypeVar("T")


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> datetime:
        """Wall-clock time, UTC, timezone-aware."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale (only differences are meaningful)."""
        ...

    async def sleep(self, seconds: float) -> None: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` once `monotonic()` reaches `when`."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer: ...


class RealClock:
    """The event loop's clock (`loop.time()`), and the system's wall clock for `now()`."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        try:
            return asyncio.get_running_loop().time()
        except RuntimeError:
            return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_at(when, callback)

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback)


async def wait_for(clock: Clock, aw: Awaitable[T], timeout: float | None) -> T:
    """`asyncio.wait_for` on the given clock: raises TimeoutError when `timeout` passes."""
    if timeout is None:
        return await aw
    task = asyncio.ensure_future(aw)
    timed_out = False

    def expire() -> None:
        nonlocal timed_out
        if not task.done():
            timed_out = True
            task.cancel()

    timer = clock.call_later(timeout, expire)
    try:
        return await task
    except asyncio.CancelledError:
        if timed_out:
            raise TimeoutError(f"timed out after {timeout}s") from None
        raise
    finally:
        timer.cancel()
        if not task.done():
            task.cancel()


def format_time(dt: datetime) -> str:
    """RFC 3339 with second precision and a `Z`, as Kubernetes writes timestamps."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
