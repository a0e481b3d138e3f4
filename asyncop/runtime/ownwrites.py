"""Read-your-own-writes, the whole mechanism: a key's next reconcile waits until the cache
has seen the writes of its last one.

Two touch points, both here: the Client reports each successful write to a listener
(`OwnWrites.listener`, registered by the Controller), and each informer reports its progress
to its `VersionWaiters` (an event, a bookmark or a LIST moved a namespace stream on), which
resolve the waits `catch_up` starts through `Cache.wait_for_resource_version`.

The Client calls `OwnWrites.listener(kind, obj_or_None, key)` after every successful write.
While a reconcile of key R runs, a ContextVar marks it (`recording()`), so the listener files
(kind, key, resourceVersion or None for a delete) under R. Before R's next reconcile,
`catch_up()` waits until the cache reflects each of them through
`Cache.wait_for_resource_version`, which also settles an object deleted after our write (its
informer's stream has passed the written resourceVersion and the key is gone), so a delete
never costs a timeout. A kind no informer watches (`NotWatched`: the reconciler never reads
it from the cache) has nothing to wait for. The whole wait is bounded by `timeout` on the
clock; a timeout only logs.

The recording is also what the debug endpoint and traces show of a reconcile: `recording()`
yields it (its `writes` after the block), and when the observer asks (`events=True`) the
EventRecorder notes each Event recorded during the reconcile in it (`note_event`).
`catch_up` returns how many writes the cache had not seen within the bound.

Invariants: writes made outside any reconcile, or in another controller's reconcile, are not
recorded here; only the last reconcile's writes are waited for; the pending records are
bounded: once more than `MAX_PENDING` keys have records, those older than `timeout` are
dropped, oldest first (`pending` is kept in time order, so that costs O(1) per write), which
leaves at most the keys written within one `timeout`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

import structlog

from asyncop.api import Kind, RawObject
from asyncop.clock import Clock, wait_for

log = structlog.get_logger("asyncop.runtime.ownwrites")

MAX_PENDING = 4096

Writes = dict[tuple[Kind, str], str | None]


class CacheVersions(Protocol):
    async def wait_for_resource_version(
        self, kind: Kind, key: str, rv: str | None, *, timeout: float
    ) -> object: ...


class Recording:
    """What one running reconcile wrote: objects (kind, key) -> resourceVersion, and, when
    asked for, the Events it recorded as (type, reason)."""

    __slots__ = ("events", "owner", "writes")

    def __init__(self, owner: OwnWrites, *, events: bool = False) -> None:
        self.owner = owner
        self.writes: Writes = {}
        self.events: list[tuple[str, str]] | None = [] if events else None


_recording: ContextVar[Recording | None] = ContextVar("asyncop_own_writes", default=None)


def note_event(type: str, reason: str) -> None:
    """Note an Event recorded by the running reconcile (if one records events)."""
    rec = _recording.get()
    if rec is not None and rec.events is not None:
        rec.events.append((type, reason))


class OwnWrites:
    """The writes of one controller's reconciles, and the waits before the next ones."""

    def __init__(self, *, timeout: float) -> None:
        self.timeout = timeout
        # reconcile key -> (when, its writes)
        self.pending: dict[str, tuple[float, Writes]] = {}

    def listener(self, kind: Kind, obj: RawObject | None, key: str) -> None:
        """The Client's write listener: file the write under the running reconcile, if ours."""
        rec = _recording.get()
        if rec is None or rec.owner is not self:
            return
        rec.writes[(kind, key)] = (
            None if obj is None else (obj.get("metadata") or {}).get("resourceVersion")
        )

    @contextmanager
    def recording(self, key: str, clock: Clock, *, events: bool = False) -> Iterator[Recording]:
        """Record the writes made inside the block (the reconcile of `key`)."""
        rec = Recording(self, events=events)
        token = _recording.set(rec)
        try:
            yield rec
        finally:
            _recording.reset(token)
            if rec.writes:
                self._remember(key, rec.writes, clock.monotonic())

    def _remember(self, key: str, writes: Writes, now: float) -> None:
        self.pending.pop(key, None)  # re-inserted last: the dict stays in time order
        self.pending[key] = (now, writes)
        if len(self.pending) > MAX_PENDING:
            # Keys never reconciled again (deleted objects, finished ones) must not pile up;
            # a record older than the wait bound would only cost one bounded wait anyway.
            # Oldest first, stopping at the first fresh one: O(1) per record over time.
            stale = []
            for old, (t, _) in self.pending.items():
                if now - t <= self.timeout:
                    break
                stale.append(old)
            for old in stale:
                del self.pending[old]

    def _forget(self, key: str) -> Writes:
        record = self.pending.pop(key, None)
        return {} if record is None else record[1]

    async def catch_up(self, cache: CacheVersions, clock: Clock, key: str) -> int:
        """Wait (bounded) until the cache reflects the writes of `key`'s last reconcile;
        how many it had not seen when the bound ran out."""
        writes = self._forget(key)
        unseen = 0
        if not writes:
            return 0
        deadline = clock.monotonic() + self.timeout
        for (kind, obj_key), rv in writes.items():
            remaining = deadline - clock.monotonic()
            try:
                if remaining <= 0:
                    raise TimeoutError
                waiting = cache.wait_for_resource_version(kind, obj_key, rv, timeout=remaining)
                seen = await wait_for(clock, waiting, remaining) is not False
            except TimeoutError:
                seen = False
            except NotWatched:  # nothing reads that kind (or namespace) through the cache
                continue
            except Exception:
                log.exception("waiting for own write failed", kind=str(kind), key=obj_key)
                continue
            if not seen:
                unseen += 1
                log.warning(
                    "cache behind own write, proceeding",
                    kind=str(kind),
                    key=obj_key,
                    resource_version=rv,
                )
        return unseen


