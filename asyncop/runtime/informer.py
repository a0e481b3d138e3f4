"""Informer: keeps a Store in step with the API server and tells handlers what changed.

Per namespace scope (all namespaces, one, or each of a set) a reflector loop does:
paginated LIST (limit/continue) -> WATCH from the list's resourceVersion with bookmarks ->
on a normal end, WATCH again from the last resourceVersion seen (events and bookmarks
advance it) -> on 410 Gone/Expired (HTTP or ERROR event), LIST again and emit synthetic
events by diffing the store against the new list (delete for what vanished, update for a
changed resourceVersion, add for what is new). Errors back off with jittered exponential
delays through the Clock; an inactivity watchdog cancels a stream silent for longer than
`watchdog_timeout` and resumes it.

Invariants: the store is updated before handlers run; every handler sees every event in
order; handlers are plain sync callables that must not block (a controller's handler only
enqueues a key) and a raising handler is logged and never breaks the stream; a handler
with coroutine methods runs in its own task behind a bounded buffer, so a slow one holds up
neither the stream nor the other handlers (on overflow it catches up from the store, see
`listeners`); a handler added late first receives an add for every object already cached.
Objects get `apiVersion`/`kind` filled in (LIST items lack them) and pass through
`transform` (default: drop `metadata.managedFields`) before caching.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
from collections.abc import Callable, Iterable
from typing import Any, cast

import structlog

from asyncop.api import ApiError, Gone, Kind, RawObject, error_from_status, object_key
from asyncop.client import Backoff, Client, TransportError
from asyncop.clock import Clock
from asyncop.runtime.listeners import AsyncEventHandler, AsyncListener, EventHandler, FuncHandler
from asyncop.runtime.store import NAMESPACE_INDEX, IndexFunc, Store

log = structlog.get_logger("asyncop.informer")

__all__ = [
    "AsyncEventHandler",
    "EventHandler",
    "FuncHandler",
    "Informer",
    "Transform",
    "strip_managed_fields",
]

Transform = Callable[[RawObject], RawObject]
DEFAULT_WATCHDOG_TIMEOUT = 120.0
"""About twice the interval at which an API server sends bookmarks on a quiet watch."""


RELIST_AFTER_FAILURES = 5
"""Consecutive API errors on watch after which the reflector lists again."""


def _too_large_rv(exc: ApiError) -> bool:
    """The 504 a server answers when asked to watch from a version it has not reached."""
    if exc.code != 504:
        return False
    causes = exc.causes
    return any(c.get("reason") == "ResourceVersionTooLarge" for c in causes) or (
        "too large resource version" in exc.message.lower()
    )


def _changed(old: RawObject, new: RawObject) -> bool:
    """A relisted object differs from the cached one (new version, or recreated)."""
    a, b = old["metadata"], new["metadata"]
    return a.get("resourceVersion") != b.get("resourceVersion") or a.get("uid") != b.get("uid")


def strip_managed_fields(obj: RawObject) -> RawObject:
    """The default transform: drop `metadata.managedFields` (large, and useless to a cache)."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


