"""Waiting on conditions in tests without fixed sleeps.

`eventually` polls a predicate (sync or async) on the real event loop until it holds or a
real-time deadline passes, yielding between polls. It is for waiting on real I/O (HTTP to the
embedded API server); virtual time is moved with `FakeClock.advance` instead.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")


@overload
async def eventually(
    predicate: Callable[[], Awaitable[T]],
    *,
    timeout: float = ...,
    interval: float = ...,
    message: str = ...,
) -> T: ...


@overload
async def eventually(
    predicate: Callable[[], T],
    *,
    timeout: float = ...,
    interval: float = ...,
    message: str = ...,
) -> T: ...


async def eventually(
    predicate: Callable[[], Any],
    *,
    timeout: float = 10.0,
    interval: float = 0.005,
    message: str = "condition",
) -> Any:
    """Return the first truthy value of `predicate()`; raise AssertionError after `timeout`."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        last = value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{message} did not hold within {timeout}s (last: {last!r})")
        await asyncio.sleep(interval)
