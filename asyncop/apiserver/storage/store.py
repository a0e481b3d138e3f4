"""Store: the MVCC object store behind the embedded API server, and its in-process API.

Objects live as plain dicts keyed by storage identity (group, plural), then namespace ("" for
cluster-scoped objects), then name. A stored dict is never mutated after it is stored: every
write builds a new dict, bumps the one global resourceVersion, stores it and publishes one
watch Event. That makes snapshots (pagination, list at an exact rv) and shared serialized
watch lines cheap and safe, and lets stored objects share their equal parts: at commit the
`Compactor` (compact.py) puts one instance of each repeated string, dict or list in place
of the copies (an equal value, so no reader can tell). Readers
outside the server (simulators, tests) get copies. Invariants: resourceVersion strictly
increases across all resources; every write path (HTTP or in-process) goes through
`writer.Writer`, so validation, admission, generation, finalizers and events are identical
— except pods/binding (`bind`), which kube too writes below the pod's update rules.
"""

from __future__ import annotations

import random
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from typing import Any

import structlog

from asyncop import kubespec
from asyncop.api.labels import LabelSelector, parse_selector
from asyncop.apiserver.builtin import binding as pod_binding
from asyncop.apiserver.core import errors
from asyncop.apiserver.core.registry import Registry
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.storage.compact import Compactor
from asyncop.apiserver.storage.objects import as_version, copy_obj
from asyncop.apiserver.storage.watch import GR, Event, Watcher, WatchHub
from asyncop.apiserver.storage.writer import Writer
from asyncop.clock import Clock, format_time

log = structlog.get_logger("asyncop.apiserver.storage.store")

Admission = Callable[[str, dict[str, Any], "dict[str, Any] | None"], None]
ObjectList = list[dict[str, Any]]


class ScopeMismatch(LookupError):
    """A continue token used on a list of another resource, namespace or selection."""


