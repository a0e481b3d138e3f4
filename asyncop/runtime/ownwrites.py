"""Read-your-own-writes: a key's next reconcile waits until the cache has seen its writes.

The Client calls `OwnWrites.listener(kind, obj_or_None, key)` after every successful write.
While a reconcile of key R runs, a ContextVar marks it (`recording()`), so the listener files
(kind, key, resourceVersion or None for a delete) under R. Before R's next reconcile,
`catch_up()` waits until the cache reflects each of them through
`Cache.wait_for_resource_version`, which also settles an object deleted after our write (its
informer's stream has passed the written resourceVersion and the key is gone), so a delete
never costs a timeout. A kind no informer watches (`NotWatched`: the reconciler never reads
it from the cache) has nothing to wait for. The whole wait is bounded by `timeout` on the
clock; a timeout only logs.

Invariants: writes made outside any reconcile, or in another controller's reconcile, are not
recorded here; only the last reconcile's writes are waited for; the pending records are
bounded: once more than `MAX_PENDING` keys have records, those older than `timeout` are
dropped, oldest first (`pending` is kept in time order, so that costs O(1) per write), which
leaves at most the keys written within one `timeout`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

import structlog

from asyncop.api import Kind, RawObject
from asyncop.clock import Clock, wait_for
from asyncop.runtime.progress import NotWatched

log = structlog.get_logger("asyncop.runtime.ownwrites")

MAX_PENDING = 4096

Writes = dict[tuple[Kind, str], str | None]


class CacheVersions(Protocol):
    async def wait_for_resource_version(
        self, kind: Kind, key: str, rv: str | None, *, timeout: float
    ) -> object: ...


class _Recording:
    __slots__ = ("owner", "writes")

    def __init__(self, owner: OwnWrites) -> None:
        self.owner = owner
        self.writes: Writes = {}


_recording: ContextVar[_Recording | None] = ContextVar("asyncop_own_writes", default=None)


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
    def recording(self, key: str, clock: Clock) -> Iterator[None]:
        """Record the writes made inside the block (the reconcile of `key`)."""
        rec = _Recording(self)
        token = _recording.set(rec)
        try:
            yield
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

    async def catch_up(self, cache: CacheVersions, clock: Clock, key: str) -> None:
        """Wait (bounded) until the cache reflects the writes of `key`'s last reconcile."""
        writes = self._forget(key)
        if not writes:
            return
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
                log.warning(
                    "cache behind own write, proceeding",
                    kind=str(kind),
                    key=obj_key,
                    resource_version=rv,
                )
