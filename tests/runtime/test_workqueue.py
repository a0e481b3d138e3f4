"""WorkQueue semantics: dedup, dirty re-adds, exclusivity, delays, rate limits, shutdown."""

from __future__ import annotations

import asyncio

import pytest

from asyncop.runtime.metrics import Metrics
from asyncop.runtime.workqueue import ShutDown, WorkQueue
from asyncop.testing import FakeClock


async def drain_now(q: WorkQueue[str]) -> list[str]:
    """Process everything queued right now, in order (get() does not block while queued)."""
    out = []
    while len(q):
        key = await q.get()
        out.append(key)
        q.done(key)
    return out


async def test_duplicate_adds_collapse_and_keep_fifo_order() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    for key in ["a", "b", "a", "c", "b", "a"]:
        q.add(key)
    assert len(q) == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]
    assert len(q) == 0


async def test_readd_while_processing_is_delivered_once_after_done() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a")
    assert await q.get() == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not handed out while "a" is processing
    getter = asyncio.ensure_future(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.done("a")
    assert await getter == "a"
    q.done("a")
    assert len(q) == 0  # exactly once: no leftover copy


async def test_a_key_is_never_processed_by_two_workers_at_once() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    active: set[str] = set()
    overlaps: list[str] = []
    processed: list[str] = []
    enough = asyncio.Event()

    async def worker() -> None:
        while True:
            try:
                key = await q.get()
            except ShutDown:
                return
            if key in active:
                overlaps.append(key)
            active.add(key)
            for _ in range(3):
                await asyncio.sleep(0)
                q.add(key if len(processed) < 200 else "other")  # re-add mid-processing
            active.discard(key)
            processed.append(key)
            if len(processed) >= 300:
                enough.set()
            q.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(8)]
    for i in range(4):
        q.add(f"k{i}")
    await asyncio.wait_for(enough.wait(), timeout=10)
    q.shutdown()
    await asyncio.gather(*workers)
    assert overlaps == []
    assert {"k0", "k1", "k2", "k3"} <= set(processed)


async def test_add_after_fires_at_the_deadline_not_before() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 2.0)
    await clock.advance(1.999)
    assert len(q) == 0
    await clock.advance(0.001)
    assert len(q) == 1
    assert await q.get() == "a"


async def test_add_after_earliest_deadline_wins() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 10.0)
    q.add_after("a", 5.0)  # earlier: replaces
    q.add_after("a", 7.0)  # later: must not postpone
    assert q.delayed == 1
    await clock.advance(4.99)
    assert len(q) == 0
    await clock.advance(0.01)
    assert await drain_now(q) == ["a"]
    await clock.advance(10.0)
    assert len(q) == 0  # the superseded 7 s and 10 s entries never fire


async def test_add_after_uses_one_timer_and_keeps_deadline_order() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    for i, delay in enumerate([5.0, 3.0, 9.0, 1.0, 7.0]):
        q.add_after(f"k{i}", delay)
    assert clock.pending == 1
    order = []
    for _ in range(9):
        await clock.advance(1.0)
        order += await drain_now(q)
    assert order == ["k3", "k1", "k0", "k4", "k2"]
    assert clock.pending == 0


async def test_add_after_non_positive_delay_adds_at_once() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add_after("a", 0)
    q.add_after("b", -1.0)
    assert await drain_now(q) == ["a", "b"]


async def test_add_rate_limited_backs_off_exponentially_until_forget() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    for expected in [0.005, 0.01, 0.02, 0.04]:
        start = clock.monotonic()
        q.add_rate_limited("a")
        deadline = clock.next_deadline()
        assert deadline is not None
        assert deadline - start == pytest.approx(expected)
        await clock.advance(expected)
        assert await drain_now(q) == ["a"]
    assert q.num_requeues("a") == 4
    q.forget("a")
    assert q.num_requeues("a") == 0
    q.add_rate_limited("a")
    assert clock.next_deadline() == pytest.approx(clock.monotonic() + 0.005)