# --- waiting for an informer to reach a resourceVersion ------------------------------------
# A waiter is (stream, key, resourceVersion, future); the informer calls `check(stream,
# reached)` whenever that namespace stream makes progress, and every waiter of the stream
# whose condition now holds is resolved. Waiters are few (one per own write a worker is
# catching up on); with none, the informer's hot path pays one truth test. resourceVersions
# compare as integers (an opaque one only matches itself); a future resolves at most once.

class NotWatched(LookupError):
    """No informer covers that kind or key: there is nothing to wait for."""


def rv_at_least(have: str | None, want: str) -> bool:
    """True when resourceVersion `have` is `want` or newer."""
    if have is None:
        return False
    try:
        return int(have) >= int(want)
    except ValueError:
        return have == want


Reached = Callable[[str | None, str, str | None], bool]
_Waiter = tuple[str, str | None, asyncio.Future[None]]


class VersionWaiters:
    """Futures waiting for keys of one informer to catch up, grouped by namespace stream."""

    __slots__ = ("_by_stream",)

    def __init__(self) -> None:
        self._by_stream: dict[str | None, list[_Waiter]] = {}

    def __bool__(self) -> bool:
        return bool(self._by_stream)

    def add(self, stream: str | None, key: str, rv: str | None) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._by_stream.setdefault(stream, []).append((key, rv, fut))
        return fut

    def discard(self, stream: str | None, fut: asyncio.Future[None]) -> None:
        waiting = self._by_stream.get(stream)
        if waiting is None:
            return
        waiting[:] = [w for w in waiting if w[2] is not fut]
        if not waiting:
            del self._by_stream[stream]

    def check(self, stream: str | None, reached: Reached) -> None:
        """Resolve the waiters of `stream` for which `reached(stream, key, rv)` holds."""
        for key, rv, fut in self._by_stream.get(stream, ()):
            if not fut.done() and reached(stream, key, rv):
                fut.set_result(None)
