"""Observe: a controller's reconciles seen from outside — trace spans and per-key history.

A Controller gets an `Observer` only when tracing or the debug endpoint is on; otherwise it
holds None and calls nothing here. For each reconcile the worker calls `start` (right after
taking the key and its trigger from the queue), `catching_up` around the read-your-own-writes
wait, `reconciling`, and `finish`:

- tracing (`tracer`): `start` opens the `reconcile` span — always a new trace — and makes it
  current, so the Client's request spans and the `wait for own writes` span are its
  children; `finish` sets the outcome (status ERROR with the error on a failure) and ends it.
  Attributes: `asyncop.controller`, `asyncop.object.kind`, `k8s.namespace.name`,
  `asyncop.object.name`, `asyncop.object.key`, `asyncop.reconcile_id`, `asyncop.trigger`,
  `asyncop.queue.wait_seconds`, `asyncop.worker`, then `asyncop.outcome`,
  `asyncop.requeue_after_seconds`, `asyncop.requeues`.
- history (`history > 0`, the debug endpoint): `finish` files the `ReconcileRecord` in the
  key's ring (the last `history` reconciles, oldest first); the keys with a ring are an LRU
  of at most `max_keys`. `active` maps each key being reconciled now to its record (phase,
  worker, since), which is what the endpoint shows as "being processed by worker W" or
  "waiting for its own writes".

A record keeps its trigger in a compact form (`compact_trigger`: the watch event's kind,
namespace and name, never the object, so a record keeps no object alive) and its times on
the monotonic clock; text and wall-clock times are made only when shown
(`describe_trigger`, `to_dict(clock)`). Invariants: memory is bounded (max_keys x history
records, plus one active record per worker); `finish` runs exactly once per `start`, in the
worker's task (the span context attached in `start` is detached there).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import structlog

from asyncop.api import Kind, Request
from asyncop.clock import Clock
from asyncop.runtime.outcome import Outcome, error_text
from asyncop.runtime.ownwrites import Recording, Writes

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

DEFAULT_HISTORY = 8
"""Reconciles kept per key for the debug endpoint."""
DEFAULT_MAX_KEYS = 1024
"""Keys whose history is kept (least recently reconciled dropped first). A record with one
write and one Event takes ~0.8 KB (tracemalloc), so the defaults bound the history to
~7 MiB."""

@dataclass(frozen=True, slots=True)
class Observing:
    """What a Manager asks its controllers to observe (`Controller.run(observing=...)`)."""

    tracer: Tracer | None = None
    history: int = 0
    """Reconciles kept per key (0: no history, no debug endpoint)."""
    max_keys: int = DEFAULT_MAX_KEYS

    @property
    def on(self) -> bool:
        return self.tracer is not None or self.history > 0


_VIA = {"self": "", "owner": " (owned)", "mapped": " (watched)"}


def compact_trigger(why: object) -> object:
    """A watch event's trigger without its object: (event, kind, target, namespace, name)."""
    if isinstance(why, tuple) and len(why) == 4 and isinstance(why[3], dict):
        meta = why[3].get("metadata")
        if isinstance(meta, dict):
            return (why[0], why[1], why[2], meta.get("namespace") or "", meta.get("name"))
    return why


def describe_trigger(why: object) -> tuple[str, str]:
    """(reason, text) of a work-queue trigger: which watch event, requeue or shard move."""
    why = compact_trigger(why)
    if isinstance(why, tuple) and why:
        head = why[0]
        if head in ("added", "updated", "deleted") and len(why) == 5:
            _, kind, target, ns, name = why
            kind_name = kind.kind if isinstance(kind, Kind) else str(kind)
            ref = f"{ns}/{name or '?'}" if ns else str(name or "?")
            return str(head), f"{kind_name} {ref} {head}{_VIA.get(str(target), '')}"
        if head == "requeue_after" and len(why) == 2:
            return "requeue_after", f"requeue after {why[1]:g}s"
        if head == "retry" and len(why) == 2:
            return "retry", f"retry after error: {why[1]}"
        if head == "shard_acquired" and len(why) == 2:
            return "shard_acquired", f"shard {why[1]} acquired by this replica"
    return "direct", "added to the queue directly"


