"""Watch fan-out: the bounded event history and one bounded queue per watcher.

Every committed change becomes one `Event` appended to a history ring (resume from a
resourceVersion replays it) and offered to the watchers of its resource. An event's wire line
(`{"type":…,"object":…}\\n`) is serialized once per apiVersion and shared by every watcher.
A watcher that falls more than `queue_size` events behind is closed, as the real server does,
so its client re-lists. Invariants: events are offered in resourceVersion order; resume from
rv N is possible iff N >= `floor` (the newest rv whose successor may have been dropped);
offering never blocks or awaits.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from asyncop.apiserver.core.resources import ResourceType

GR = tuple[str, str]
Match = Callable[[dict[str, Any]], bool]
View = Callable[[dict[str, Any]], dict[str, Any]]


class Event:
    """One committed change. `obj` is the stored (never mutated) state, `old` the previous one."""

    __slots__ = ("_lines", "gr", "obj", "old", "rt", "rv", "type")

    def __init__(self, rv: int, type_: str, gr: GR, obj: dict[str, Any],
                 old: dict[str, Any] | None, rt: ResourceType | None = None) -> None:
        self.rv = rv
        self.type = type_
        self.gr = gr
        self.obj = obj
        self.old = old
        self.rt = rt
        """The storage type when the change was committed (a CRD's objects are deleted
        while it is still served; their DELETED events outlive the type)."""
        self._lines: dict[str, bytes] | None = None

    def line(self, key: str, view: View, type_: str | None = None) -> bytes:
        """The serialized watch line of the object seen through `view`; cached under `key`
        (one key per view, e.g. the apiVersion) for the event's own type."""
        if type_ is None:
            lines = self._lines
            if lines is None:
                lines = self._lines = {}
            cached = lines.get(key)
            if cached is None:
                cached = lines[key] = encode_line(self.type, view(self.obj))
            return cached
        return encode_line(type_, view(self.obj))


def encode_line(type_: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": type_, "object": obj}) + b"\n"


class Watcher:
    """One watch stream's filter and bounded queue; the HTTP handler drains it."""

    __slots__ = (
        "_waiter",
        "closed",
        "gr",
        "match",
        "name",
        "namespace",
        "overflowed",
        "queue",
        "queue_size",
        "raw",
    )

    def __init__(self, *, gr: GR | None, namespace: str | None = None, name: str | None = None,
                 match: Match | None = None, queue_size: int = 10_000, raw: bool = False) -> None:
        self.gr = gr
        self.namespace = namespace
        self.name = name
        self.match = match
        self.queue_size = queue_size
        self.raw = raw  # subscribers get (type, event) without selector transitions
        self.queue: deque[tuple[str, Event]] = deque()
        self.closed = False
        self.overflowed = False
        self._waiter: asyncio.Future[None] | None = None

    def _selected(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None or self.name is not None:
            meta = obj.get("metadata") or {}
            if self.namespace is not None and meta.get("namespace") != self.namespace:
                return False
            if self.name is not None and meta.get("name") != self.name:
                return False
        return self.match is None or self.match(obj)

    def offer(self, event: Event) -> None:
        if self.closed:
            return
        if self.raw:
            kind: str | None = event.type
        else:
            kind = self.transition(event)
        if kind is None:
            return
        if len(self.queue) >= self.queue_size:
            self.overflowed = True
            self.close()
            return
        self.queue.append((kind, event))
        self.wake()

    def transition(self, event: Event) -> str | None:
        """The event type this watcher sees (selector transitions, W-4), or None."""
        now = self._selected(event.obj)
        if event.type == "MODIFIED":
            before = self._selected(event.old)
            if now and before:
                return "MODIFIED"
            if now:
                return "ADDED"
            return "DELETED" if before else None
        return event.type if now else None

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        self.closed = True
        self.wake()

    async def wait(self) -> None:
        """Return once the queue is non-empty, the watcher is closed, or wake() is called."""
        if self.queue or self.closed:
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None


class WatchHub:
    """History ring + registry of live watchers (the store's single publisher)."""

    def __init__(self, *, history: int = 10_000) -> None:
        self.history: deque[Event] = deque()
        self.capacity = max(1, history)
        self.floor = 0
        self._by_gr: dict[GR, set[Watcher]] = {}
        self._global: set[Watcher] = set()

    def publish(self, event: Event) -> None:
        history = self.history
        if len(history) >= self.capacity:
            self.floor = history.popleft().rv
        history.append(event)
        for watcher in tuple(self._by_gr.get(event.gr, ())):
            watcher.offer(event)
        for watcher in tuple(self._global):
            watcher.offer(event)

    def since(self, rv: int) -> list[Event] | None:
        """Events after `rv` (oldest first), or None when some were compacted away."""
        if rv < self.floor:
            return None
        history = self.history
        if not history or history[-1].rv <= rv:
            return []
        if history[0].rv > rv:
            return list(history)
        # binary search on the (sorted) ring
        lo, hi = 0, len(history)
        while lo < hi:
            mid = (lo + hi) // 2
            if history[mid].rv <= rv:
                lo = mid + 1
            else:
                hi = mid
        return [history[i] for i in range(lo, len(history))]

    def add(self, watcher: Watcher) -> None:
        if watcher.gr is None:
            self._global.add(watcher)
        else:
            self._by_gr.setdefault(watcher.gr, set()).add(watcher)

    def remove(self, watcher: Watcher) -> None:
        if watcher.gr is None:
            self._global.discard(watcher)
        else:
            group = self._by_gr.get(watcher.gr)
            if group is not None:
                group.discard(watcher)
                if not group:
                    del self._by_gr[watcher.gr]

    def cut(self, *, include_subscribers: bool = False) -> int:
        """Close every open watch stream; returns how many were closed."""
        closed = 0
        for group in list(self._by_gr.values()):
            for watcher in list(group):
                watcher.close()
                closed += 1
        self._by_gr.clear()
        if include_subscribers:
            for watcher in list(self._global):
                watcher.close()
            self._global.clear()
        return closed

    def cut_resource(self, gr: GR) -> None:
        """Close the watches of one resource (its CRD was deleted)."""
        for watcher in list(self._by_gr.pop(gr, ())):
            watcher.close()

    def expire(self, current_rv: int) -> None:
        """Compact: a resume from any rv older than `current_rv` now gets 410 Expired."""
        self.history.clear()
        self.floor = current_rv

    @property
    def watcher_count(self) -> int:
        return sum(len(g) for g in self._by_gr.values())
