"""The watch endpoint: chunked JSON lines from a Watcher, with resume, bookmarks, timeouts.

Start (docs/apiserver.md, "Watch"): resourceVersion unset/"0" → synthetic ADDED for current
objects; N → replay history after N (410 ERROR event if compacted, 504 ERROR if in the
future); a streaming list (sendInitialEvents=true, `http/watchlist.py` for its options and
the WatchList gate) → ADDED for current objects (at least as new as N: 504 when N is in the
future) then, with bookmarks allowed, a BOOKMARK annotated `k8s.io/initial-events-end`;
sendInitialEvents=false → no initial events, live from N (or from now). Under
`Accept: ...;as=PartialObjectMetadata` every event's object, bookmarks included, is a
`meta.k8s.io/v1` PartialObjectMetadata (kube: asPartialObjectMetadata on every watch event).
The watcher is registered in the same synchronous step that reads
the starting state, so no event is lost or duplicated. Bookmarks and timeoutSeconds run on the
server's clock; a bookmark is sent only when the queue is empty, so its resourceVersion
covers everything delivered. Invariant: the stream always ends cleanly (end of chunked body).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from typing import Any

import orjson
from aiohttp import web

from asyncop.api import ApiError
from asyncop.apiserver.core import errors
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.http import sharding, watchlist
from asyncop.apiserver.http.selectors import matcher, parse_field_selector, parse_label_selector
from asyncop.apiserver.http.wire import Target, partial_metadata, wants_metadata, wants_table
from asyncop.apiserver.storage.objects import as_version
from asyncop.apiserver.storage.store import Store
from asyncop.apiserver.storage.views import Views
from asyncop.apiserver.storage.watch import Event, View, Watcher, encode_line
from asyncop.apiserver.tables.table import to_table
from asyncop.apiserver.webhooks.conversion import Conversion
from asyncop.clock import Clock, Timer

INITIAL_EVENTS_END = watchlist.INITIAL_EVENTS_END
#: below this many queued events, the pump yields one loop turn before writing
COALESCE = 64


class WatchRoutes:
    def __init__(self, store: Store, clock: Clock, *, bookmark_interval: float,
                 conversion: Conversion) -> None:
        self.store = store
        self.clock = clock
        self.bookmark_interval = bookmark_interval
        self._views = Views()
        self.conversion = conversion

    async def _converted(self, rt: ResourceType, hook: dict[str, Any] | None,
                         lines: list[bytes], watcher: Watcher) -> list[bytes]:
        """Lines of stored-version objects as `rt`'s version, through the CRD's conversion
        webhook (one review per batch); lines without an object pass unchanged."""
        if hook is None:
            return lines
        events = [orjson.loads(line) for line in lines]
        at = [i for i, e in enumerate(events) if e["type"] not in ("BOOKMARK", "ERROR")]
        try:
            objs = await self.conversion.convert(rt, hook, [events[i]["object"] for i in at],
                                                 rt.api_version)
        except ApiError as err:  # kube ends the watch with the error
            watcher.close()
            return [encode_line("ERROR", dict(err.status))]
        out = list(lines)
        for i, obj in zip(at, objs, strict=True):
            out[i] = encode_line(events[i]["type"], self._views.view(rt, obj))
        return out

    async def watch(self, request: web.Request, t: Target) -> web.StreamResponse:
        rt = t.rt
        q = request.query
        start = watchlist.watch_start(q, minor=self.store.minor,
                                      enabled=watchlist.GATE in self.store.features)
        labels = parse_label_selector(q.get("labelSelector"))
        fields = parse_field_selector(q.get("fieldSelector"), rt)
        name = t.name
        selected_name = fields.value_of("metadata.name")
        if name and selected_name and selected_name != name:
            raise errors.bad_request("fieldSelector metadata.name doesn't match requested name")
        bookmarks = q.get("allowWatchBookmarks", "").lower() in ("true", "1")
        timeout = _float(q.get("timeoutSeconds"))
        rv_text = q.get("resourceVersion") or ""
        shard = sharding.shard_selector(q, enabled=sharding.GATE in self.store.features)
        watcher = Watcher(gr=rt.gr, namespace=t.namespace if rt.namespaced else None,
                          name=name, match=sharding.with_shard(matcher(labels, fields), shard),
                          queue_size=self.store.watch_queue_size)
        table = wants_table(request)
        if table and start.end_bookmark:  # kube: watchListEndpointRestrictions (no Table)
            if not _plain_json_accepted(request.headers.get("Accept", "")):
                raise errors.not_acceptable()
            table = False
        metadata_only = wants_metadata(request)
        hook = None if metadata_only else self.conversion.webhook(rt)
        projection = _projection(rt, self._views, metadata_only=metadata_only,
                                 stored=hook is not None)
        # the synchronous start: read state and register the watcher in one step
        first, error = self._start(rt, watcher, rv_text, projection, start=start,
                                   metadata_only=metadata_only)
        if error is None:
            self.store.hub.add(watcher)
        response = web.StreamResponse(status=200)
        response.content_type = "application/json"
        response.enable_chunked_encoding()
        timers: dict[str, Timer] = {}
        state = {"timed_out": False, "bookmark": False, "table_first": True}
        try:
            await response.prepare(request)
            if error is not None:
                status = dict(error.status)
                await response.write(encode_line("ERROR", status))
                return response
            first = await self._converted(rt, hook, first, watcher)
            if table:
                first = [self._table_line(rt, line, state) for line in first]
            if first:
                await response.write(b"".join(first))
            if timeout is not None:
                timers["timeout"] = self.clock.call_later(timeout,
                                                          lambda: _expire(state, watcher))
            if bookmarks:
                self._schedule_bookmark(state, watcher, timers)
            await self._pump(response, watcher, rt, state, timers, bookmarks=bookmarks,
                             table=table, projection=projection, hook=hook,
                             metadata_only=metadata_only)
            with contextlib.suppress(ConnectionError):
                await response.write_eof()
        except ConnectionError:
            pass
        finally:
            for timer in timers.values():
                timer.cancel()
            self.store.hub.remove(watcher)
            watcher.close()
        return response

    def _start(self, rt: ResourceType, watcher: Watcher, rv_text: str, projection: Projection,
               *, start: watchlist.WatchStart, metadata_only: bool,
               ) -> tuple[list[bytes], ApiError | None]:
        """The lines that open the stream (initial ADDEDs or replayed history), or the
        error event to send instead. Never awaits: no event can slip in between."""
        first: list[bytes] = []
        current = self.store.resource_version
        if start.send_initial is not None and rv_text not in ("", "0"):
            try:  # NotOlderThan N: the state now, which is at least N unless N is ahead
                wanted = int(rv_text)
            except ValueError:
                raise errors.bad_request(f'invalid resource version "{rv_text}"') from None
            if wanted > current:
                return [], errors.too_large_rv(wanted, current)
        if start.send_initial or (start.send_initial is None and rv_text in ("", "0")):
            for obj in self.store.raw_items(rt.gr, watcher.namespace):
                if watcher.transition(_Added(obj)) == "ADDED":
                    first.append(encode_line("ADDED", projection[1](obj)))
            if start.end_bookmark:
                first.append(encode_line("BOOKMARK", _bookmark(
                    rt, current, initial_end=True, metadata_only=metadata_only)))
            return first, None
        if start.send_initial is not None:  # sendInitialEvents=false: live from here
            if rv_text in ("", "0"):
                return first, None
        try:
            since = int(rv_text)
        except ValueError:
            raise errors.bad_request(f'invalid resource version "{rv_text}"') from None
        if since > current:
            return [], errors.too_large_rv(since, current)
        events = self.store.hub.since(since)
        if events is None:
            return [], errors.expired(
                f"too old resource version: {since} ({self.store.hub.floor + 1})")
        for event in events:
            if event.gr == rt.gr:
                kind = watcher.transition(event)
                if kind is not None:
                    first.append(_line(event, kind, projection))
        return first, None

    async def _pump(self, response: web.StreamResponse, watcher: Watcher, rt: ResourceType,
                    state: dict[str, bool], timers: dict[str, Timer], *, bookmarks: bool,
                    table: bool, projection: Projection,
                    hook: dict[str, Any] | None, metadata_only: bool = False) -> None:
        while True:
            if watcher.queue:
                if len(watcher.queue) < COALESCE:
                    # one more loop turn: the writes being handled in it join this batch,
                    # so a busy server sends a few large chunks instead of many small ones
                    await asyncio.sleep(0)
                lines = []
                while watcher.queue:
                    kind, event = watcher.queue.popleft()
                    lines.append(_line(event, kind, projection))
                lines = await self._converted(rt, hook, lines, watcher)
                if table:
                    lines = [self._table_line(rt, line, state) for line in lines]
                await response.write(b"".join(lines))
                continue
            if state["timed_out"]:
                if bookmarks:
                    await response.write(encode_line("BOOKMARK", _bookmark(
                        rt, self.store.resource_version, metadata_only=metadata_only)))
                return
            if watcher.closed:
                return
            if state["bookmark"]:
                state["bookmark"] = False
                await response.write(encode_line("BOOKMARK", _bookmark(
                    rt, self.store.resource_version, metadata_only=metadata_only)))
                self._schedule_bookmark(state, watcher, timers)
                continue
            await watcher.wait()

    def _schedule_bookmark(self, state: dict[str, bool], watcher: Watcher,
                           timers: dict[str, Timer]) -> None:
        def fire() -> None:
            state["bookmark"] = True
            watcher.wake()

        timers["bookmark"] = self.clock.call_later(self.bookmark_interval, fire)

    def _table_line(self, rt: ResourceType, line: bytes, state: dict[str, bool]) -> bytes:
        event = orjson.loads(line)
        if event["type"] in ("BOOKMARK", "ERROR"):
            return line
        tbl = to_table(rt, [event["object"]], now=self.clock.now(),
                                  include_columns=state["table_first"])
        if not state["table_first"]:
            tbl["columnDefinitions"] = []
        state["table_first"] = False
        tbl.setdefault("metadata", {})["resourceVersion"] = \
            event["object"]["metadata"].get("resourceVersion", "")
        return encode_line(event["type"], tbl)


Projection = tuple[str, View]


def _projection(rt: ResourceType, views: Views, *, metadata_only: bool,
                stored: bool = False) -> Projection:
    """(cache key, view) turning a stored object into what this watch sends (`stored`: as
    stored, for a conversion webhook to turn into the watched version)."""
    if metadata_only:
        return ("meta.k8s.io/v1:PartialObjectMetadata", partial_metadata)
    if stored:
        return ("stored", _as_stored)
    if not rt.is_custom:
        def view(obj: dict[str, Any]) -> dict[str, Any]:
            return as_version(obj, rt)

        return (rt.api_version, view)

    def custom_view(obj: dict[str, Any]) -> dict[str, Any]:
        return views.view(rt, obj)

    # a CRD update can change the schema of a version: the cached line is keyed by its content
    digest = hashlib.blake2b(orjson.dumps(rt.schema, option=orjson.OPT_SORT_KEYS),
                             digest_size=8).hexdigest()
    return (f"{rt.api_version}#{digest}", custom_view)


def _as_stored(obj: dict[str, Any]) -> dict[str, Any]:
    return obj


def _line(event: Event, kind: str, projection: Projection) -> bytes:
    key, view = projection
    return event.line(key, view, None if kind == event.type else kind)


class _Added(Event):
    def __init__(self, obj: dict[str, Any]) -> None:
        super().__init__(0, "ADDED", ("", ""), obj, None)


def _expire(state: dict[str, bool], watcher: Watcher) -> None:
    state["timed_out"] = True
    watcher.wake()


def _bookmark(rt: ResourceType, rv: int, *, initial_end: bool = False,
              metadata_only: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    if metadata_only:
        return partial_metadata({"metadata": meta})
    return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}


def _plain_json_accepted(accept: str) -> bool:
    """The Accept header also takes JSON without a conversion (`as=`): the fallback kube
    negotiates to when a Table is not allowed."""
    for part in accept.split(","):
        media, _, params = part.partition(";")
        if media.strip().lower() in ("application/json", "*/*", "application/*") and \
                "as=" not in params:
            return True
    return False


def _float(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        raise errors.bad_request(f'invalid timeoutSeconds "{value}"') from None
    if seconds < 0:
        return 0.0  # kube arms its timer with the negative duration: the watch ends at once
    return seconds if seconds > 0 else None  # 0: the server's default (no deadline here)