class ReconcileRecord:
    """One reconcile: filled in as it runs (the active one), then kept in its key's ring."""

    __slots__ = ("duration", "error", "events", "key", "log_token", "outcome", "phase",
                 "phase_since", "queued_seconds", "reconcile_id", "requeue_after", "requeues",
                 "shard", "span", "started_at", "token", "trace_id", "waiting_for", "why",
                 "worker", "writes", "writes_unseen", "writes_wait")

    def __init__(self, key: str, reconcile_id: str, worker: int, started_at: float,
                 why: object, shard: int | None) -> None:
        self.key = key
        self.reconcile_id = reconcile_id
        self.worker = worker
        self.started_at = started_at  # monotonic
        self.why = why  # compact_trigger
        self.shard = shard
        self.queued_seconds: float | None = None
        self.phase = "starting"
        self.phase_since = started_at
        self.waiting_for: Writes | None = None
        self.writes_wait: float | None = None
        self.writes_unseen = 0
        self.duration: float | None = None
        self.outcome = ""
        self.error: str | None = None
        self.requeue_after: float | None = None
        self.requeues = 0
        self.writes: Writes | None = None
        self.events: list[tuple[str, str]] | None = None
        self.trace_id = ""
        self.span: Span | None = None
        self.token: object = None
        self.log_token: Mapping[str, Any] | None = None

    @property
    def trigger(self) -> str:
        return describe_trigger(self.why)[1]

    def started(self, clock: Clock) -> datetime:
        """When it started, on the wall clock."""
        return clock.now() - timedelta(seconds=clock.monotonic() - self.started_at)

    def to_dict(self, clock: Clock) -> dict[str, Any]:
        """The JSON form the debug endpoint answers."""
        reason, text = describe_trigger(self.why)
        out: dict[str, Any] = {
            "reconcileID": self.reconcile_id,
            "started": self.started(clock).isoformat(),
            "trigger": text,
            "triggerReason": reason,
            "worker": self.worker,
        }
        if self.queued_seconds is not None:
            out["queuedSeconds"] = round(self.queued_seconds, 6)
        if self.writes_wait is not None:
            out["ownWritesWaitSeconds"] = round(self.writes_wait, 6)
            if self.writes_unseen:
                out["ownWritesNotSeen"] = self.writes_unseen
        if self.duration is not None:
            out["durationSeconds"] = round(self.duration, 6)
        if self.outcome:
            out["outcome"] = self.outcome
        if self.error is not None:
            out["error"] = self.error
        if self.requeue_after is not None:
            out["requeueAfterSeconds"] = self.requeue_after
        if self.outcome == "error" and self.requeues:
            out["requeues"] = self.requeues
        out["wrote"] = writes_list(self.writes or {})
        out["events"] = [{"type": t, "reason": r} for t, r in self.events or ()]
        if self.shard is not None:
            out["shard"] = self.shard
        if self.trace_id:
            out["traceID"] = self.trace_id
        return out


def writes_list(writes: Writes) -> list[dict[str, Any]]:
    """`[{kind, object, resourceVersion}]` (resourceVersion None: deleted)."""
    return [{"kind": kind.kind, "resource": kind.resource, "object": key,
             "resourceVersion": rv} for (kind, key), rv in writes.items()]


