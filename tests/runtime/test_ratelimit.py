"""Rate limiters: exponential per-item backoff, the token bucket, and the controller default."""

from __future__ import annotations

import pytest

from asyncop.runtime.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)
from asyncop.testing import FakeClock


def test_exponential_doubles_from_5ms_and_caps_at_1000s() -> None:
    rl = ItemExponentialFailureRateLimiter()
    delays = [rl.when("a") for _ in range(22)]
    assert delays[:5] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    assert delays[17] == pytest.approx(0.005 * 2**17)  # 655.36 s, still under the cap
    assert delays[18:] == [1000.0] * 4
    assert rl.num_requeues("a") == 22


def test_exponential_is_per_item_and_reset_by_forget() -> None:
    rl = ItemExponentialFailureRateLimiter()
    rl.when("a")
    rl.when("a")
    assert rl.when("b") == pytest.approx(0.005)
    rl.forget("a")
    assert rl.num_requeues("a") == 0
    assert rl.when("a") == pytest.approx(0.005)


def test_exponential_survives_huge_failure_counts() -> None:
    rl = ItemExponentialFailureRateLimiter(base=1.0, max_delay=60.0)
    for _ in range(2000):
        delay = rl.when("x")
    assert delay == 60.0


async def test_bucket_burst_then_one_token_per_tenth_second() -> None:
    clock = FakeClock()
    rl = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert [rl.when(i) for i in range(100)] == [0.0] * 100
    assert rl.when(100) == pytest.approx(0.1)
    assert rl.when(101) == pytest.approx(0.2)
    await clock.advance(0.2)  # the two reserved tokens are now refilled and spent
    assert rl.when(102) == pytest.approx(0.1)
    await clock.advance(100.0)  # refills up to the burst, never beyond it
    assert [rl.when(i) for i in range(100)] == [0.0] * 100
    assert rl.when("next") == pytest.approx(0.1)


async def test_max_of_charges_all_and_returns_the_longest() -> None:
    clock = FakeClock()
    rl = default_controller_rate_limiter(clock)
    # The per-item backoff dominates for one failing key …
    assert [rl.when("k") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    # … while 97 more distinct keys drain the rest of the 100-token bucket.
    for i in range(97):
        assert rl.when(i) == pytest.approx(0.005)
    assert rl.when("fresh") == pytest.approx(0.1)  # 101st token: the bucket dominates
    assert rl.num_requeues("k") == 3
    rl.forget("k")
    assert rl.num_requeues("k") == 0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError):
        MaxOfRateLimiter()