async def test_shutdown_wakes_every_getter() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    getters = [asyncio.ensure_future(q.get()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(g.done() for g in getters)
    q.shutdown()
    results = await asyncio.gather(*getters, return_exceptions=True)
    assert all(isinstance(r, ShutDown) for r in results)
    q.add("late")
    assert len(q) == 0
    with pytest.raises(ShutDown):
        await q.get()


async def test_shutdown_still_hands_out_queued_keys_then_raises() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a")
    q.shutdown()
    assert await q.get() == "a"
    with pytest.raises(ShutDown):
        await q.get()


async def test_shutdown_drops_delayed_adds_and_timer() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 1.0)
    q.shutdown()
    assert clock.pending == 0
    await clock.advance(2.0)
    assert len(q) == 0


async def test_shutdown_with_drain_waits_for_in_flight_keys() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a")
    q.add("b")
    a = await q.get()
    b = await q.get()
    drain = asyncio.ensure_future(q.shutdown_with_drain())
    await asyncio.sleep(0)
    q.done(a)
    await asyncio.sleep(0)
    assert not drain.done()
    q.done(b)
    await asyncio.wait_for(drain, timeout=5)


async def test_drain_ends_when_the_last_key_is_done_even_if_it_was_readded() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a")
    key = await q.get()
    q.add("a")  # dirty again while processing
    drain = asyncio.ensure_future(q.shutdown_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    q.done(key)  # goes back on the queue, but nothing is processing any more
    await asyncio.wait_for(drain, timeout=5)


async def test_plain_shutdown_ends_a_drain_wait() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a")
    await q.get()
    drain = asyncio.ensure_future(q.shutdown_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    q.shutdown()
    await asyncio.wait_for(drain, timeout=5)


async def test_cancelled_getter_passes_its_wakeup_on() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    first = asyncio.ensure_future(q.get())
    second = asyncio.ensure_future(q.get())
    await asyncio.sleep(0)
    q.add("a")  # wakes `first` …
    first.cancel()  # … which is cancelled before it runs
    assert await asyncio.wait_for(second, timeout=5) == "a"


async def test_queue_metrics_report_depth_adds_latency_and_work() -> None:
    clock = FakeClock()
    metrics = Metrics()
    q: WorkQueue[str] = WorkQueue(clock=clock, name="wq", metrics=metrics.queue_metrics("wq"))

    def value(name: str) -> float | None:
        return metrics.registry.get_sample_value(name, {"name": "wq"})

    q.add("a")
    q.add("b")
    q.add("a")
    assert value("workqueue_depth") == 2
    assert value("workqueue_adds_total") == 2
    await clock.advance(3.0)
    key = await q.get()
    assert value("workqueue_depth") == 1
    assert value("workqueue_queue_duration_seconds_sum") == pytest.approx(3.0)
    await clock.advance(2.0)
    assert value("workqueue_unfinished_work_seconds") == pytest.approx(2.0)
    assert value("workqueue_longest_running_processor_seconds") == pytest.approx(2.0)
    q.done(key)
    assert value("workqueue_work_duration_seconds_sum") == pytest.approx(2.0)
    assert value("workqueue_unfinished_work_seconds") == 0
    q.add_rate_limited("c")
    assert value("workqueue_retries_total") == 1


async def test_a_second_done_does_not_duplicate_the_key() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a")
    key = await q.get()
    q.done(key)
    q.add("a")
    q.done("a")  # spurious: "a" is queued, not processing
    assert len(q) == 1
    assert await drain_now(q) == ["a"]


async def test_moving_deadlines_earlier_keeps_the_heap_small() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    for i in range(1000):
        q.add_after("a", 2000.0 - i)
        q.add_after(f"k{i % 10}", 5000.0 - i)
    assert q.delayed == 11
    assert len(q._delays._heap) <= 2 * 11 + 64 + 1
    await clock.advance(1001.0)
    assert await drain_now(q) == ["a"]
    await clock.advance(4000.0)
    assert sorted(await drain_now(q)) == sorted(f"k{i}" for i in range(10))