class Observer:
    """Spans and history of one controller's reconciles (see the module docstring)."""

    def __init__(self, controller: str, kind: Kind | None, *, clock: Clock,
                 tracer: Tracer | None = None, history: int = 0,
                 max_keys: int = DEFAULT_MAX_KEYS) -> None:
        self.controller = controller
        self.kind = kind
        self.clock = clock
        self.tracer = tracer
        self.history = history
        self.max_keys = max_keys
        self.active: dict[str, ReconcileRecord] = {}
        # key -> its last records, oldest first; the dict's order is the LRU order
        self._rings: dict[str, list[ReconcileRecord]] = {}

    @property
    def records_events(self) -> bool:
        return self.history > 0

    def start(self, request: Request, key: str, reconcile_id: str, *, worker: int,
              why: object, added_at: float | None, shard: int | None) -> ReconcileRecord:
        now = self.clock.monotonic()
        rec = ReconcileRecord(key, reconcile_id, worker, now, compact_trigger(why), shard)
        if added_at is not None:
            rec.queued_seconds = now - added_at
        if self.history:
            self.active[key] = rec
        if self.tracer is not None:
            self._open_span(rec, request)
        return rec

    def _open_span(self, rec: ReconcileRecord, request: Request) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry import trace

        reason, text = describe_trigger(rec.why)
        attributes: dict[str, Any] = {
            "asyncop.controller": self.controller,
            "asyncop.object.name": request.name,
            "asyncop.object.key": rec.key,
            "asyncop.reconcile_id": rec.reconcile_id,
            "asyncop.trigger": text,
            "asyncop.trigger.reason": reason,
            "asyncop.worker": rec.worker,
        }
        if self.kind is not None:
            attributes["asyncop.object.kind"] = self.kind.kind
        if request.namespace:
            attributes["k8s.namespace.name"] = request.namespace
        if rec.queued_seconds is not None:
            attributes["asyncop.queue.wait_seconds"] = rec.queued_seconds
        if rec.shard is not None:
            attributes["asyncop.shard"] = rec.shard
        assert self.tracer is not None
        span = self.tracer.start_span("reconcile", context=otel_context.Context(),
                                      attributes=attributes)
        rec.span = span
        rec.trace_id = format(span.get_span_context().trace_id, "032x")
        rec.token = otel_context.attach(trace.set_span_in_context(span))
        # the reconcile's log lines name its trace (reset in _close_span, before the
        # controller resets its own fields)
        rec.log_token = structlog.contextvars.bind_contextvars(trace_id=rec.trace_id)

    @contextmanager
    def catching_up(self, rec: ReconcileRecord, writes: Writes) -> Iterator[ReconcileRecord]:
        """Around the wait for the key's own writes; set `rec.writes_unseen` inside."""
        start = self.clock.monotonic()
        rec.phase, rec.phase_since, rec.waiting_for = "waiting for own writes", start, writes
        span = None
        if self.tracer is not None:
            span = self.tracer.start_span("wait for own writes", attributes={
                "asyncop.writes": len(writes),
                "asyncop.writes.objects": [f"{k.kind} {key}" for k, key in writes]})
        try:
            yield rec
        finally:
            rec.writes_wait = self.clock.monotonic() - start
            rec.waiting_for = None
            if span is not None:
                span.set_attribute("asyncop.writes.not_seen", rec.writes_unseen)
                span.end()

    def reconciling(self, rec: ReconcileRecord, now: float) -> None:
        """The reconciler is called now (monotonic `now`, the controller's)."""
        rec.phase, rec.phase_since = "reconciling", now

    def finish(self, rec: ReconcileRecord, outcome: Outcome | None,
               error: BaseException | None, recording: Recording | None,
               requeues: int = 0, ended: float | None = None) -> None:
        """The reconcile ended at `ended` (monotonic; None: interrupted before the
        reconciler ran); `outcome` None: it ended without one."""
        if rec.phase == "reconciling" and ended is not None:
            rec.duration = ended - rec.phase_since
        rec.phase = "done"
        rec.outcome = outcome.metric if outcome is not None else "interrupted"
        if error is not None:
            rec.error = error_text(error)
        if outcome is not None and outcome.action == "requeue_after":
            rec.requeue_after = outcome.after
        rec.requeues = requeues
        if recording is not None:
            rec.writes = recording.writes
            if recording.events is not None:
                rec.events = recording.events
        if rec.span is not None:
            self._close_span(rec, outcome, error)
        if self.history:
            if self.active.get(rec.key) is rec:
                del self.active[rec.key]
            self._file(rec)

    def _close_span(self, rec: ReconcileRecord, outcome: Outcome | None,
                    error: BaseException | None) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry.trace import Status, StatusCode

        span = rec.span
        assert span is not None
        span.set_attribute("asyncop.outcome", rec.outcome)
        if rec.requeue_after is not None:
            span.set_attribute("asyncop.requeue_after_seconds", rec.requeue_after)
        if rec.requeues:
            span.set_attribute("asyncop.requeues", rec.requeues)
        if rec.writes:
            span.set_attribute("asyncop.writes", len(rec.writes))
        if error is not None:
            if outcome is not None and outcome.traceback:
                span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, rec.error))
        elif outcome is None:
            span.set_status(Status(StatusCode.ERROR, "interrupted"))
        span.end()
        rec.span = None
        otel_context.detach(rec.token)  # type: ignore[arg-type]
        rec.token = None
        if rec.log_token is not None:
            structlog.contextvars.reset_contextvars(**rec.log_token)
            rec.log_token = None

    def _file(self, rec: ReconcileRecord) -> None:
        rings = self._rings
        ring = rings.pop(rec.key, None)  # re-inserted last: most recently used
        if ring is None:
            ring = []
            if len(rings) >= self.max_keys:
                del rings[next(iter(rings))]
        ring.append(rec)
        if len(ring) > self.history:
            del ring[0]
        rings[rec.key] = ring

    def history_of(self, key: str) -> list[ReconcileRecord]:
        """The key's last reconciles, oldest first."""
        return list(self._rings.get(key) or ())

    @property
    def keys(self) -> int:
        return len(self._rings)
