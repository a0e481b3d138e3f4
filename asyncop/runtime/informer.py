"""Informer: keeps a Store in step with the API server and tells handlers what changed.

Per namespace scope (all namespaces, one, or each of a set) a reflector loop does:
a streaming list (WatchList, KEP-3157: WATCH with `sendInitialEvents=true`,
`resourceVersionMatch=NotOlderThan`, bookmarks on; the current objects come as ADDED events
and end with a BOOKMARK annotated `k8s.io/initial-events-end: "true"`, after which the same
stream carries the live events) -> on a normal end, WATCH again from the last
resourceVersion seen (events and bookmarks advance it) -> on 410 Gone/Expired (HTTP or ERROR
event), list again and emit synthetic events by diffing the store against the new list
(delete for what vanished, update for a changed resourceVersion, add for what is new).
The streamed objects are collected aside and replace the store's share at once when the end
bookmark arrives, as a relist does; until then the store and `has_synced` are untouched.
As client-go's reflector does (tools/cache/reflector.go, `watchList`): the first request
sends the last synced resourceVersion (none at first: a consistent read), 410 or "too large
resource version" start it again without one, 429 and lost connections back off and retry
it, and any other refusal — a server without the WatchList feature (kube-apiserver before
1.27 refuses `resourceVersionMatch` on a watch, 1.27-1.31 and 1.33 by default refuse
`sendInitialEvents` with their WatchList gate off) — falls back to a paginated LIST
(limit/continue) then WATCH from the list's resourceVersion, for this sync only: the next
full sync tries the stream again. A stream that ends, or sends a plain bookmark, before the
end bookmark comes from a server that ignored the request: LIST too. `watch_list=False`
always lists. Errors back off with jittered exponential delays through the Clock; an
inactivity watchdog cancels a stream silent for longer than `watchdog_timeout` and resumes
it.

Invariants: the store is updated before handlers run; every handler sees every event in
order; handlers are plain sync callables that must not block (a controller's handler only
enqueues a key) and a raising handler is logged and never breaks the stream; a handler
with coroutine methods runs in its own task behind a bounded buffer, so a slow one holds up
neither the stream nor the other handlers (on overflow it catches up from the store, see
`listeners`); a handler added late first receives an add for every object already cached.
Objects get `apiVersion`/`kind` filled in (LIST items lack them), pass through `transform`
(default: drop `metadata.managedFields`; a metadata-only informer also drops kubectl's
last-applied-configuration annotation, `strip_last_applied`) and, with `compact` (the
default), share every part equal to the same part of their previous version or of the
previous object stored (`runtime/compact.py`: structural sharing and interned strings,
lossless) before caching. After each full sync the C heap's free pages go back to the OS
(`runtime/heap.py`).
A metadata-only Kind (`kind.metadata()`) lists and watches PartialObjectMetadata and caches
`{apiVersion, kind, metadata}` under the object's own apiVersion and kind.

Progress: each namespace stream records when it last made progress (a LIST finished, a watch
event or bookmark, a watch that ended without error: its timeout, or silence past the
watchdog); `last_activity()` is the oldest of these (the quietest stream), so a watch that
keeps failing shows up as a stall even though it is retried, while a quiet watch on a server
that sends no bookmarks does not. The fallback relist after `RELIST_AFTER_FAILURES` failed
watches refreshes the store but is not progress: the informer is still not watching.

Sharding: with a `shard_scope` (a sharded Manager's `ShardScope`) the informer lists and
watches only the shards this replica holds, with KEP-5866's `shardSelector`; a server that
echoes the selector in `metadata.shardInfo` filtered for us, and for one that does not (older
than 1.36, or the gate off) the informer filters with the same hash itself (a streaming list
carries no such echo, so its events are always filtered here too). When the held
shards change, the watch stops and the informer lists again: objects of shards gained come
as adds, those of shards given up as deletes (the controllers' shard gate drops their keys).

Read-your-own-writes: `wait_for_resource_version()` resolves against the stream's
resourceVersion, not only the object's: a key absent from the store is caught up once its
stream has passed the version (the object was deleted, or left the selection, after that
write). `add_handler` returns a `Registration`; `remove()` (or `remove_handler`) unregisters
it.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Iterable
from typing import Any

import structlog

from asyncop.api import ApiError, Gone, Kind, RawObject, error_from_status, object_key
from asyncop.api.shards import ShardSelector
from asyncop.client import Backoff, Client, TransportError
from asyncop.clock import Clock, wait_for
from asyncop.runtime.compact import Compactor
from asyncop.runtime.heap import release_free_memory
from asyncop.runtime.listeners import (
    AsyncEventHandler,
    EventHandler,
    FuncHandler,
    Handlers,
    Registration,
)
from asyncop.runtime.ownwrites import NotWatched, VersionWaiters, rv_at_least
from asyncop.runtime.shards import ShardScope
from asyncop.runtime.store import NAMESPACE_INDEX, IndexFunc, Store

log = structlog.get_logger("asyncop.informer")

__all__ = [
    "LAST_APPLIED",
    "AsyncEventHandler",
    "EventHandler",
    "FuncHandler",
    "Informer",
    "NotWatched",
    "Registration",
    "Transform",
    "strip_managed_fields",
]

Transform = Callable[[RawObject], RawObject]
DEFAULT_WATCHDOG_TIMEOUT = 120.0
"""About twice the interval at which an API server sends bookmarks on a quiet watch."""


RELIST_AFTER_FAILURES = 5
"""Consecutive API errors on watch after which the reflector lists again."""

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""The annotation of the BOOKMARK that ends a streaming list's initial events (KEP-3157)."""


