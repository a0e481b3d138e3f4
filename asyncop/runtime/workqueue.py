"""WorkQueue: the rate-limited, delaying work queue between event handlers and workers.

Three structures, as in client-go's workqueue:
- `queue`: keys waiting for a worker, in FIFO order;
- `dirty`: keys that need processing (every queued key, plus keys re-added while processing);
- `processing`: keys a worker currently holds (between `get()` and `done()`).

Invariants:
- a key is never in the queue twice: N adds before a worker picks it up collapse into one;
- a key being processed is never handed to a second worker: an add during processing only
  marks it dirty, and `done()` puts it back on the queue;
- `add_after(key, delay)` is backed by one heap and ONE clock timer (for the earliest
  deadline); for the same key an earlier deadline wins and a later one never postpones it;
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
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from asyncop.clock import Clock, Timer
from asyncop.runtime.ratelimit import RateLimiter, default_controller_rate_limiter

K = TypeVar("K", bound=Hashable)


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
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._shutting_down = False
        self._draining = False
        # Delayed adds: heap of (deadline, seq, key); `_waiting` holds the live entry per key.
        self._heap: list[tuple[float, int, K]] = []
        self._waiting: dict[K, tuple[float, int]] = {}
        self._seq = itertools.count()
        self._timer: Timer | None = None
        self._timer_at = 0.0
        # Metrics bookkeeping (only filled when metrics are configured).
        self._added_at: dict[K, float] = {}
        self._started_at: dict[K, float] = {}
        # Triggers (only with track_triggers): why each dirty key was added, and when;
        # the why of each pending delayed add.
        self._why: dict[K, tuple[object, float]] | None = {} if track_triggers else None
        self._later: dict[K, object] | None = {} if track_triggers else None
        self._taken: dict[K, tuple[object, float | None]] = {}  # handed out, not yet taken
        if metrics is not None:
            metrics.track_processing(self.processing_times)

    # -- adding -------------------------------------------------------------------------
    def add(self, key: K, why: object = None) -> None:
        """Mark `key` as needing work; it is queued unless already queued or processing.
        `why` says what asked for it (kept by a tracked queue when it makes the key dirty)."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if self._why is not None:
            self._why[key] = (why, self._clock.monotonic())
        metrics = self._metrics
        if metrics is not None:
            metrics.added()
            self._added_at.setdefault(key, self._clock.monotonic())
        if key in self._processing:
            return
        self._queue.append(key)
        if metrics is not None:
            metrics.depth(len(self._queue))
        self._wake_getter()

    def add_after(self, key: K, delay: float, why: object = None) -> None:
        """Add `key` once `delay` seconds have passed (at once if `delay <= 0`)."""
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retried()
        if delay <= 0:
            self.add(key, why)
            return
        deadline = self._clock.monotonic() + delay
        current = self._waiting.get(key)
        if current is not None and current[0] <= deadline:
            return
        seq = next(self._seq)
        self._waiting[key] = (deadline, seq)
        if self._later is not None:
            self._later[key] = why
        heapq.heappush(self._heap, (deadline, seq, key))
        if current is not None and len(self._heap) > 2 * len(self._waiting) + 64:
            self._compact()
        if self._timer is None or deadline < self._timer_at:
            self._arm(deadline)

    def add_rate_limited(self, key: K, why: object = None) -> None:
        """Add `key` after the delay the rate limiter assigns to it."""
        self.add_after(key, self._limiter.when(key), why)

    def forget(self, key: K) -> None:
        """Clear `key`'s retry history in the rate limiter (it does not dequeue it)."""
        self._limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self._limiter.num_requeues(key)

    # -- taking work ----------------------------------------------------------------------
    async def get(self) -> K:
        """The next key; it stays in processing until `done(key)`. Raises `ShutDown`."""
        while not self._queue:
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
                elif self._queue:
                    self._wake_getter()
                raise
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        if self._why is not None:
            self._taken[key] = self._why.pop(key, (None, None))
        metrics = self._metrics
        if metrics is not None:
            now = self._clock.monotonic()
            metrics.depth(len(self._queue))
            added = self._added_at.pop(key, None)
            if added is not None:
                metrics.queue_latency(now - added)
            self._started_at[key] = now
        return key

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
        if key in self._dirty:
            self._queue.append(key)
            if metrics is not None:
                metrics.depth(len(self._queue))
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
        dirty = key in self._dirty
        waiting = self._waiting.get(key)
        return KeyState(
            queued=dirty and not processing,
            processing=processing,
            requeued=dirty and processing,
            delayed_until=None if waiting is None else waiting[0],
            delayed_why=None if waiting is None or self._later is None
            else self._later.get(key),
            requeues=self._limiter.num_requeues(key),
        )

    def __len__(self) -> int:
        """Keys waiting in the queue (not counting processing or delayed ones)."""
        return len(self._queue)

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
        return len(self._waiting)

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
        self._cancel_timer()
        self._heap.clear()
        self._waiting.clear()
        if self._later is not None:
            self._later.clear()
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

    def _arm(self, deadline: float) -> None:
        self._cancel_timer()
        self._timer_at = deadline
        self._timer = self._clock.call_at(deadline, self._fire)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _compact(self) -> None:
        """Drop superseded heap entries (keys moved to an earlier deadline)."""
        self._heap = [(d, seq, key) for key, (d, seq) in self._waiting.items()]
        heapq.heapify(self._heap)

    def _fire(self) -> None:
        self._timer = None
        now = self._clock.monotonic()
        heap = self._heap
        waiting = self._waiting
        while heap:
            deadline, seq, key = heap[0]
            live = waiting.get(key)
            if live is None or live[1] != seq:
                heapq.heappop(heap)  # superseded by an earlier deadline, or already added
                continue
            if deadline > now:
                self._arm(deadline)
                return
            heapq.heappop(heap)
            del waiting[key]
            later = self._later
            self.add(key, None if later is None else later.pop(key, None))
