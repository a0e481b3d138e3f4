"""Rate limiters: how long an item waits before it is retried.

A `RateLimiter` answers `when(item)` with a delay in seconds and records that the item was
(re)tried; `forget(item)` clears the item's history once it succeeded; `num_requeues(item)`
says how many retries are on record. The work queue feeds `when()` into `add_after`.

- `ItemExponentialFailureRateLimiter`: per item, `base * 2**failures`, capped at `max_delay`
  (5 ms, 10 ms, 20 ms … 1000 s with the defaults). Reset by `forget`.
- `BucketRateLimiter`: one token bucket for all items (`qps` refill, `burst` capacity) on the
  clock's monotonic time. Like golang.org/x/time/rate reservations, every `when()` reserves a
  token, possibly in the future, and returns the delay until that token exists; the bucket
  may go negative, so a burst of callers gets 0, 0, …, 1/qps, 2/qps, … in order.
- `MaxOfRateLimiter`: the largest delay of several limiters (all of them are charged).
- `default_controller_rate_limiter`: max(per-item 5 ms → 1000 s, bucket 10 qps / 100 burst),
  the same as client-go's DefaultTypedControllerRateLimiter.

Invariants: delays are never negative; with the defaults, the per-item delay doubles on
every failure until the cap and drops back to `base` after `forget`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from asyncop.clock import Clock

# 2.0**1024 overflows a float; any exponent this large is far beyond every sane cap anyway.
_MAX_EXPONENT = 1000


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float:
        """Record a retry of `item` and return how many seconds it should wait."""
        ...

    def forget(self, item: Hashable) -> None:
        """Drop `item`'s retry history (it succeeded or is no longer tracked)."""
        ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: `base * 2**n` for the n-th retry, capped at `max_delay`."""

    __slots__ = ("_base", "_failures", "_max_delay")

    def __init__(self, *, base: float = 0.005, max_delay: float = 1000.0) -> None:
        if base < 0 or max_delay < 0:
            raise ValueError("base and max_delay must not be negative")
        self._base = base
        self._max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        if exp >= _MAX_EXPONENT:
            return self._max_delay
        return min(self._base * 2.0**exp, self._max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """An overall token bucket (`qps` tokens per second, at most `burst` stored).

    The bucket starts full. Each `when()` takes one token; if none is left it reserves the
    next one to be refilled and returns the wait until then.
    """

    __slots__ = ("_burst", "_clock", "_last", "_qps", "_tokens")

    def __init__(self, *, qps: float = 10.0, burst: int = 100, clock: Clock) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("qps must be positive and burst at least 1")
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: Hashable) -> float:
        now = self._clock.monotonic()
        tokens = self._tokens
        if self._last is not None and now > self._last:
            tokens = min(self._burst, tokens + (now - self._last) * self._qps)
        self._last = now if self._last is None else max(now, self._last)
        tokens -= 1.0
        self._tokens = tokens
        return 0.0 if tokens >= 0 else -tokens / self._qps

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """Charges every limiter and returns the longest delay among them."""

    __slots__ = ("_limiters",)

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: Hashable) -> float:
        return max([limiter.when(item) for limiter in self._limiters])

    def forget(self, item: Hashable) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)


def default_controller_rate_limiter(clock: Clock) -> RateLimiter:
    """max(per-item exponential 5 ms → 1000 s, overall bucket 10 qps with burst 100)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(base=0.005, max_delay=1000.0),
        BucketRateLimiter(qps=10.0, burst=100, clock=clock),
    )
