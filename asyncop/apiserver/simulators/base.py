"""The machinery every simulator shares: the store it drives, the event pump, the worker loop.

A simulator is level-triggered. `observe()` (synchronous and cheap) turns a store event into
dirty keys; `sync(key)` reads the *current* object from the store and writes only what is
missing, so replaying an event or a full `resync()` is always harmless. One pump task consumes
`store.subscribe()` and feeds every simulator; one worker task per simulator wakes on dirty
keys (from events, clock timers or retries) and drains them one at a time.

Invariants: no task per event (a dict of dirty keys, bounded by the number of objects, plus
clock timers); a Conflict re-reads and retries, a NotFound drops the key, any other error is
logged and retried on the clock after `retry_delay`, doubling per failure up to 30 s;
CancelledError always propagates; nothing writes when the stored state already matches.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import structlog

from asyncop.api import ApiError, Conflict, NotFound
from asyncop.apiserver.core.resources import ResourceType
from asyncop.clock import Clock, Timer

Obj = dict[str, Any]
Admission = Callable[[str, Obj, Obj | None], None]

log = structlog.get_logger("asyncop.apiserver.simulators")

K = TypeVar("K", bound=Hashable)

#: Consecutive Conflicts on one key retried at once before backing off on the clock.
_MAX_IMMEDIATE_CONFLICTS = 5
#: Longest back-off before retrying a key that keeps failing.
_MAX_BACKOFF = 30.0


class SimRegistry(Protocol):
    def all_types(self) -> list[ResourceType]: ...

    def storage_type(self, gr: tuple[str, str]) -> ResourceType | None: ...


class SimStore(Protocol):
    """The in-process store API of the embedded server that simulators use."""

    @property
    def registry(self) -> SimRegistry: ...

    @property
    def resource_version(self) -> int:
        """The newest committed resourceVersion."""
        ...

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> Obj | None: ...

    def list(self, rt: ResourceType, namespace: str | None = None, *,
             label_selector: dict[str, str] | None = None) -> builtins.list[Obj]: ...

    async def create(self, rt: ResourceType, obj: Obj, *, namespace: str | None = None) -> Obj: ...

    async def update(self, rt: ResourceType, obj: Obj) -> Obj: ...

    async def update_status(self, rt: ResourceType, obj: Obj) -> Obj: ...

    async def bind(self, rt: ResourceType, namespace: str, name: str, binding: Any) -> None:
        """POST pods/NAME/binding."""
        ...

    async def delete(self, rt: ResourceType, namespace: str | None, name: str, *,
                     propagation_policy: str | None = None) -> Obj | None: ...

    def resolve(self, group: str, version: str, plural: str) -> ResourceType: ...

    def type_for_kind(self, api_version: str, kind: str) -> ResourceType | None: ...

    def add_admission(self, gr: tuple[str, str], fn: Admission) -> None: ...

    def subscribe(self) -> AsyncIterator[tuple[str, ResourceType, Obj]]: ...

    async def finalize_namespace(self, name: str, finalizers: builtins.list[str]) -> Obj | None: ...


def storage_types(store: SimStore) -> list[ResourceType]:
    """One ResourceType per stored resource (every served version shares one storage)."""
    seen: dict[tuple[str, str], ResourceType] = {}
    for rt in store.registry.all_types():
        if rt.gr not in seen:
            seen[rt.gr] = store.registry.storage_type(rt.gr) or rt
    return list(seen.values())


def ns_of(obj: Obj) -> str:
    return str(obj.get("metadata", {}).get("namespace") or "")


def name_of(obj: Obj) -> str:
    return str(obj.get("metadata", {}).get("name") or "")


def uid_of(obj: Obj) -> str:
    return str(obj.get("metadata", {}).get("uid") or "")


def deleting(obj: Obj) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def rv_of(obj: Obj) -> int:
    try:
        return int(obj.get("metadata", {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def as_int(value: Any, default: int = 0) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else default


def controller_ref_name(obj: Obj, kind: str) -> str | None:
    """Name of the controlling owner if it is of `kind`."""
    for ref in obj.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == kind:
            return str(ref.get("name"))
    return None


def owner_ref(owner: Obj, api_version: str, kind: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name_of(owner),
            "uid": uid_of(owner), "controller": True, "blockOwnerDeletion": True}


def controller_uid(obj: Obj) -> str | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None


class Simulator(Generic[K]):
    """Base of a simulator: a dirty-key set drained by one worker task (`run`)."""

    name = "simulator"
    #: (group, plural) of the resources `observe` cares about; None: every resource.
    watched: frozenset[tuple[str, str]] | None = None

    def __init__(self, store: SimStore, clock: Clock, *, retry_delay: float,
                 resync_period: float | None) -> None:
        self.store = store
        self.clock = clock
        self._retry_delay = retry_delay
        self._resync_period = resync_period
        self._dirty: dict[K, None] = {}
        self._conflicts: dict[K, int] = {}
        self._failures: dict[K, int] = {}
        self._wake = asyncio.Event()
        self._wake.set()
        self._resync_wanted = True
        self._resync_timer: Timer | None = None
        self.log = log.bind(simulator=self.name)

    # to override --------------------------------------------------------------------------
    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        """Turn one store event into dirty keys (must not block or raise)."""

    async def resync(self) -> None:
        """Mark every object this simulator cares about dirty (level-triggered catch-up)."""

    async def sync(self, key: K) -> None:
        """Bring the object behind `key` to its wanted state (re-reads the store)."""

    # queueing -----------------------------------------------------------------------------
    def add(self, key: K) -> None:
        self._dirty[key] = None
        self._wake.set()

    def add_after(self, key: K, delay: float) -> Timer:
        return self.clock.call_later(delay, lambda: self.add(key))

    def request_resync(self) -> None:
        self._resync_wanted = True
        self._wake.set()

    # the worker ---------------------------------------------------------------------------
    async def run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                if self._resync_wanted:
                    await self._do_resync()
                while self._dirty:
                    key = next(iter(self._dirty))
                    del self._dirty[key]
                    await self._sync_one(key)
                    await asyncio.sleep(0)  # let the pump and the server breathe
        finally:
            if self._resync_timer is not None:
                self._resync_timer.cancel()

    async def _do_resync(self) -> None:
        self._resync_wanted = False
        if self._resync_timer is not None:
            self._resync_timer.cancel()
        self._resync_timer = None
        if self._resync_period is not None:
            self._resync_timer = self.clock.call_later(self._resync_period, self.request_resync)
        try:
            await self.resync()
        except Exception:
            self.log.exception("simulator resync failed")
            if self._resync_timer is not None:
                self._resync_timer.cancel()
            self._resync_timer = self.clock.call_later(self._retry_delay, self.request_resync)

    async def _sync_one(self, key: K) -> None:
        try:
            await self.sync(key)
        except NotFound:
            self._settled(key)
        except Conflict:
            n = self._conflicts.get(key, 0) + 1
            self._conflicts[key] = n
            if n <= _MAX_IMMEDIATE_CONFLICTS:
                self.add(key)
            else:
                self._conflicts.pop(key, None)
                self._retry_later(key)
        except ApiError as err:  # refused (e.g. 403 in a terminating namespace): retry later
            self._conflicts.pop(key, None)
            self.log.warning("simulator write refused", key=str(key), code=err.code,
                             reason=err.reason, message=err.message)
            self._retry_later(key)
        except Exception:
            self._conflicts.pop(key, None)
            self.log.exception("simulator sync failed", key=str(key))
            self._retry_later(key)
        else:
            self._settled(key)

    def _settled(self, key: K) -> None:
        self._conflicts.pop(key, None)
        self._failures.pop(key, None)

    def _retry_later(self, key: K) -> None:
        """Exponential back-off per key: retry_delay, doubling, at most _MAX_BACKOFF."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        self.add_after(key, min(self._retry_delay * 2 ** min(n, 16), _MAX_BACKOFF))


async def pump(store: SimStore, clock: Clock, sims: Sequence[Simulator[Any]], *,
               retry_delay: float) -> None:
    """Feed every store event to the simulators watching its resource; resync all after a
    lost subscription."""
    routes: dict[tuple[str, str], list[Simulator[Any]]] = {}
    while True:
        seen = 0
        try:
            async for event, rt, obj in store.subscribe():
                seen += 1
                gr = rt.gr
                targets = routes.get(gr)
                if targets is None:
                    targets = routes[gr] = [s for s in sims
                                            if s.watched is None or gr in s.watched]
                for sim in targets:
                    try:
                        sim.observe(event, rt, obj)
                    except Exception:
                        sim.log.exception("simulator observe failed", event=event)
        except Exception:
            log.exception("simulator subscription failed")
            seen = 0
        if not seen:  # ended at once: do not spin
            await clock.sleep(retry_delay)
        for sim in sims:
            sim.request_resync()
