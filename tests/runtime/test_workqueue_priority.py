"""WorkQueue priorities: controller-runtime's priority queue semantics on client-go's queue.

kube: controller-runtime pkg/controller/priorityqueue (priorityqueue.go: AddWithOpts keeps
the max of the priorities and the min of the delays; an item raised to a higher priority goes
to the end of that priority; `lessReady` orders by priority, then by the added counter) and
pkg/handler/eventhandler.go (`LowPriority = -100`).
"""

from __future__ import annotations

import random

import pytest

from asyncop.runtime.workqueue import LOW_PRIORITY, WorkQueue
from asyncop.testing import FakeClock
from tests.runtime.test_workqueue import drain_now


def test_low_priority_is_controller_runtimes() -> None:
    assert LOW_PRIORITY == -100  # kube: handler.LowPriority (controller-runtime)


async def test_higher_priority_first_then_fifo() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    for key, priority in [("a", LOW_PRIORITY), ("b", LOW_PRIORITY), ("c", 0),
                          ("d", LOW_PRIORITY), ("e", 0), ("f", 10)]:
        q.add(key, priority=priority)
    assert len(q) == 6
    assert await drain_now(q) == ["f", "c", "e", "a", "b", "d"]


async def test_raised_key_moves_to_the_end_of_its_new_priority() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a", priority=LOW_PRIORITY)
    q.add("b")
    q.add("c", priority=LOW_PRIORITY)
    q.add("a")  # a live event for a key waiting in the replay
    assert len(q) == 3  # moved, not duplicated
    assert q.state("a").priority == 0
    assert await drain_now(q) == ["b", "a", "c"]


async def test_a_lower_priority_add_changes_nothing() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("x")
    q.add("y")
    q.add("x", priority=LOW_PRIORITY)  # a resync of a key a live event queued
    assert q.state("x").priority == 0
    assert await drain_now(q) == ["x", "y"]


async def test_get_with_priority_says_what_the_key_was_queued_with() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a", priority=LOW_PRIORITY)
    q.add("b", priority=3)
    assert await q.get_with_priority() == ("b", 3)
    assert await q.get_with_priority() == ("a", LOW_PRIORITY)


async def test_readded_while_processing_is_queued_with_the_highest_priority_asked() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("a", priority=LOW_PRIORITY)
    assert await q.get() == "a"
    q.add("a", priority=LOW_PRIORITY)
    q.add("a", priority=5)
    q.add("a", priority=1)
    q.add("b", priority=2)
    assert len(q) == 1  # only b: a waits for done
    assert q.state("a").requeued
    q.done("a")
    assert await q.get_with_priority() == ("a", 5)
    assert await q.get_with_priority() == ("b", 2)


async def test_delayed_add_keeps_its_priority_until_it_fires() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 1.0, priority=LOW_PRIORITY)
    assert q.state("a").priority == LOW_PRIORITY
    await clock.advance(1.0)
    q.add("b")
    q.add("c", priority=LOW_PRIORITY)
    assert await drain_now(q) == ["b", "a", "c"]


async def test_delayed_adds_keep_the_earliest_deadline_and_the_highest_priority() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 5.0, priority=LOW_PRIORITY)
    q.add_after("a", 7.0)  # later, higher: the priority is raised, the deadline stays
    state = q.state("a")
    assert (state.delayed_until, state.priority) == (pytest.approx(5.0), 0)
    q.add_after("a", 2.0, priority=LOW_PRIORITY)  # earlier, lower: deadline moves, priority kept
    state = q.state("a")
    assert (state.delayed_until, state.priority) == (pytest.approx(2.0), 0)
    await clock.advance(2.0)
    assert await q.get_with_priority() == ("a", 0)
    await clock.advance(10.0)
    assert len(q) == 0  # the superseded entries never fire


async def test_rate_limited_retry_keeps_its_priority() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_rate_limited("a", priority=LOW_PRIORITY)
    await clock.advance(0.005)  # the first per-item backoff
    q.add("b")
    assert await q.get_with_priority() == ("b", 0)
    assert await q.get_with_priority() == ("a", LOW_PRIORITY)


async def test_shutdown_still_hands_out_queued_keys_by_priority() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add("low", priority=LOW_PRIORITY)
    q.add("high")
    q.shutdown()
    q.add("late", priority=100)  # ignored after shutdown
    assert await drain_now(q) == ["high", "low"]


async def test_repeated_raises_keep_the_queue_bounded() -> None:
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    for i in range(100):
        q.add(f"k{i}", priority=0)
    for round_ in range(1, 50):
        for i in range(100):
            q.add(f"k{i}", priority=round_)
    assert len(q) == 100
    entries = sum(len(level) for level in q._levels.values())
    assert entries <= 2 * 100 + 64 + 1  # stale entries are dropped once they outnumber live
    out = await drain_now(q)
    assert out == [f"k{i}" for i in range(100)]  # each once, FIFO within the top priority


async def test_matches_a_reference_model_on_random_operations() -> None:
    """Random adds (with priorities), gets and dones against a direct model of the rules:
    queued keys ordered by (priority desc, order of the add that queued or raised them)."""
    rng = random.Random(1917)
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    queued: dict[str, tuple[int, int]] = {}
    waiting_done: dict[str, int] = {}  # re-added while processing: priority on done
    processing: list[str] = []
    counter = 0
    for _ in range(5000):
        op = rng.random()
        if op < 0.55:
            key, priority = f"k{rng.randrange(30)}", rng.choice([LOW_PRIORITY, 0, 0, 7])
            q.add(key, priority=priority)
            if key in queued:
                if priority > queued[key][0]:
                    counter += 1
                    queued[key] = (priority, counter)
            elif key in processing:
                waiting_done[key] = max(priority, waiting_done.get(key, priority))
            else:
                counter += 1
                queued[key] = (priority, counter)
        elif op < 0.8 and queued:
            expected = min(queued, key=lambda k: (-queued[k][0], queued[k][1]))
            got, priority = await q.get_with_priority()
            assert (got, priority) == (expected, queued.pop(expected)[0])
            processing.append(got)
        elif processing:
            key = processing.pop(rng.randrange(len(processing)))
            q.done(key)
            if key in waiting_done:
                counter += 1
                queued[key] = (waiting_done.pop(key), counter)
        assert len(q) == len(queued)
