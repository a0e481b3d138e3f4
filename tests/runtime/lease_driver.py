"""Test helpers: drive FakeClock time while real HTTP to the embedded ApiServer completes.

`TrackedClient` wraps a real Client and counts its in-flight requests (and can freeze them,
like a process whose task hangs); `step()` advances the FakeClock in small slices and, after
each, waits (on real I/O, not a sleep) until no tracked request is in flight, so every
elector has reached its next clock sleep before time moves on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from asyncop.testing import FakeClock, eventually


class TrackedClient:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.inflight = 0
        self.frozen = False
        self.fail_writes = False

    async def _call(self, verb: str, *args: Any, **kwargs: Any) -> Any:
        if self.frozen:
            await asyncio.Event().wait()  # hangs until cancelled (by a timeout)
        if self.fail_writes and verb in ("create", "update", "patch"):
            raise ConnectionError("injected write failure")
        self.inflight += 1
        try:
            return await getattr(self.inner, verb)(*args, **kwargs)
        finally:
            self.inflight -= 1

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("get", *args, **kwargs)

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("create", *args, **kwargs)

    async def update(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("update", *args, **kwargs)

    async def patch(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("patch", *args, **kwargs)


async def quiesce(clock: FakeClock, *clients: TrackedClient) -> None:
    await clock.settle()
    await eventually(lambda: all(c.inflight == 0 for c in clients), timeout=10)
    await clock.settle()


async def step(clock: FakeClock, seconds: float, *clients: TrackedClient, dt: float = 0.5) -> None:
    """Advance `seconds` of virtual time in `dt` slices, letting real I/O finish in between."""
    await quiesce(clock, *clients)
    done = 0.0
    while done < seconds - 1e-9:
        slice_ = min(dt, seconds - done)
        await clock.advance(slice_)
        done += slice_
        await quiesce(clock, *clients)
