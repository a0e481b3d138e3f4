"""In-process stand-ins for the benches that drive a Controller without an API server.

`FakeCache` is just enough of a Cache for a Controller (one informer whose handlers the
bench calls by hand, an immediate sync, read-your-own-writes that never waits) plus `get`
over a fixed set of objects, so a reconciler can read "cached" objects.
"""

from __future__ import annotations

from asyncop.api import Kind, RawObject
from asyncop.runtime.listeners import EventHandler as Handler


class FakeInformer:
    def __init__(self) -> None:
        self.handlers: list[Handler] = []

    def add_handler(self, handler: Handler) -> None:
        self.handlers.append(handler)


class FakeCache:
    def __init__(self, objs: list[RawObject] | None = None) -> None:
        self.inf = FakeInformer()
        self.objs = {(o["metadata"].get("namespace") or "", o["metadata"]["name"]): o
                     for o in objs or []}

    def informer(self, kind: Kind) -> FakeInformer:
        return self.inf

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None:
        return self.objs.get((namespace or "", name))

    async def wait_for_sync(self) -> None:
        return None

    async def wait_for_resource_version(
        self, kind: Kind, key: str, rv: str | None, *, timeout: float
    ) -> bool:
        return True
