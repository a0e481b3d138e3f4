"""Watches: which events enqueue which keys (`for_`, `owns`, `watches`) and predicates.

A `Watch` names a kind, how an object of that kind maps to reconcile Requests, and the
predicates that filter events first:

- `for_(kind)`: the object's own key (the controller's primary kind);
- `owns(kind)`: the key of the object's controller owner (the ownerReference with
  `controller: true`) when that owner's group and kind are the controller's primary kind;
  namespace of the owned object (cluster-scoped owners get no namespace);
- `watches(kind, mapper)`: any keys, `mapper(obj) -> Iterable[Request]`.

Each takes `metadata_only=True` to watch PartialObjectMetadata instead of whole objects
(`Watch.kind` is then `kind.metadata()`, an informer of its own, ~10x less memory per object):
for kinds a controller only maps by owner references, labels or names.

Each takes a `Kind` or a typed resource class (anything with a `KIND`, see
`asyncop.api.KindSource`); the class is kept as `Watch.source`, so tools can find the
custom resources an operator watches (to generate and install their CRDs).

On update the mapper runs on both old and new objects (an owner or mapped key may change),
so both get reconciled. `Watch.handler(queue, primary=...)` builds the informer event handler
(`on_add`, `on_update`, `on_delete`). Invariant: handlers never block and never raise into
the informer; they only call `queue.add`.

Priorities (controller-runtime's `WithLowPriorityWhenUnchanged`, applied by its built-in
handlers): given `initial` (a function saying whether an add is part of a replay: the
informer's initial list, or the adds a handler gets for what is already cached when it is
registered), adds during a replay and resync updates (old and new resourceVersion equal)
enqueue with `LOW_PRIORITY`; every other event with priority 0. Without `initial`, every key
gets 0 (plain FIFO). With `track=True` (tracing or the debug endpoint
on) each add carries its trigger, `(event, kind, target, object)` — a tuple, described
lazily by `asyncop.runtime.observe` — and nothing else changes.

Predicates (all must pass): `generation_changed` (updates pass only when
`metadata.generation` changed), `resource_version_changed` (drops resync updates),
`label_selector(sel)` (an update passes if old or new matches, so the controller also sees
objects leaving the selection), `annotation_changed`. Adds and deletes pass the change
predicates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import structlog

from asyncop.api import Kind, KindSource, RawObject, Request, controller_of, kind_of
from asyncop.api.labels import LabelSelector, parse_selector
from asyncop.runtime.workqueue import LOW_PRIORITY

log = structlog.get_logger("asyncop.runtime.handlers")

Mapper = Callable[[RawObject], Iterable[Request]]
Admit = Callable[[Request, RawObject], bool]
"""`admit(request, event_object)`: whether a Request mapped from this event may be enqueued."""


class Enqueuer(Protocol):
    def add(self, item: Request, why: object = None, *, priority: int = 0) -> None: ...


def _always(obj: RawObject) -> bool:
    return True


def _always_update(old: RawObject, new: RawObject) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Predicate:
    """Event filters; each returns True to let the event through (the default)."""

    name: str
    create: Callable[[RawObject], bool] = _always
    update: Callable[[RawObject, RawObject], bool] = _always_update
    delete: Callable[[RawObject], bool] = _always


def _meta(obj: RawObject) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _generation_changed(old: RawObject, new: RawObject) -> bool:
    return _meta(old).get("generation") != _meta(new).get("generation")


def _resource_version_changed(old: RawObject, new: RawObject) -> bool:
    return _meta(old).get("resourceVersion") != _meta(new).get("resourceVersion")


def _annotations_changed(old: RawObject, new: RawObject) -> bool:
    return (_meta(old).get("annotations") or {}) != (_meta(new).get("annotations") or {})


generation_changed = Predicate("generation_changed", _always, _generation_changed, _always)
"""Updates pass only if `metadata.generation` changed (spec edits, not status writes)."""

resource_version_changed = Predicate(
    "resource_version_changed", _always, _resource_version_changed, _always
)
"""Drops periodic-resync updates, whose old and new resourceVersion are equal."""

annotation_changed = Predicate("annotation_changed", _always, _annotations_changed, _always)
"""Updates pass only if `metadata.annotations` changed."""


def label_selector(selector: str | Mapping[str, Any] | LabelSelector) -> Predicate:
    """Only objects whose labels match `selector` (string syntax or LabelSelector dict)."""
    sel = parse_selector(selector)

    def matches(obj: RawObject) -> bool:
        return sel.matches(_meta(obj).get("labels"))

    def update(old: RawObject, new: RawObject) -> bool:
        return matches(new) or matches(old)

    return Predicate(f"label_selector({selector!r})", matches, update, matches)


# -- watch specs ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Watch:
    """One watched kind, how its objects map to Requests, and its predicates."""

    kind: Kind
    target: Literal["self", "owner", "mapped"]
    predicates: tuple[Predicate, ...] = ()
    mapper: Mapper | None = None
    source: KindSource | None = None
    """The resource class the watch was declared with, if any (not a bare Kind)."""

    def handler(self, queue: Enqueuer, *, primary: Kind | None = None,
                admit: Admit | None = None, track: bool = False,
                initial: Callable[[], bool] | None = None) -> WatchHandler:
        """The informer event handler that enqueues this watch's Requests onto `queue` (only
        those `admit(request, obj)` accepts, when given: a sharded controller's own shards);
        `track`: each add says which event caused it; `initial`: whether an add is a replay
        (then its keys, and those of resyncs, get `LOW_PRIORITY`)."""
        if self.target == "self":
            mapper: Mapper = _own_key
        elif self.target == "owner":
            if primary is None:
                raise ValueError(f"owns({self.kind}) needs a for_() watch of the primary kind")
            mapper = _owner_mapper(primary)
        else:
            assert self.mapper is not None
            mapper = self.mapper
        return WatchHandler(
            queue, mapper, self.predicates, kind=self.kind, map_old=self.target != "self",
            admit=admit, target=self.target if track else None, initial=initial,
        )


def _source(kind: Kind | KindSource) -> KindSource | None:
    return None if isinstance(kind, Kind) else kind


def _kind(kind: Kind | KindSource, metadata_only: bool) -> Kind:
    k = kind_of(kind)
    return k.metadata() if metadata_only else k


def for_(kind: Kind | KindSource, *predicates: Predicate, metadata_only: bool = False) -> Watch:
    """Reconcile the object itself: its own namespace/name (`metadata_only`: see `owns`)."""
    return Watch(_kind(kind, metadata_only), "self", predicates, source=_source(kind))


def owns(kind: Kind | KindSource, *predicates: Predicate, metadata_only: bool = False) -> Watch:
    """Reconcile the controller owner (of the primary kind) of objects of `kind`.

    `metadata_only=True` (controller-runtime's `OnlyMetadata`) watches and caches only the
    objects' metadata (PartialObjectMetadata): read them with `cache.get(kind.metadata(),
    ...)`. A kind also watched whole gets a second informer."""
    return Watch(_kind(kind, metadata_only), "owner", predicates, source=_source(kind))


def watches(kind: Kind | KindSource, mapper: Mapper, *predicates: Predicate,
            metadata_only: bool = False) -> Watch:
    """Reconcile whatever `mapper(obj)` returns for objects of `kind` (`metadata_only`: the
    mapper sees only `apiVersion`, `kind` and `metadata`; see `owns`)."""
    return Watch(_kind(kind, metadata_only), "mapped", predicates, mapper,
                 source=_source(kind))


def _own_key(obj: RawObject) -> Iterable[Request]:
    meta = obj["metadata"]
    return (Request(meta["name"], meta.get("namespace") or ""),)


def _group_of(api_version: str) -> str:
    group, sep, _ = api_version.rpartition("/")
    return group if sep else ""


def _owner_mapper(primary: Kind) -> Mapper:
    def owner_key(obj: RawObject) -> Iterable[Request]:
        ref = controller_of(obj)
        if ref is None or ref.get("kind") != primary.kind:
            return ()
        if _group_of(ref.get("apiVersion", "")) != primary.group:
            return ()
        namespace = (_meta(obj).get("namespace") or "") if primary.namespaced else ""
        return (Request(ref["name"], namespace),)

    return owner_key


class WatchHandler:
    """The informer event handler (`asyncop.runtime.listeners.EventHandler`) a Watch builds:
    filter with the predicates, map to Requests, `queue.add` each."""

    __slots__ = ("_admit", "_initial", "_kind", "_map_old", "_mapper", "_predicates", "_queue",
                 "_target")

    def __init__(
        self,
        queue: Enqueuer,
        mapper: Mapper,
        predicates: tuple[Predicate, ...],
        *,
        kind: Kind,
        map_old: bool = True,
        admit: Admit | None = None,
        target: str | None = None,
        initial: Callable[[], bool] | None = None,
    ) -> None:
        self._admit = admit
        self._initial = initial
        self._target = target  # set: adds carry their trigger
        self._queue = queue
        self._mapper = mapper
        self._predicates = predicates
        self._kind = kind
        self._map_old = map_old

    def on_add(self, obj: RawObject) -> None:
        if self._passes(lambda p: p.create(obj)):
            initial = self._initial
            self._enqueue("added", obj,
                          priority=LOW_PRIORITY if initial is not None and initial() else 0)

    def on_update(self, old: RawObject, new: RawObject) -> None:
        if self._passes(lambda p: p.update(old, new)):
            priority = 0
            if self._initial is not None and not _resource_version_changed(old, new):
                priority = LOW_PRIORITY  # a resync: nothing changed
            if self._map_old:
                self._enqueue("updated", new, old, priority=priority)
            else:
                self._enqueue("updated", new, priority=priority)

    def on_delete(self, obj: RawObject) -> None:
        if self._passes(lambda p: p.delete(obj)):
            self._enqueue("deleted", obj)

    def _passes(self, check: Callable[[Predicate], bool]) -> bool:
        try:
            return all(check(p) for p in self._predicates)
        except Exception:
            log.exception("watch predicate failed", kind=str(self._kind))
            return False

    def _enqueue(self, event: str, *objs: RawObject, priority: int = 0) -> None:
        target = self._target
        for obj in objs:
            try:
                requests = list(self._mapper(obj))
            except Exception:
                log.exception("watch mapper failed", kind=str(self._kind))
                continue
            admit = self._admit
            for request in requests:
                if admit is None or admit(request, obj):
                    if target is None:
                        self._queue.add(request, priority=priority)
                    else:
                        self._queue.add(request, (event, self._kind, target, obj),
                                        priority=priority)
