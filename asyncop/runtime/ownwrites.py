"""Read-your-own-writes: a key's next reconcile waits until the cache has seen its writes.

The Client calls `OwnWrites.listener(kind, obj_or_None, key)` after every successful write.
While a reconcile of key R runs, a ContextVar marks it (`recording()`), so the listener files
(kind, key, resourceVersion or None for a delete) under R. Before R's next reconcile,
`catch_up()` waits until the cache reflects each of them: `Cache.wait_for_resource_version`,
or a delete event for that object at or after the written resourceVersion (an object deleted
after our write never shows the written version again). Delete events come from
`DeleteObserver` handlers on the controller's watched kinds; one that arrives before the
wait starts (the usual case: the delete is what enqueued R) settles the record at once.
The whole wait is bounded by `timeout` on the clock; a timeout only logs.

Invariants: writes made outside any reconcile, or in another controller's reconcile, are not
recorded here; only the last reconcile's writes are waited for; the pending records are
bounded (stale ones are dropped once `MAX_PENDING` keys have records).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

import structlog

from asyncop.api import Kind, RawObject, object_key
from asyncop.clock import Clock, wait_for

log = structlog.get_logger("asyncop.runtime.ownwrites")

MAX_PENDING = 4096

Writes = dict[tuple[Kind, str], str | None]


class VersionWaiter(Protocol):
    async def wait_for_resource_version(
        self, kind: Kind, key: str, rv: str | None, *, timeout: float
    ) -> object: ...


class _Recording:
    __slots__ = ("owner", "writes")

    def __init__(self, owner: OwnWrites) -> None:
        self.owner = owner
        self.writes: Writes = {}


_recording: ContextVar[_Recording | None] = ContextVar("asyncop_own_writes", default=None)


def _at_least(have: str | None, want: str) -> bool:
    if have is None:
        return False
    try:
        return int(have) >= int(want)
    except ValueError:
        return have == want


class DeleteObserver:
    """An informer handler that releases waits for objects deleted after our write."""

    __slots__ = ("_kind", "_own")

    def __init__(self, own: OwnWrites, kind: Kind) -> None:
        self._own = own
        self._kind = kind

    def on_add(self, obj: RawObject) -> None:
        return None

    def on_update(self, old: RawObject, new: RawObject) -> None:
        return None

    def on_delete(self, obj: RawObject) -> None:
        final_rv = (obj.get("metadata") or {}).get("resourceVersion")
        self._own.deleted(self._kind, object_key(obj), final_rv)


class OwnWrites:
    """The writes of one controller's reconciles, and the waits before the next ones."""

    def __init__(self, *, timeout: float) -> None:
        self.timeout = timeout
        # reconcile key -> (when, its writes); and written object -> reconcile keys.
        self.pending: dict[str, tuple[float, Writes]] = {}
        self._by_object: dict[tuple[Kind, str], set[str]] = {}
        self._deletion_waiters: dict[
            tuple[Kind, str], list[tuple[str, asyncio.Future[None]]]
        ] = {}

    def listener(self, kind: Kind, obj: RawObject | None, key: str) -> None:
        """The Client's write listener: file the write under the running reconcile, if ours."""
        rec = _recording.get()
        if rec is None or rec.owner is not self:
            return
        rec.writes[(kind, key)] = (
            None if obj is None else (obj.get("metadata") or {}).get("resourceVersion")
        )

    def observer(self, kind: Kind) -> DeleteObserver:
        return DeleteObserver(self, kind)

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

    def deleted(self, kind: Kind, key: str, final_rv: str | None) -> None:
        """An informer saw `key` deleted: writes to it at or before `final_rv` are seen."""
        obj = (kind, key)
        for owner in list(self._by_object.get(obj, ())):
            want = self.pending[owner][1].get(obj)
            if want is not None and _at_least(final_rv, want):
                del self.pending[owner][1][obj]
                self._unindex(owner, obj)
        for want, fut in self._deletion_waiters.get(obj, ()):
            if not fut.done() and _at_least(final_rv, want):
                fut.set_result(None)

    def _remember(self, key: str, writes: Writes, now: float) -> None:
        if len(self.pending) >= MAX_PENDING:
            # Keys never reconciled again (deleted objects) must not pile up; a record older
            # than the wait bound would only cost one bounded wait anyway.
            for stale in [k for k, (t, _) in self.pending.items() if now - t > self.timeout]:
                self._forget(stale)
        self._forget(key)
        self.pending[key] = (now, writes)
        for obj in writes:
            self._by_object.setdefault(obj, set()).add(key)

    def _forget(self, key: str) -> Writes:
        record = self.pending.pop(key, None)
        if record is None:
            return {}
        for obj in record[1]:
            self._unindex(key, obj)
        return record[1]

    def _unindex(self, key: str, obj: tuple[Kind, str]) -> None:
        owners = self._by_object.get(obj)
        if owners is not None:
            owners.discard(key)
            if not owners:
                del self._by_object[obj]

    async def catch_up(self, cache: VersionWaiter, clock: Clock, key: str) -> None:
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
                seen = await wait_for(clock, self._seen(cache, kind, obj_key, rv, remaining),
                                      remaining)
            except TimeoutError:
                seen = False
            except Exception:
                log.exception("waiting for own write failed", kind=str(kind), key=obj_key)
                continue
            if not seen:
                early = clock.monotonic() < deadline  # e.g. no informer for that kind
                (log.debug if early else log.warning)(
                    "cache behind own write, proceeding",
                    kind=str(kind),
                    key=obj_key,
                    resource_version=rv,
                )

    async def _seen(
        self, cache: VersionWaiter, kind: Kind, key: str, rv: str | None, timeout: float
    ) -> bool:
        """True once the cache has `rv` for `key` (or saw it deleted at or after `rv`)."""
        waiting = asyncio.ensure_future(
            cache.wait_for_resource_version(kind, key, rv, timeout=timeout)
        )
        if rv is None:
            try:
                return await waiting is not False
            finally:
                waiting.cancel()
        deleted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (rv, deleted)
        self._deletion_waiters.setdefault((kind, key), []).append(entry)
        try:
            await asyncio.wait((waiting, deleted), return_when=asyncio.FIRST_COMPLETED)
            if deleted.done():
                return True
            return waiting.result() is not False
        finally:
            waiting.cancel()
            deleted.cancel()
            entries = self._deletion_waiters.get((kind, key), [])
            if entry in entries:
                entries.remove(entry)
            if not entries:
                self._deletion_waiters.pop((kind, key), None)