class Store:
    """All objects, the resourceVersion counter, the watch hub and the served types."""

    def __init__(self, *, clock: Clock, history: int = 10_000, seed: int | None = None,
                 watch_queue_size: int = 10_000,
                 features: frozenset[str] = frozenset({"ShardedListAndWatch"}),
                 minor: int = kubespec.DEFAULT_MINOR) -> None:
        self.clock = clock
        self.features = features
        self.minor = minor
        """The Kubernetes minor version served: built-in kinds decode with its schemas."""
        """Enabled feature gates (kube-apiserver's names), e.g. ShardedListAndWatch."""
        self.registry = Registry()
        self.hub = WatchHub(history=history)
        self.rng = random.Random(seed)
        self.watch_queue_size = watch_queue_size
        self._rv = 0
        self._now_second = -1
        self._now_text = ""
        # gr -> namespace -> name -> object (names as the keys: no tuple per object)
        self._objects: dict[GR, dict[str, dict[str, dict[str, Any]]]] = {}
        self.compactor = Compactor()
        self._admission: dict[GR, list[Admission]] = {}
        self._snapshots: OrderedDict[str, tuple[Hashable, list[dict[str, Any]]]] = \
            OrderedDict()
        self.writer = Writer(self)
        self.writer.bootstrap()

    # --- primitives (used by writer.py) ----------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    def now(self) -> str:
        """The clock's time as an RFC 3339 timestamp (formatted once per second)."""
        moment = self.clock.now()
        second = int(moment.timestamp())
        if second != self._now_second:
            self._now_second = second
            self._now_text = format_time(moment)
        return self._now_text

    def raw_get(self, gr: GR, namespace: str, name: str) -> dict[str, Any] | None:
        bucket = self._objects.get(gr)
        names = bucket.get(namespace) if bucket else None
        return names.get(name) if names else None

    def raw_items(self, gr: GR, namespace: str | None = None) -> list[dict[str, Any]]:
        """Stored objects of one resource, sorted by (namespace, name)."""
        bucket = self._objects.get(gr)
        if not bucket:
            return []
        if namespace is not None:
            names = bucket.get(namespace)
            return [names[n] for n in sorted(names)] if names else []
        return [names[n] for ns in sorted(bucket) for names in (bucket[ns],)
                for n in sorted(names)]

    def count(self, gr: GR, namespace: str | None = None) -> int:
        bucket = self._objects.get(gr) or {}
        if namespace is None:
            return sum(len(names) for names in bucket.values())
        return len(bucket.get(namespace) or ())

    def commit(self, type_: str, gr: GR, obj: dict[str, Any],
               old: dict[str, Any] | None) -> dict[str, Any]:
        """Stamp the next resourceVersion on `obj`, store (or remove) it, publish the event."""
        self._rv += 1
        rv = self._rv
        obj["metadata"]["resourceVersion"] = str(rv)
        meta = obj["metadata"]
        namespace = meta.get("namespace") or ""
        bucket = self._objects.setdefault(gr, {})
        if type_ == "DELETED":
            names = bucket.get(namespace)
            if names is not None:
                names.pop(meta["name"], None)
                if not names:
                    del bucket[namespace]
        else:
            self.compactor.share(gr, obj, old)
            names = bucket.get(namespace)
            if names is None:
                names = bucket[namespace] = {}
            names[meta["name"]] = obj
        self.hub.publish(Event(rv, type_, gr, obj, old, self.registry.storage_type(gr)))
        return obj

    def admission(self, gr: GR) -> list[Admission]:
        return self._admission.get(gr, [])

    def drop_objects(self, gr: GR) -> None:
        self._objects.pop(gr, None)

    # --- pagination snapshots ----------------------------------------------------------------

    def save_snapshot(self, items: list[dict[str, Any]], *, scope: Hashable) -> str:
        """Keep a list result for its continue tokens (the 64 newest are kept). `scope` is
        what the list was of (resource, namespace, selectors): a snapshot is handed out again
        only to a list of the same scope, under an id nobody can guess, so a token can never
        read another resource, namespace or selection than the request names (RBAC
        authorises the request, not the token)."""
        token = secrets.token_urlsafe(18)
        self._snapshots[token] = (scope, items)
        while len(self._snapshots) > 64:
            self._snapshots.popitem(last=False)
        return token

    def snapshot(self, token: str, *, scope: Hashable) -> list[dict[str, Any]] | None:
        """The items saved under `token`; None when expired. `ScopeMismatch` when the token
        was issued for a list of another scope."""
        saved = self._snapshots.get(token)
        if saved is None:
            return None
        if saved[0] != scope:
            raise ScopeMismatch(token)
        return saved[1]

    def expire_history(self) -> None:
        self.hub.expire(self._rv)
        self._snapshots.clear()

    def state_at(self, gr: GR, rv: int) -> list[dict[str, Any]] | None:
        """The objects of `gr` as they were at resourceVersion `rv` (None if compacted)."""
        events = self.hub.since(rv)
        if events is None:
            return None
        state = {(o["metadata"].get("namespace") or "", o["metadata"]["name"]): o
                 for o in self.raw_items(gr)}
        for event in reversed(events):
            if event.gr != gr:
                continue
            meta = event.obj["metadata"]
            key = (meta.get("namespace") or "", meta["name"])
            if event.old is None:
                state.pop(key, None)
            else:
                state[key] = event.old
        return [state[k] for k in sorted(state)]

    # --- in-process API (simulators, tests) --------------------------------------------------

    def resolve(self, group: str, version: str, plural: str) -> ResourceType:
        rt = self.registry.resolve(group, version, plural)
        if rt is None:
            raise errors.path_not_found()
        return rt

    def type_for_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self.registry.type_for_kind(api_version, kind)

    def add_admission(self, gr: GR, fn: Admission) -> None:
        """`fn(op, obj, old)` mutates `obj` on CREATE/UPDATE or raises an ApiError."""
        self._admission.setdefault(gr, []).append(fn)

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> dict[str, Any] | None:
        obj = self.raw_get(rt.gr, (namespace or "") if rt.namespaced else "", name)
        return copy_obj(as_version(obj, rt)) if obj is not None else None

    def list(self, rt: ResourceType, namespace: str | None = None, *,
             label_selector: str | dict[str, str] | LabelSelector | None = None,
             ) -> ObjectList:
        if isinstance(label_selector, dict):
            label_selector = ",".join(f"{k}={v}" for k, v in sorted(label_selector.items()))
        selector = (label_selector if isinstance(label_selector, LabelSelector)
                    else parse_selector(label_selector))
        items = self.raw_items(rt.gr, namespace if rt.namespaced else None)
        return [copy_obj(as_version(o, rt)) for o in items if selector.matches_object(o)]

    async def create(self, rt: ResourceType, obj: dict[str, Any], *,
                     namespace: str | None = None) -> dict[str, Any]:
        ns = namespace or (obj.get("metadata") or {}).get("namespace")
        return copy_obj(self.writer.create(rt, copy_obj(obj), namespace=ns))

    async def update(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        return copy_obj(self.writer.update(rt, copy_obj(obj), namespace=meta.get("namespace"),
                                           name=meta.get("name", "")))

    async def update_status(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        return copy_obj(self.writer.update(rt, copy_obj(obj), namespace=meta.get("namespace"),
                                           name=meta.get("name", ""), subresource="status"))

    async def delete(self, rt: ResourceType, namespace: str | None, name: str, *,
                     propagation_policy: str | None = None,
                     preconditions: dict[str, Any] | None = None,
                     grace_period_seconds: int | None = 0) -> dict[str, Any] | None:
        """Delete; returns the object if it is still present (finalizers, or a pod's graceful
        termination when `grace_period_seconds` is None or > 0), else None. In-process callers
        (controllers, the kubelet stand-in) delete at once by default."""
        result = self.writer.delete(rt, namespace, name, propagation_policy=propagation_policy,
                                    preconditions=preconditions,
                                    grace_period_seconds=grace_period_seconds)
        return copy_obj(result.obj) if not result.removed else None

    async def bind(self, rt: ResourceType, namespace: str, name: str, binding: Any, *,
                   dry_run: bool = False) -> None:
        """POST pods/NAME/binding (builtin/binding.py): nodeName set in one commit."""
        old = self.raw_get(rt.gr, namespace, name)
        new = pod_binding.bound(rt, old, binding, name=name, now=self.now())
        if not dry_run:
            self.commit("MODIFIED", rt.gr, new, old)

    async def finalize_namespace(self, name: str,
                                 finalizers: Sequence[str]) -> dict[str, Any] | None:
        """PUT namespaces/NAME/finalize: set spec.finalizers (empty → the namespace goes)."""
        result = self.writer.finalize_namespace(name, list(finalizers))
        return copy_obj(result) if result is not None else None

    async def subscribe(self, *, queue_size: int = 100_000,
                        ) -> AsyncIterator[tuple[str, ResourceType, dict[str, Any]]]:
        """Every committed event, in order: (type, storage ResourceType, copy of the object).

        Ends (after logging) if the subscriber falls `queue_size` events behind.
        """
        watcher = Watcher(gr=None, queue_size=queue_size, raw=True)
        self.hub.add(watcher)
        try:
            while True:
                await watcher.wait()
                while watcher.queue:
                    type_, event = watcher.queue.popleft()
                    rt = event.rt or self.registry.storage_type(event.gr)
                    if rt is None:
                        continue
                    yield type_, rt, copy_obj(event.obj)
                if watcher.closed:
                    if watcher.overflowed:
                        log.warning("subscriber fell behind", queue_size=queue_size)
                    return
        finally:
            self.hub.remove(watcher)