class Informer:
    def __init__(
        self,
        client: Client,
        kind: Kind,
        *,
        clock: Clock,
        namespace: str | Iterable[str] | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resync_period: float | None = None,
        transform: Transform | None = strip_managed_fields,
        page_size: int = 500,
        watchdog_timeout: float | None = None,
        watch_timeout: int = 300,
        backoff: Backoff | None = None,
        indexers: dict[str, IndexFunc] | None = None,
    ) -> None:
        self.client = client
        self.kind = kind
        self.clock = clock
        if not kind.namespaced or namespace is None:
            self.namespaces: list[str | None] = [None]
        elif isinstance(namespace, str):
            self.namespaces = [namespace]
        else:
            self.namespaces = [*sorted(set(namespace))]
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.transform = transform
        self.page_size = page_size
        wd = DEFAULT_WATCHDOG_TIMEOUT if watchdog_timeout is None else watchdog_timeout
        self.watchdog_timeout: float | None = wd if wd > 0 else None
        self.watch_timeout = watch_timeout
        self.backoff = backoff or Backoff(base=0.5, cap=30.0)
        self.store = Store(indexers=indexers)
        self._handlers: list[EventHandler] = []
        self._failing: set[str] = set()
        self._async: list[AsyncListener] = []
        self._listener_tasks: set[asyncio.Task[None]] = set()
        self._rv: dict[str | None, str] = {}
        self._listed: set[str | None] = set()
        self._synced = asyncio.Event()
        self._activity: dict[str | None, float] = {}
        self._rand = random.Random()
        self._running = False
        self._log = log.bind(kind=str(kind))

    # -- public surface -----------------------------------------------------------------------

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    @property
    def last_resource_version(self) -> str | None:
        """The newest resourceVersion seen (the highest across namespace streams)."""
        if not self._rv:
            return None
        versions = list(self._rv.values())
        try:
            return max(versions, key=int)
        except ValueError:
            return versions[-1]

    def add_handler(
        self, handler: EventHandler | AsyncEventHandler, *, buffer: int = 10_000
    ) -> None:
        """Register a handler; it first gets an add for every object already cached.

        Sync handlers run inline and must not block. A handler with coroutine methods gets
        its own task and a buffer of `buffer` events, so a slow one never holds up the
        stream or the other handlers; if it falls further behind, its backlog is replaced by
        a catch-up diff between what it was last told and the store.
        """
        if inspect.iscoroutinefunction(handler.on_add):
            async_handler = cast(AsyncEventHandler, handler)
            listener = AsyncListener(async_handler, self.store, limit=buffer, log=self._log)
            self._async.append(listener)
            for obj in self.store.list():
                listener.push("add", None, obj)
            if self._running:
                self._start_listener(listener)
            return
        sync_handler = cast(EventHandler, handler)
        self._handlers.append(sync_handler)
        for obj in self.store.list():
            self._call(sync_handler.on_add, obj)

    def _start_listener(self, listener: AsyncListener) -> None:
        task = asyncio.create_task(listener.run())
        self._listener_tasks.add(task)
        task.add_done_callback(self._listener_tasks.discard)

    async def run(self) -> None:
        """List and watch until cancelled (each namespace scope in its own loop)."""
        if self._running:
            raise RuntimeError(f"informer for {self.kind} is already running")
        self._running = True
        for listener in self._async:
            self._start_listener(listener)
        tasks = [asyncio.create_task(self._reflect(ns)) for ns in self.namespaces]
        if self.resync_period:
            tasks.append(asyncio.create_task(self._resync(self.resync_period)))
        try:
            await asyncio.gather(*tasks)
        finally:
            tasks.extend(self._listener_tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._running = False

    # -- dispatch -----------------------------------------------------------------------------

    def _call(self, fn: Callable[..., None], *args: RawObject) -> None:
        try:
            fn(*args)
        except Exception as exc:
            # the first failure of a handler is logged with its traceback, repeats without
            name = getattr(fn, "__qualname__", type(fn).__qualname__)
            first = name not in self._failing
            self._failing.add(name)
            self._log.error("event handler failed", handler=name, error=repr(exc),
                            exc_info=exc if first else None)

    def _added(self, obj: RawObject) -> None:
        for h in self._handlers:
            self._call(h.on_add, obj)
        for listener in self._async:
            listener.push("add", None, obj)

    def _updated(self, old: RawObject, new: RawObject) -> None:
        for h in self._handlers:
            self._call(h.on_update, old, new)
        for listener in self._async:
            listener.push("update", old, new)

    def _deleted(self, obj: RawObject) -> None:
        for h in self._handlers:
            self._call(h.on_delete, obj)
        for listener in self._async:
            listener.push("delete", None, obj)

    def _prepare(self, obj: dict[str, Any]) -> RawObject:
        obj.setdefault("apiVersion", self.kind.api_version)
        obj.setdefault("kind", self.kind.kind)
        raw: RawObject = obj  # type: ignore[assignment]
        return self.transform(raw) if self.transform is not None else raw

    # -- reflector ----------------------------------------------------------------------------

    async def _reflect(self, ns: str | None) -> None:
        need_list = True
        attempt = 0
        retry_after: float | None = None
        while True:
            try:
                if need_list:
                    await self._list_and_sync(ns)
                    need_list = False
                healthy = await self._watch_guarded(ns)
                if healthy:
                    attempt = 0
                    continue
                reason = "watch ended without events"
            except Gone as exc:
                need_list = True
                self._log.info("watch expired; relisting", namespace=ns, message=exc.message)
                if attempt == 0:
                    attempt += 1
                    continue
                reason = "expired"
            except ApiError as exc:
                reason = repr(exc)
                retry_after = exc.retry_after
                # the server forgot our version (e.g. restarted with fresh storage), or the
                # watch keeps failing: start over from a fresh list
                if _too_large_rv(exc) or attempt + 1 >= RELIST_AFTER_FAILURES:
                    need_list = True
            except TransportError as exc:
                reason = repr(exc)
            except Exception as exc:
                if attempt == 0:
                    self._log.exception("informer loop failed", namespace=ns)
                reason = repr(exc)
            delay = self.backoff.delay(attempt)
            if retry_after is not None:  # the server said when (429 Retry-After)
                delay = max(delay, retry_after)
                retry_after = None
            attempt += 1
            self._log.warning("informer backing off", namespace=ns, relist=need_list,
                              reason=reason, delay=round(delay, 3), attempt=attempt)
            await self.clock.sleep(delay)

    async def _list_and_sync(self, ns: str | None) -> None:
        items: list[dict[str, Any]] = []
        cont: str | None = None
        while True:
            page = await self.client.list(
                self.kind, namespace=ns, label_selector=self.label_selector,
                field_selector=self.field_selector, limit=self.page_size, continue_=cont,
            )
            items.extend(page.get("items") or [])
            meta = page.get("metadata") or {}
            cont = meta.get("continue") or None
            if not cont:
                rv = str(meta.get("resourceVersion", ""))
                break
        self._sync(ns, items)
        self._rv[ns] = rv
        self._listed.add(ns)
        if not self._synced.is_set() and len(self._listed) == len(self.namespaces):
            self._synced.set()
            self._log.info("informer synced", objects=len(self.store))

    def _sync(self, ns: str | None, items: list[dict[str, Any]]) -> None:
        """Make the store's share for `ns` equal `items`, emitting the differences."""
        store = self.store
        scope = set(store.keys() if ns is None else store.keys_by_index(NAMESPACE_INDEX, ns))
        for item in items:
            obj = self._prepare(item)
            key = object_key(obj)
            scope.discard(key)
            old = store.add(obj)
            if old is None:
                self._added(obj)
            elif _changed(old, obj):
                self._updated(old, obj)
        for key in scope:
            gone = store.delete(key)
            if gone is not None:
                self._deleted(gone)

    async def _watch_guarded(self, ns: str | None) -> bool:
        """One watch under the inactivity watchdog; True when it was healthy."""
        wd = self.watchdog_timeout
        if wd is None:
            return await self._watch(ns)
        clock = self.clock
        task = asyncio.create_task(self._watch(ns))
        self._activity[ns] = clock.monotonic()
        fired = False
        timer = None

        def check() -> None:
            nonlocal fired, timer
            idle = clock.monotonic() - self._activity[ns]
            if idle >= wd:
                fired = True
                task.cancel()
            else:
                timer = clock.call_later(wd - idle, check)

        timer = clock.call_later(wd, check)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if fired and (current is None or not current.cancelling()):
                self._log.warning("watch silent; reconnecting", namespace=ns, idle=wd)
                return True
            raise
        finally:
            timer.cancel()
            if not task.done():
                task.cancel()

    async def _watch(self, ns: str | None) -> bool:
        timeout = int(self.watch_timeout * (1.0 + self._rand.random()))
        started = self.clock.monotonic()
        events = 0
        store = self.store
        stream = self.client.watch(
            self.kind, namespace=ns, resource_version=self._rv.get(ns),
            label_selector=self.label_selector, field_selector=self.field_selector,
            timeout_seconds=timeout, allow_bookmarks=True,
        )
        async with contextlib.aclosing(stream):  # the response is released on any exit
            async for event in stream:
                self._activity[ns] = self.clock.monotonic()
                events += 1
                typ = event.get("type")
                raw = event.get("object") or {}
                if typ == "ERROR":
                    raise error_from_status(int(raw.get("code") or 500), dict(raw))
                rv = (raw.get("metadata") or {}).get("resourceVersion")
                if typ == "BOOKMARK":
                    if rv:
                        self._rv[ns] = str(rv)
                    continue
                obj = self._prepare(raw)
                if typ == "DELETED":
                    store.delete(obj)
                    self._deleted(obj)
                elif typ in ("ADDED", "MODIFIED"):
                    old = store.add(obj)
                    if old is None:
                        self._added(obj)
                    else:
                        self._updated(old, obj)
                if rv:
                    self._rv[ns] = str(rv)
        # a stream that ends at once without a single event is treated like an error
        return events > 0 or self.clock.monotonic() - started >= 1.0

    async def _resync(self, period: float) -> None:
        await self._synced.wait()
        while True:
            await self.clock.sleep(period)
            for obj in self.store.list():
                self._updated(obj, obj)
