"""How informer events reach handlers: the handler protocols, FuncHandler, the `Handlers`
registry an Informer dispatches through (add, remove, in-order delivery), and the buffered
listener that feeds an async handler from its own task.

Invariants: an async handler gets events in order from a bounded buffer drained by one task
(never a task per event); when the buffer overflows its backlog is dropped and replaced by a
catch-up diff between what the handler was last told and the store, so a slow handler ends up
with the same view as everyone else; a raising handler is logged and never stops the feed.
`Informer.add_handler` returns a `Registration` whose `remove()` unregisters the handler; a
removed handler gets no further event (an async one's task is cancelled).
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from asyncop.api import RawObject, object_key
from asyncop.runtime.store import Store


class EventHandler(Protocol):
    def on_add(self, obj: RawObject) -> None: ...

    def on_update(self, old: RawObject, new: RawObject) -> None: ...

    def on_delete(self, obj: RawObject) -> None: ...


class AsyncEventHandler(Protocol):
    """A handler whose methods are coroutines: fed from its own bounded buffer and task."""

    async def on_add(self, obj: RawObject) -> None: ...

    async def on_update(self, old: RawObject, new: RawObject) -> None: ...

    async def on_delete(self, obj: RawObject) -> None: ...


@dataclass(frozen=True, slots=True)
class FuncHandler:
    """An EventHandler made of optional functions."""

    add: Callable[[RawObject], None] | None = None
    update: Callable[[RawObject, RawObject], None] | None = None
    delete: Callable[[RawObject], None] | None = None

    def on_add(self, obj: RawObject) -> None:
        if self.add is not None:
            self.add(obj)

    def on_update(self, old: RawObject, new: RawObject) -> None:
        if self.update is not None:
            self.update(old, new)

    def on_delete(self, obj: RawObject) -> None:
        if self.delete is not None:
            self.delete(obj)



@dataclass(frozen=True, slots=True, eq=False)
class Registration:
    """What `Informer.add_handler` returns: `remove()` unregisters the handler (idempotent)."""

    handler: object
    _remove: Callable[[object], object] = field(repr=False)

    def remove(self) -> None:
        self._remove(self.handler)


Op = Literal["add", "update", "delete"]


def _rv(obj: RawObject) -> str | None:
    return obj.get("metadata", {}).get("resourceVersion")


class AsyncListener:
    """Feeds one async handler, in order, from a bounded buffer drained by its own task.

    `told` maps each key to the object last delivered. When the buffer overflows, the backlog
    is dropped and, once the handler is free, replaced by the diff between `told` and the
    store (adds, updates, deletes): level-triggered catch-up, no event is needed twice.
    """

    def __init__(self, handler: AsyncEventHandler, store: Store, *, limit: int,
                 log: Any) -> None:
        self.handler = handler
        self.store = store
        self.limit = max(1, limit)
        self.pending: deque[tuple[Op, RawObject | None, RawObject]] = deque()
        self.told: dict[str, RawObject] = {}
        self.overflow = False
        self.wakeup = asyncio.Event()
        self.log = log

    def push(self, op: Op, old: RawObject | None, new: RawObject) -> None:
        if not self.overflow:
            if len(self.pending) < self.limit:
                self.pending.append((op, old, new))
            else:
                self.pending.clear()
                self.overflow = True
                self.log.warning("slow event handler fell behind; will catch up from the store",
                                 handler=type(self.handler).__qualname__, buffer=self.limit)
        self.wakeup.set()

    async def run(self) -> None:
        while True:
            if self.overflow:
                self.overflow = False
                for op, old, new in self._catch_up():
                    await self._deliver(op, old, new)
            elif self.pending:
                op, old, new = self.pending.popleft()
                await self._deliver(op, old, new)
            else:
                self.wakeup.clear()
                await self.wakeup.wait()

    def _catch_up(self) -> list[tuple[Op, RawObject | None, RawObject]]:
        ops: list[tuple[Op, RawObject | None, RawObject]] = []
        for key, old in self.told.items():
            if key not in self.store:
                ops.append(("delete", None, old))
        for obj in self.store.list():
            prev = self.told.get(object_key(obj))
            if prev is None:
                ops.append(("add", None, obj))
            elif _rv(prev) != _rv(obj):
                ops.append(("update", prev, obj))
        return ops

    async def _deliver(self, op: Op, old: RawObject | None, new: RawObject) -> None:
        key = object_key(new)
        try:
            if op == "add":
                await self.handler.on_add(new)
            elif op == "update":
                await self.handler.on_update(old if old is not None else new, new)
            else:
                await self.handler.on_delete(new)
        except Exception as exc:
            self.log.error("event handler failed", handler=type(self.handler).__qualname__,
                           error=repr(exc))
        if op == "delete":
            self.told.pop(key, None)
        else:
            self.told[key] = new


class Handlers:
    """The handlers of one informer: registration, removal, and in-order dispatch.

    The handler lists are copy-on-write, so a handler may add or remove handlers (itself
    included) while an event is being dispatched.
    """

    def __init__(self, store: Store, *, log: Any) -> None:
        self.store = store
        self.log = log
        self._sync: list[EventHandler] = []
        self._async: list[AsyncListener] = []
        self._tasks: dict[AsyncListener, asyncio.Task[None]] = {}
        self._failing: set[str] = set()
        self._running = False

    def __len__(self) -> int:
        return len(self._sync) + len(self._async)

    def add(self, handler: EventHandler | AsyncEventHandler, *, buffer: int) -> Registration:
        registration = Registration(handler, self.remove)
        if inspect.iscoroutinefunction(handler.on_add):
            listener = AsyncListener(cast(AsyncEventHandler, handler), self.store,
                                     limit=buffer, log=self.log)
            self._async = [*self._async, listener]
            for obj in self.store.list():
                listener.push("add", None, obj)
            if self._running:
                self._start(listener)
            return registration
        sync_handler = cast(EventHandler, handler)
        self._sync = [*self._sync, sync_handler]
        for obj in self.store.list():
            self._call(sync_handler.on_add, obj)
        return registration

    def remove(self, handler: object) -> bool:
        if any(h is handler for h in self._sync):
            self._sync = [h for h in self._sync if h is not handler]
            return True
        for listener in self._async:
            if listener.handler is handler:
                self._async = [x for x in self._async if x is not listener]
                task = self._tasks.pop(listener, None)
                if task is not None:
                    task.cancel()
                return True
        return False

    def start(self) -> None:
        """Start a task per async handler (and for those added later, until `stop`)."""
        self._running = True
        for listener in self._async:
            self._start(listener)

    def stop(self) -> list[asyncio.Task[None]]:
        """Stop starting tasks; returns the running ones for the caller to cancel and await."""
        self._running = False
        return list(self._tasks.values())

    def _start(self, listener: AsyncListener) -> None:
        task = asyncio.create_task(listener.run())
        self._tasks[listener] = task

        def finished(_: object) -> None:
            if self._tasks.get(listener) is task:
                del self._tasks[listener]

        task.add_done_callback(finished)

    def _call(self, fn: Callable[..., None], *args: RawObject) -> None:
        try:
            fn(*args)
        except Exception as exc:
            # the first failure of a handler is logged with its traceback, repeats without
            name = getattr(fn, "__qualname__", type(fn).__qualname__)
            first = name not in self._failing
            self._failing.add(name)
            self.log.error("event handler failed", handler=name, error=repr(exc),
                           exc_info=exc if first else None)

    def added(self, obj: RawObject) -> None:
        for h in self._sync:
            self._call(h.on_add, obj)
        for listener in self._async:
            listener.push("add", None, obj)

    def updated(self, old: RawObject, new: RawObject) -> None:
        for h in self._sync:
            self._call(h.on_update, old, new)
        for listener in self._async:
            listener.push("update", old, new)

    def deleted(self, obj: RawObject) -> None:
        for h in self._sync:
            self._call(h.on_delete, obj)
        for listener in self._async:
            listener.push("delete", None, obj)
