"""How informer events reach handlers: the handler protocols, FuncHandler, and the buffered
listener that feeds an async handler from its own task.

Invariants: an async handler gets events in order from a bounded buffer drained by one task
(never a task per event); when the buffer overflows its backlog is dropped and replaced by a
catch-up diff between what the handler was last told and the store, so a slow handler ends up
with the same view as everyone else; a raising handler is logged and never stops the feed.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

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
