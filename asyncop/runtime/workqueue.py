"""WorkQueue: the rate-limited, delaying work queue between event handlers and workers.

Three structures, as in client-go's workqueue:
- `queue`: keys waiting for a worker, by priority, then in FIFO order;
- `dirty`: keys that need processing (every queued key, plus keys re-added while processing);
- `processing`: keys a worker currently holds (between `get()` and `done()`).

Priorities, as in controller-runtime's priority queue (0.20+, its default since 0.23): every
add carries an int `priority` (0 by default; higher first). A worker gets the queued key of
the highest priority, FIFO among equal ones. A key added again with a higher priority while
queued moves up, to the end of its new priority; a lower one changes nothing (a key keeps the
highest priority asked for since it became dirty). A delayed add (`add_after`, rate-limited
retries) keeps its priority until it fires; for the same key the earliest deadline and the
highest priority win. `LOW_PRIORITY` is what the watch handlers give keys from initial lists,
resyncs and acquired shards, so a live change is reconciled before a replay's backlog; the
order is strict (a steady stream of high-priority keys delays low ones, as in
controller-runtime).

Invariants:
- a key is never in the queue twice: N adds before a worker picks it up collapse into one;
- a key being processed is never handed to a second worker: an add during processing only
  marks it dirty, and `done()` puts it back on the queue;
- `add_after(key, delay)` is backed by one heap and ONE clock timer (`runtime/delays.py`);
  for the same key an earlier deadline wins and a later one never postpones it;
- after `shutdown()` adds are ignored, `get()` still hands out what is queued and then raises
  `ShutDown`; `shutdown_with_drain()` also waits until every key in processing is done.

Nothing here creates a task: getters wait on futures that `add`/`done`/`shutdown` resolve.
Metrics are optional and go through the small `QueueMetrics` protocol.

Triggers (`track_triggers=True`, for tracing and the debug endpoint): `add(key, why)` keeps
the `why` (an opaque value; `asyncop.runtime.observe` describes them) of the add that made
the key dirty, with its time, until a worker `take_trigger`s it; a delayed add keeps its
`why` until it fires. Entries exist only for dirty, delayed or processing keys, so they are
bounded like the queue (a key handed to a worker keeps its entry until `take_trigger` or `done`).
Without tracking, `why` is ignored and nothing is kept.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from asyncop.clock import Clock
from asyncop.runtime.delays import Delays
from asyncop.runtime.ratelimit import RateLimiter, default_controller_rate_limiter

K = TypeVar("K", bound=Hashable)

LOW_PRIORITY = -100
"""The priority of keys no live event asked for (controller-runtime's `handler.LowPriority`):
objects of an informer's initial list, periodic resyncs, a newly acquired shard."""


class ShutDown(Exception):
    """Raised by `WorkQueue.get()` once the queue is shut down and empty."""


class QueueMetrics(Protocol):
    """What a WorkQueue reports (`asyncop.runtime.metrics.Metrics.queue_metrics` implements it)."""

    def added(self) -> None: ...

    def depth(self, depth: int) -> None: ...

    def queue_latency(self, seconds: float) -> None: ...

    def work_duration(self, seconds: float) -> None: ...

    def retried(self) -> None: ...

    def track_processing(self, probe: Callable[[], tuple[float, float]]) -> None:
        """Register `probe() -> (unfinished_work_seconds, longest_running_seconds)`."""
        ...


@dataclass(frozen=True, slots=True)
class KeyState:
    """Where one key is in the queue right now (`WorkQueue.state`)."""

    queued: bool
    """Waiting for a worker (dirty and not held by one)."""
    processing: bool
    """Held by a worker between `get()` and `done()`."""
    requeued: bool
    """Added again while processing: queued once `done()`."""
    delayed_until: float | None
    """Monotonic deadline of a pending `add_after` (a backoff or a requeue), if any."""
    delayed_why: object
    """The `why` of that delayed add (tracked queues only)."""
    requeues: int
    """Rate-limited retries since the key was last forgotten."""
    priority: int | None = None
    """The priority it is queued (or requeued) with, else that of its delayed add, if any."""


class WorkQueue(Generic[K]):
    def __init__(
        self,
        *,
        clock: Clock,
        rate_limiter: RateLimiter | None = None,
        name: str = "",
        metrics: QueueMetrics | None = None,
        track_triggers: bool = False,
    ) -> None:
        self.name = name
        self._clock = clock
        self._limiter = rate_limiter or default_controller_rate_limiter(clock)
        self._metrics = metrics
        # One FIFO per priority (`_order`: (priority, FIFO), highest first), entries
        # (seq, key). `_dirty` maps each dirty key to (priority, seq of its live entry, or -1
        # while it waits for `done`); entries whose seq is not the live one are stale (the
        # key moved up) and skipped; `_stale` counts them, `_count` the live ones.
        self._levels: dict[int, deque[tuple[int, K]]] = {}
        self._order: list[tuple[int, deque[tuple[int, K]]]] = []
        self._count = 0
        self._stale = 0
        self._dirty: dict[K, tuple[int, int]] = {}
        self._processing: set[K] = set()
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._shutting_down = False
        self._draining = False
        self._seq = 0
        self._delays: Delays[K] = Delays(clock=clock, track=track_triggers,
                                         fire=lambda key, why, p: self.add(key, why, priority=p))
        # Metrics bookkeeping (only filled when metrics are configured).
        self._added_at: dict[K, float] = {}
        self._started_at: dict[K, float] = {}
        # Triggers (only with track_triggers): why each dirty key was added, and when;
        # the why of each pending delayed add.
        self._why: dict[K, tuple[object, float]] | None = {} if track_triggers else None
        self._taken: dict[K, tuple[object, float | None]] = {}  # handed out, not yet taken
        if metrics is not None:
            metrics.track_processing(self.processing_times)

    # -- adding -------------------------------------------------------------------------
    def add(self, key: K, why: object = None, *, priority: int = 0) -> None:
        """Mark `key` as needing work; it is queued unless already queued or processing.
        `why` says what asked for it (kept by a tracked queue when it makes the key dirty);
        a higher `priority` moves an already queued key up."""
        if self._shutting_down:
            return
        current = self._dirty.get(key)
        if current is not None:
            if priority > current[0]:
                self._raise(key, priority, current[1])
            return
        if self._why is not None:
            self._why[key] = (why, self._clock.monotonic())
        metrics = self._metrics
        if metrics is not None:
            metrics.added()
            self._added_at.setdefault(key, self._clock.monotonic())
        if key in self._processing:
            self._dirty[key] = (priority, -1)
            return
        self._seq = seq = self._seq + 1  # _enqueue, inlined on the hot path
        self._dirty[key] = (priority, seq)
        level = self._levels.get(priority)
        if level is None:
            level = self._level(priority)
        level.append((seq, key))
        self._count += 1
        if metrics is not None:
            metrics.depth(self._count)
        self._wake_getter()

    def add_after(self, key: K, delay: float, why: object = None, *,
                  priority: int = 0) -> None:
        """Add `key` with `priority` once `delay` seconds have passed (at once if
        `delay <= 0`)."""
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retried()
        if delay <= 0:
            self.add(key, why, priority=priority)
            return
        self._delays.add(key, self._clock.monotonic() + delay, why, priority)

    def add_rate_limited(self, key: K, why: object = None, *, priority: int = 0) -> None:
        """Add `key` with `priority` after the delay the rate limiter assigns to it."""
        self.add_after(key, self._limiter.when(key), why, priority=priority)

    def forget(self, key: K) -> None:
        """Clear `key`'s retry history in the rate limiter (it does not dequeue it)."""
        self._limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self._limiter.num_requeues(key)

    # -- taking work ----------------------------------------------------------------------
    async def get(self) -> K:
        """The next key; it stays in processing until `done(key)`. Raises `ShutDown`."""
        if not self._count:
            await self._wait()
        return self._take()[0]

    async def get_with_priority(self) -> tuple[K, int]:
        """`get()`, and the priority the key was queued with (to requeue it with)."""
        if not self._count:
            await self._wait()
        return self._take()

    async def _wait(self) -> None:
        while not self._count:
            if self._shutting_down:
                raise ShutDown(self.name)
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                # Cancelled (possibly right after being woken): pass the wake-up on.
                if fut in self._getters:
                    self._getters.remove(fut)
                elif self._count:
                    self._wake_getter()
                raise

    def _take(self) -> tuple[K, int]:
        """Pop the first live entry of the highest non-empty priority (`_count` > 0)."""
        dirty = self._dirty
        for priority, level in self._order:
            while level:
                seq, key = level.popleft()
                live = dirty.get(key)
                if live is None or live[1] != seq:
                    self._stale -= 1
                    continue
                del dirty[key]
                self._count -= 1
                self._processing.add(key)
                if self._why is not None:
                    self._taken[key] = self._why.pop(key, (None, None))
                metrics = self._metrics
                if metrics is not None:
                    now = self._clock.monotonic()
                    metrics.depth(self._count)
                    added = self._added_at.pop(key, None)
                    if added is not None:
                        metrics.queue_latency(now - added)
                    self._started_at[key] = now
                return key, priority
        raise AssertionError("work queue count out of step with its entries")

    def done(self, key: K) -> None:
        """Finish processing `key`; if it was re-added meanwhile, queue it again.

        `done` for a key that is not processing (a second `done`) does nothing.
        """
        if key not in self._processing:
            return
        self._processing.remove(key)
        if self._why is not None:
            self._taken.pop(key, None)
        metrics = self._metrics
        if metrics is not None:
            started = self._started_at.pop(key, None)
            if started is not None:
                metrics.work_duration(self._clock.monotonic() - started)
        again = self._dirty.get(key)
        if again is not None:
            self._enqueue(key, again[0])
            if metrics is not None:
                metrics.depth(self._count)
            self._wake_getter()
        if not self._processing and self._drain_waiters:
            self._release_drain_waiters()

    def take_trigger(self, key: K) -> tuple[object, float | None]:
        """(why, monotonic time of the add) of the add a worker just got `key` for, once;
        (None, None) when the queue does not track triggers."""
        return self._taken.pop(key, (None, None))

    # -- state ------------------------------------------------------------------------------
    def state(self, key: K) -> KeyState:
        """Where `key` is now: queued, processing (and requeued), delayed until when."""
        processing = key in self._processing
        entry = self._dirty.get(key)
        dirty = entry is not None
        waiting = self._delays.waiting.get(key)
        priority = entry[0] if entry is not None else None if waiting is None else waiting[2]
        return KeyState(
            queued=dirty and not processing,
            processing=processing,
            requeued=dirty and processing,
            delayed_until=None if waiting is None else waiting[0],
            delayed_why=None if waiting is None else self._delays.why(key),
            requeues=self._limiter.num_requeues(key),
            priority=priority,
        )

    def __len__(self) -> int:
        """Keys waiting in the queue (not counting processing or delayed ones)."""
        return self._count

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    @property
    def processing(self) -> int:
        """How many keys workers hold right now."""
        return len(self._processing)

    @property
    def delayed(self) -> int:
        """How many keys wait for an `add_after` deadline."""
        return len(self._delays)

    def processing_times(self) -> tuple[float, float]:
        """(sum of seconds all in-flight keys have run, seconds of the longest-running one)."""
        if not self._started_at:
            return (0.0, 0.0)
        now = self._clock.monotonic()
        ages = [now - t for t in self._started_at.values()]
        return (sum(ages), max(ages))

    # -- shutting down --------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop accepting adds, wake every getter; pending delayed adds are dropped."""
        self._shutting_down = True
        self._draining = False
        self._delays.clear()
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)
        self._release_drain_waiters()

    async def shutdown_with_drain(self) -> None:
        """`shutdown()`, then wait until every key in processing is `done()`.

        A plain `shutdown()` while this waits stops the wait early.
        """
        self.shutdown()
        self._draining = True
        while self._processing and self._draining:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drain_waiters.append(fut)
            try:
                await fut
            finally:
                if fut in self._drain_waiters:
                    self._drain_waiters.remove(fut)

    # -- internals --------------------------------------------------------------------------
    def _level(self, priority: int) -> deque[tuple[int, K]]:
        level = self._levels.get(priority)
        if level is None:
            level = self._levels[priority] = deque()
            bisect.insort(self._order, (priority, level), key=lambda entry: -entry[0])
        return level

    def _enqueue(self, key: K, priority: int) -> None:
        """Queue a dirty key that is not queued yet, at the end of its priority."""
        self._seq = seq = self._seq + 1
        self._dirty[key] = (priority, seq)
        self._level(priority).append((seq, key))
        self._count += 1

    def _raise(self, key: K, priority: int, seq: int) -> None:
        """A dirty key asked for with a higher priority: record it, and if it is queued
        (seq >= 0) move it to the end of its new priority (its old entry goes stale)."""
        if seq < 0:  # re-added while processing: queued with this priority on `done`
            self._dirty[key] = (priority, -1)
            return
        self._seq = new = self._seq + 1
        self._dirty[key] = (priority, new)
        self._level(priority).append((new, key))
        self._stale += 1
        if self._stale > self._count + 64:
            self._drop_stale()

    def _drop_stale(self) -> None:
        """Rebuild the FIFOs without stale entries (amortised: only once they outnumber
        the live ones)."""
        dirty = self._dirty
        for priority, level in self._levels.items():
            live = [(seq, key) for seq, key in level
                    if (entry := dirty.get(key)) is not None and entry == (priority, seq)]
            level.clear()
            level.extend(live)
        self._stale = 0

    def _wake_getter(self) -> None:
        getters = self._getters
        while getters:
            fut = getters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _release_drain_waiters(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)
