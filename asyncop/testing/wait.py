"""Waiting on conditions in tests without fixed sleeps: in real time, and in virtual time.

`eventually` polls a predicate (sync or async) on the real event loop until it holds or a
real-time deadline passes, yielding between polls. It is for waiting on real I/O (HTTP to the
embedded API server).

`advance_until` moves a FakeClock forward a `step` at a time until a predicate holds, letting
real I/O run between steps: before each step it waits (in real time) until `caught_up()`
holds — `idle(mgr)`, say: the operator has nothing queued — so that what the operator and
the simulators do at one virtual instant happens at that instant, not at a later one. It
returns the virtual seconds that passed and fails with an AssertionError once `within`
virtual seconds passed without the predicate holding.

Invariants: neither ever sleeps a fixed real time beyond `interval`; `advance_until` never
moves the clock past `within` seconds from where it started, and never while `caught_up()`
is false.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

from asyncop.testing.clock import FakeClock

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


Predicate = Callable[[], Awaitable[object]] | Callable[[], object]
"""A sync or async function whose truthy result means "holds"."""


async def _holds(predicate: Predicate) -> object:
    value = predicate()
    if inspect.isawaitable(value):
        value = await value
    return value


async def advance_until(
    clock: FakeClock,
    predicate: Predicate,
    *,
    within: float,
    step: float = 1.0,
    caught_up: Predicate | None = None,
    timeout: float = 10.0,
    interval: float = 0.005,
    message: str = "condition",
) -> float:
    """Move `clock` forward `step` virtual seconds at a time until `predicate()` holds, and
    return how many virtual seconds that took (0 if it held at once).

    Between steps real I/O runs: the loop waits (real time, at most `timeout` per step)
    until `caught_up()` holds if given, else for `interval` real seconds. Raises
    AssertionError once `within` virtual seconds passed and the predicate still does not
    hold, or when the operator does not catch up in time."""
    if step <= 0:
        raise ValueError(f"advance_until: step must be > 0, not {step!r}")
    start = clock.monotonic()
    while True:
        last = await _holds(predicate)
        if last:
            return clock.monotonic() - start
        passed = clock.monotonic() - start
        if passed >= within:
            raise AssertionError(f"{message} did not hold within {within:g} virtual seconds "
                                 f"(last: {last!r})")
        if caught_up is None:
            await asyncio.sleep(interval)
        else:
            await eventually(lambda: _holds(caught_up), timeout=timeout, interval=interval,
                             message=f"caught up at {passed:g} virtual seconds")
        last = await _holds(predicate)
        if last:
            return clock.monotonic() - start
        await clock.advance(min(step, within - passed))
