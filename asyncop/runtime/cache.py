"""Cache: one shared Informer per Kind for every controller of a Manager, plus reads.

`informer(kind)` creates the informer on first use (and starts it at once if the cache is
already running); reads (`get`, `list`, `owned_by`, `by_index`) go to that informer's Store
and return the cached dicts, which callers must not mutate (copy with `asyncop.api.deep_copy`).
`owned_by(kind, owner)` is the owner index: the objects of `kind` whose ownerReferences name
`owner`'s uid (`by_index(kind, "owner_uid", uid)` is the same read).
`wait_for_resource_version` gives read-your-own-writes: after a write returned
resourceVersion N, it waits (bounded, on the Clock) until the cache holds N or newer, or
until the informer's stream has passed N while the key is absent (deleted after the write).

A metadata-only Kind (`kind.metadata()`, what `owns(..., metadata_only=True)` watches) is a
Kind of its own here: its informer lists and watches PartialObjectMetadata and its objects
are `{apiVersion, kind, metadata}`; `get(kind.metadata(), name, ns)` reads them. A kind watched
both whole and as metadata has two informers, as controller-runtime keeps two caches (its
`OnlyMetadata` objects live apart from the typed ones): watch a kind one way per operator
when memory matters. Read-your-own-writes waits on whichever of the two exists (the whole
one when both do): a write to a Deployment made through `DEPLOYMENT` is seen by a
metadata-only informer of Deployments too.

Invariants: at most one Informer per Kind (a metadata-only Kind counts as another Kind);
`stop()` cancels every informer task and waits for it to finish; waiters are woken by the
informer's stream progress (no polling); a kind (or namespace) no informer watches raises
`NotWatched` instead of waiting for nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import structlog

from asyncop.api import Kind, RawObject
from asyncop.client import Client
from asyncop.clock import Clock
from asyncop.runtime.informer import Informer
from asyncop.runtime.ownwrites import NotWatched
from asyncop.runtime.store import NAMESPACE_INDEX, OWNER_UID_INDEX

log = structlog.get_logger("asyncop.cache")
_Objects = list[RawObject]


class Cache:
    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        namespaces: Iterable[str] | None = None,
        informer_options: dict[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.namespaces: frozenset[str] | None = (
            frozenset(namespaces) if namespaces is not None else None
        )
        self._options = dict(informer_options or {})
        self._informers: dict[Kind, Informer] = {}
        self._tasks: dict[Kind, asyncio.Task[None]] = {}
        self._started = False

    # -- informers ----------------------------------------------------------------------------

    def informer(self, kind: Kind) -> Informer:
        """The shared Informer for `kind` (created on first use; started if the cache runs)."""
        inf = self._informers.get(kind)
        if inf is None:
            ns: str | set[str] | None = None
            if kind.namespaced and self.namespaces is not None:
                ns = set(self.namespaces)
            inf = Informer(self.client, kind, clock=self.clock, namespace=ns, **self._options)
            self._informers[kind] = inf
            if self._started:
                self._start(kind, inf)
        return inf

    def informers(self) -> dict[Kind, Informer]:
        return dict(self._informers)

    def _start(self, kind: Kind, inf: Informer) -> None:
        self._tasks[kind] = asyncio.create_task(inf.run(), name=f"informer {kind}")

    async def start(self) -> None:
        """Start every informer created so far (later ones start on creation)."""
        if self._started:
            return
        self._started = True
        for kind, inf in self._informers.items():
            self._start(kind, inf)

    async def stop(self) -> None:
        """Cancel every informer and wait for them to finish."""
        self._started = False
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for result in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(result, Exception):
                log.error("informer failed", error=repr(result))

    @property
    def has_synced(self) -> bool:
        return all(inf.has_synced for inf in self._informers.values())

    async def wait_for_sync(self) -> None:
        """Wait until every informer created so far has done its initial list."""
        await asyncio.gather(*(inf.wait_for_sync() for inf in self._informers.values()))

    # -- reads (cached dicts: never mutate) ---------------------------------------------------

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None:
        key = f"{namespace}/{name}" if kind.namespaced and namespace else name
        return self.informer(kind).store.get(key)

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
    ) -> list[RawObject]:
        store = self.informer(kind).store
        objs = store.by_index(NAMESPACE_INDEX, namespace) if namespace else store.list()
        if not labels:
            return objs
        selected: _Objects = []
        for obj in objs:
            have = obj.get("metadata", {}).get("labels") or {}
            if all(have.get(k) == v for k, v in labels.items()):
                selected.append(obj)
        return selected

    def owned_by(self, kind: Kind, owner: RawObject | str, *,
                 controller: bool = False) -> _Objects:
        """The cached objects of `kind` that `owner` (an object, or its uid) owns: an entry of
        their `metadata.ownerReferences` has its uid; with `controller=True`, only those it
        controls (that entry has `controller: true`). A read of the `owner_uid` index."""
        if isinstance(owner, str):
            uid = owner
        else:
            uid = (owner.get("metadata") or {}).get("uid") or ""
            if not uid:
                raise ValueError("owned_by: the owner has no metadata.uid (it was never stored)")
        owned = self.informer(kind).store.by_index(OWNER_UID_INDEX, uid)
        if not controller:
            return owned
        return [obj for obj in owned
                if any(ref.get("uid") == uid and ref.get("controller") is True
                       for ref in obj["metadata"].get("ownerReferences") or ())]

    def by_index(self, kind: Kind, index: str, value: str) -> _Objects:
        """The cached objects of `kind` filed under `value` in the store's index `index`
        (`namespace`, `owner_uid`, or one added with `Store.add_indexer`)."""
        return self.informer(kind).store.by_index(index, value)

    def object_count(self, kind: Kind) -> int:
        inf = self._informers.get(kind)
        return len(inf.store) if inf is not None else 0

    async def wait_for_resource_version(
        self, kind: Kind, key: str, rv: str | None, *, timeout: float
    ) -> bool:
        """Wait until the cache reflects resourceVersion `rv` of `key` (rv=None: until absent).

        Caught up when the cached object has `rv` or newer, or when the key is absent and the
        informer has seen its stream pass `rv` (the object was deleted after that write).
        Returns True when caught up, False when `timeout` (on the Clock) passed first; raises
        `NotWatched` when no informer watches `kind` (or the key's namespace): a read that
        never went through this cache has nothing to catch up with.
        """
        inf = self._informers.get(kind.full()) or self._informers.get(kind.metadata())
        if inf is None:
            raise NotWatched(f"no informer watches {kind}")
        return await inf.wait_for_resource_version(key, rv, timeout=timeout)