class WatchListUnsupported(Exception):
    """The server answered a streaming list without streaming one (it ignored the request)."""


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
    """The default transform: drop `metadata.managedFields` (large, and useless to a cache).

    Safe for a reconciler that copies a cached object and PUTs it back: an update without
    managedFields keeps the stored ones (kube's field manager)."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
"""kubectl's copy of the object as last applied (client-side apply): as large as the spec."""


def _strip_last_applied(meta: dict[str, Any]) -> None:
    annotations = meta.get("annotations")
    if type(annotations) is dict and LAST_APPLIED in annotations:
        del annotations[LAST_APPLIED]
        if not annotations:
            del meta["annotations"]


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
        shard_scope: ShardScope | None = None,
        watch_list: bool = True,
        compact: bool = True,
        strip_last_applied: bool | None = None,
    ) -> None:
        """`watch_list`: sync with a streaming list when the server supports it (else, or
        with False, a paginated LIST); `compact`: share equal parts between cached objects
        (`runtime/compact.py`; cached objects must never be mutated either way);
        `strip_last_applied`: drop kubectl's last-applied-configuration annotation (default:
        for a metadata-only Kind only, whose objects are never written back whole; a whole
        object copied from the cache and PUT back without it would lose it on the server,
        so turn it on for whole kinds only when the operator writes them by patch or apply)."""
        self.client = client
        self.watch_list = watch_list
        self.compact = compact
        self.strip_last_applied = (kind.metadata_only if strip_last_applied is None
                                   else strip_last_applied)
        self._exemplar: Any = None  # the last object stored: what the next new one shares with
        self._compactor = Compactor()
        self._syncing: set[str | None] = set()  # streams in a streaming list's initial events
        self.shard_scope = shard_scope
        """The held shards to list and watch (None: everything); set before `run()`."""
        self._shard: dict[str | None, tuple[ShardSelector | None, bool]] = {}
        self._scope_version: dict[str | None, int] = {}
        self.events_received = 0
        """Watch events received (before any client-side shard filtering): the traffic."""
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
        self._rv: dict[str | None, str] = {}
        self._listed: set[str | None] = set()
        self._synced = asyncio.Event()
        self._activity: dict[str | None, float] = {}  # watchdog: reset on each watch attempt
        self._progress: dict[str | None, float] = {}  # last success per stream
        self._started_at: float | None = None
        self._waiters = VersionWaiters()
        self._rand = random.Random()
        self._running = False
        self._log = log.bind(kind=str(kind), metadata_only=True) if kind.metadata_only \
            else log.bind(kind=str(kind))
        self._dispatch = Handlers(self.store, log=self._log)
        self._added = self._dispatch.added
        self._updated = self._dispatch.updated
        self._deleted = self._dispatch.deleted

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
    ) -> Registration:
        """Register a handler; it first gets an add for every object already cached.

        Sync handlers run inline and must not block. A handler with coroutine methods gets
        its own task and a buffer of `buffer` events, so a slow one never holds up the
        stream or the other handlers; if it falls further behind, its backlog is replaced by
        a catch-up diff between what it was last told and the store. The returned
        registration's `remove()` unregisters the handler (as does `remove_handler`).
        """
        return self._dispatch.add(handler, buffer=buffer)

    def remove_handler(self, handler: object) -> bool:
        """Unregister `handler` (compared by identity); False if it was not registered.

        It receives no event after this returns; an async handler's task is cancelled.
        """
        return self._dispatch.remove(handler)

    @property
    def handler_count(self) -> int:
        """How many handlers are registered (sync and async)."""
        return len(self._dispatch)

    def last_activity(self) -> float | None:
        """Clock time (`clock.monotonic()`) of the last progress of the quietest stream.

        Progress is a finished LIST, a watch event or bookmark, or a watch that ended without
        error (its timeout, or silence past the watchdog); failed attempts are not progress,
        so a watch that keeps failing makes this fall behind. A stream that made no progress
        yet counts from when the current (or last) `run()` started; None before any run.
        """
        started = self._started_at
        if started is None:
            return None
        return min(self._progress.get(ns, started) for ns in self.namespaces)

    async def wait_for_resource_version(
        self, key: str, rv: str | None, *, timeout: float
    ) -> bool:
        """Wait until the cache reflects resourceVersion `rv` of `key` (rv=None: until absent).

        Caught up when the cached object has `rv` or newer, or when the key is absent and its
        stream has passed `rv` (deleted, or out of the selection, after that write). True
        when caught up, False when `timeout` (on the clock) passed first; raises NotWatched
        when the key lies outside this informer's namespaces.
        """
        stream = self._stream_of(key)
        if self._reached(stream, key, rv):
            return True
        fut = self._waiters.add(stream, key, rv)
        try:
            await wait_for(self.clock, fut, timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self._waiters.discard(stream, fut)

    def _stream_of(self, key: str) -> str | None:
        if self.namespaces == [None]:
            return None
        ns, sep, _ = key.partition("/")
        if sep and ns in self.namespaces:
            return ns
        raise NotWatched(f"{self.kind} informer does not watch {key!r}")

    def _reached(self, stream: str | None, key: str, rv: str | None) -> bool:
        obj = self.store.get(key)
        if rv is None:
            return obj is None
        if obj is not None and rv_at_least(obj["metadata"].get("resourceVersion"), rv):
            return True
        return stream in self._listed and rv_at_least(self._rv.get(stream), rv)

    def _progressed(self, ns: str | None, now: float) -> None:
        self._progress[ns] = now
        if self._waiters:
            self._waiters.check(ns, self._reached)

    async def run(self) -> None:
        """List and watch until cancelled (each namespace scope in its own loop)."""
        if self._running:
            raise RuntimeError(f"informer for {self.kind} is already running")
        self._running = True
        self._started_at = self.clock.monotonic()  # progress counts from this run
        self._progress.clear()
        self._dispatch.start()
        tasks = [asyncio.create_task(self._reflect(ns)) for ns in self.namespaces]
        if self.resync_period:
            tasks.append(asyncio.create_task(self._resync(self.resync_period)))
        try:
            await asyncio.gather(*tasks)
        finally:
            tasks.extend(self._dispatch.stop())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._running = False

    def _prepare(self, obj: dict[str, Any], old: RawObject | None = None, *,
                 compact: bool = True) -> RawObject:
        """A received object as it is cached: typed, transformed, and (with `compact`)
        sharing what it has in common with `old` (its cached version) or else with the
        object stored before it."""
        kind = self.kind
        if kind.metadata_only:  # PartialObjectMetadata, cached under the object's own kind
            obj = {"apiVersion": kind.api_version, "kind": kind.kind,
                   "metadata": obj.get("metadata") or {}}
        else:
            obj.setdefault("apiVersion", kind.api_version)
            obj.setdefault("kind", kind.kind)
        if self.strip_last_applied and type(obj.get("metadata")) is dict:
            _strip_last_applied(obj["metadata"])
        raw: RawObject = obj  # type: ignore[assignment]
        if self.transform is not None:
            raw = self.transform(raw)
        if compact and self.compact:
            raw = self._compactor.share(raw, old if old is not None else self._exemplar)
            self._exemplar = raw
        return raw

    def _cached(self, obj: dict[str, Any], pending: dict[str, RawObject] | None = None
                ) -> RawObject | None:
        """The cached (or collected) version of a received object, if any."""
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            return None
        name = meta.get("name")
        ns = meta.get("namespace")
        key = f"{ns}/{name}" if ns else f"{name}"
        if pending is not None:
            found = pending.get(key)
            if found is not None:
                return found
        return self.store.get(key)

    # -- reflector ----------------------------------------------------------------------------

    async def _reflect(self, ns: str | None) -> None:
        need_list = True
        watch_failing = False  # a relist forced by a failing watch is recovery, not progress
        listing = not self.watch_list  # this sync uses LIST (no streaming list, or refused)
        attempt = 0
        retry_after: float | None = None
        while True:
            streaming = False
            try:
                if need_list and (listing or self._nothing_held()):
                    await self._list_and_sync(ns, progress=not watch_failing)
                    need_list = False
                    listing = not self.watch_list  # the next full sync tries streaming again
                streaming = need_list
                healthy = await self._watch_scoped(ns, self._scope_version.get(ns, 0),
                                                   initial=streaming,
                                                   progress=not watch_failing)
                if healthy is None:  # the held shards changed: list them afresh
                    need_list = True
                    continue
                if ns in self._syncing:
                    raise WatchListUnsupported("the stream ended before the initial-events-end "
                                               "bookmark")
                need_list = False
                if healthy:
                    # it ran without error to its end (its timeout, or silent past the
                    # watchdog on a server that sends no bookmarks): progress too
                    self._progressed(ns, self.clock.monotonic())
                    attempt = 0
                    watch_failing = False
                    continue
                reason = "watch ended without events"
            except WatchListUnsupported as exc:
                listing = True
                self._log.info("streaming list not served; listing", namespace=ns,
                               reason=str(exc))
                continue
            except Gone as exc:
                if streaming and ns in self._syncing:  # again, from a consistent read
                    self._rv.pop(ns, None)
                need_list = True
                self._log.info("watch expired; relisting", namespace=ns, message=exc.message)
                if attempt == 0:
                    attempt += 1
                    continue
                reason = "expired"
            except ApiError as exc:
                initial = streaming and ns in self._syncing
                if streaming and not initial:
                    need_list = False  # the stream had synced: this broke its live part
                reason = repr(exc)
                retry_after = exc.retry_after
                if initial and exc.code != 429 and not _too_large_rv(exc):
                    # refused (no WatchList feature, or it is off): list, as client-go does
                    listing = True
                    self._log.info("streaming list refused; listing", namespace=ns,
                                   code=exc.code, message=exc.message)
                    continue
                # the server forgot our version (e.g. restarted with fresh storage), or the
                # watch keeps failing: start over from a fresh list
                if _too_large_rv(exc):
                    need_list = True
                    if initial:
                        self._rv.pop(ns, None)
                elif attempt + 1 >= RELIST_AFTER_FAILURES:
                    need_list = watch_failing = True
            except TransportError as exc:
                if streaming and ns not in self._syncing:
                    need_list = False
                reason = repr(exc)
            except Exception as exc:
                if streaming and ns not in self._syncing:
                    need_list = False
                if attempt == 0:
                    self._log.exception("informer loop failed", namespace=ns)
                reason = repr(exc)
            finally:
                self._syncing.discard(ns)
            delay = self.backoff.delay(attempt)
            if retry_after is not None:  # the server said when (429 Retry-After)
                delay = max(delay, retry_after)
                retry_after = None
            attempt += 1
            self._log.warning("informer backing off", namespace=ns, relist=need_list,
                              reason=reason, delay=round(delay, 3), attempt=attempt)
            await self.clock.sleep(delay)

    def _nothing_held(self) -> bool:
        """Sharded, and no shard held: the list is empty without asking (see LIST)."""
        scope = self.shard_scope
        return scope is not None and scope.selector() is None

    async def _list_and_sync(self, ns: str | None, *, progress: bool = True) -> None:
        items: list[RawObject] = []
        cont: str | None = None
        scope = self.shard_scope
        selector = scope.selector() if scope is not None else None
        version = scope.version if scope is not None else 0  # what this list is of
        wanted = selector.format() if selector is not None else None
        honoured = True
        rv = self._rv.get(ns, "")
        while scope is None or selector is not None:  # no shard held: nothing to list
            page = await self.client.list(
                self.kind, namespace=ns, label_selector=self.label_selector,
                field_selector=self.field_selector, limit=self.page_size,
                continue_=cont, shard_selector=wanted,
            )
            meta = page.get("metadata") or {}
            if wanted is not None:
                honoured = (meta.get("shardInfo") or {}).get("selector") == wanted
            page_items = page.pop("items", None) or []
            del page
            if selector is not None and not honoured:  # the server ignored it: filter here
                page_items = [i for i in page_items if selector.matches(i)]
            # page by page into their cached form: the raw pages never pile up
            items.extend(self._prepare(i, self._cached(i)) for i in page_items)
            del page_items
            cont = meta.get("continue") or None
            if not cont:
                rv = str(meta.get("resourceVersion", ""))
                break
        if scope is not None:
            self._shard[ns] = (selector, honoured)
            self._scope_version[ns] = version
        self._sync(ns, items)
        del items
        self._listed_at(ns, rv, progress=progress)

    def _listed_at(self, ns: str | None, rv: str, *, progress: bool) -> None:
        """The store's share for `ns` is the state at `rv`: record it, wake waiters, and
        give the sync's freed heap back to the OS (`runtime/heap.py`)."""
        release_free_memory()
        self._rv[ns] = rv
        self._listed.add(ns)
        if progress:
            self._progressed(ns, self.clock.monotonic())
        elif self._waiters:
            self._waiters.check(ns, self._reached)
        if not self._synced.is_set() and len(self._listed) == len(self.namespaces):
            self._synced.set()
            self._log.info("informer synced", objects=len(self.store))

    def _sync(self, ns: str | None, objs: Iterable[RawObject]) -> None:
        """Make the store's share for `ns` equal `objs` (cached form), emitting the
        differences."""
        store = self.store
        scope = set(store.keys() if ns is None else store.keys_by_index(NAMESPACE_INDEX, ns))
        for obj in objs:
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

    async def _watch_scoped(self, ns: str | None, version: int, *, initial: bool = False,
                            progress: bool = True) -> bool | None:
        """The watch, stopped early (None) when the held shards change."""
        scope = self.shard_scope
        if scope is None:
            return await self._watch_guarded(ns, initial=initial, progress=progress)
        if initial:
            version = scope.version  # the stream lists the shards held now
        elif scope.version != version:
            return None
        watch = asyncio.create_task(self._watch_guarded(ns, initial=initial, progress=progress))
        changed = asyncio.create_task(scope.wait_changed(version))
        try:
            done, _ = await asyncio.wait({watch, changed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (watch, changed):
                if not task.done():
                    task.cancel()
            await asyncio.gather(watch, changed, return_exceptions=True)
        if watch in done and not watch.cancelled():
            healthy = watch.result()  # raises what the watch raised
            return None if scope.version != version else healthy
        return None

    async def _watch_guarded(self, ns: str | None, *, initial: bool = False,
                             progress: bool = True) -> bool:
        """One watch under the inactivity watchdog; True when it was healthy."""
        wd = self.watchdog_timeout
        if wd is None:
            return await self._watch(ns, initial=initial, progress=progress)
        clock = self.clock
        task = asyncio.create_task(self._watch(ns, initial=initial, progress=progress))
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

    async def _watch(self, ns: str | None, *, initial: bool = False,
                     progress: bool = True) -> bool:
        """One watch stream; with `initial`, a streaming list: its initial events are
        collected aside until the end bookmark replaces the store's share with them."""
        if initial:
            self._syncing.add(ns)
        timeout = int(self.watch_timeout * (1.0 + self._rand.random()))
        started = self.clock.monotonic()
        events = 0
        store = self.store
        scope = self.shard_scope
        if initial:
            selector = scope.selector() if scope is not None else None
            if scope is not None:  # a stream carries no echo of the selector: filter here
                self._shard[ns] = (selector, False)
                self._scope_version[ns] = scope.version
            honoured = False
        else:
            selector, honoured = self._shard.get(ns, (None, True))
        if scope is not None and selector is None:
            await scope.wait_changed(scope.version)
            return True  # nothing held: nothing to watch until that changes
        local = selector if not honoured else None  # filter here what the server did not
        pending: dict[str, RawObject] | None = {} if initial else None
        stream = self.client.watch(
            self.kind, namespace=ns, resource_version=self._rv.get(ns) or None,
            label_selector=self.label_selector, field_selector=self.field_selector,
            timeout_seconds=timeout, allow_bookmarks=True, send_initial_events=initial,
            shard_selector=selector.format() if selector is not None else None,
        )
        async with contextlib.aclosing(stream):  # the response is released on any exit
            async for event in stream:
                now = self._activity[ns] = self.clock.monotonic()
                events += 1
                self.events_received += 1
                typ = event.get("type")
                raw = event.get("object") or {}
                if typ == "ERROR":
                    raise error_from_status(int(raw.get("code") or 500), dict(raw))
                meta = raw.get("metadata") or {}
                rv = meta.get("resourceVersion")
                if pending is not None:  # the initial events of a streaming list
                    if typ == "BOOKMARK":
                        if (meta.get("annotations") or {}).get(INITIAL_EVENTS_END) != "true":
                            raise WatchListUnsupported("a bookmark came before the "
                                                       "initial-events-end bookmark")
                        self._sync(ns, pending.values())
                        pending = None
                        self._syncing.discard(ns)
                        self._listed_at(ns, str(rv or ""), progress=progress)
                    elif typ == "DELETED":
                        pending.pop(object_key(self._prepare(raw, compact=False)), None)
                    elif local is None or local.matches(raw):
                        obj = self._prepare(raw, self._cached(raw, pending))
                        pending[object_key(obj)] = obj
                    continue
                if typ == "BOOKMARK":
                    if rv:
                        self._rv[ns] = str(rv)
                    self._progressed(ns, now)
                    continue
                if local is not None and not local.matches(raw):
                    if rv:
                        self._rv[ns] = str(rv)
                    self._progressed(ns, now)
                    continue
                if typ == "DELETED":
                    obj = self._prepare(raw, compact=False)
                    store.delete(obj)
                    self._deleted(obj)
                elif typ in ("ADDED", "MODIFIED"):
                    obj = self._prepare(raw, self._cached(raw))
                    old = store.add(obj)
                    if old is None:
                        self._added(obj)
                    else:
                        self._updated(old, obj)
                if rv:
                    self._rv[ns] = str(rv)
                self._progressed(ns, now)
        # a stream that ends at once without a single event is treated like an error
        return events > 0 or self.clock.monotonic() - started >= 1.0

    async def _resync(self, period: float) -> None:
        await self._synced.wait()
        while True:
            await self.clock.sleep(period)
            for obj in self.store.list():
                self._updated(obj, obj)
