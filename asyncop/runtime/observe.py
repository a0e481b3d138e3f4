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

A trigger is described once, at `start`, as text (`describe_trigger`), so a record never
keeps the object that caused it alive. Invariants: memory is bounded (max_keys x history
records, plus one active record per worker); `finish` runs exactly once per `start`, in the
worker's task (the span context attached in `start` is detached there).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from asyncop.api import Kind, Request
from asyncop.clock import Clock
from asyncop.runtime.outcome import Outcome, error_text
from asyncop.runtime.ownwrites import Recording, Writes

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

DEFAULT_HISTORY = 8
"""Reconciles kept per key for the debug endpoint."""
DEFAULT_MAX_KEYS = 2048
"""Keys whose history is kept (least recently reconciled dropped first)."""

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


def describe_trigger(why: object) -> tuple[str, str]:
    """(reason, text) of a work-queue trigger: which watch event, requeue or shard move."""
    if isinstance(why, tuple) and why:
        head = why[0]
        if head in ("added", "updated", "deleted") and len(why) == 4:
            _, kind, target, obj = why
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            meta = meta if isinstance(meta, dict) else {}
            ns, name = meta.get("namespace") or "", meta.get("name") or "?"
            kind_name = kind.kind if isinstance(kind, Kind) else str(kind)
            ref = f"{ns}/{name}" if ns else str(name)
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

    __slots__ = ("duration", "error", "events", "key", "outcome", "phase", "phase_since",
                 "queued_seconds", "reconcile_id", "requeue_after", "requeues", "shard",
                 "span", "started", "started_at", "token", "trace_id", "trigger",
                 "trigger_reason", "waiting_for", "worker", "writes", "writes_unseen",
                 "writes_wait")

    def __init__(self, key: str, reconcile_id: str, *, worker: int, started: datetime,
                 started_at: float) -> None:
        self.key = key
        self.reconcile_id = reconcile_id
        self.worker = worker
        self.started = started
        self.started_at = started_at  # monotonic
        self.shard: int | None = None
        self.trigger_reason = ""
        self.trigger = ""
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
        self.writes: Writes = {}
        self.events: list[tuple[str, str]] = []
        self.trace_id = ""
        self.span: Span | None = None
        self.token: object = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the debug endpoint answers."""
        out: dict[str, Any] = {
            "reconcileID": self.reconcile_id,
            "started": self.started.isoformat(),
            "trigger": self.trigger,
            "triggerReason": self.trigger_reason,
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
        out["wrote"] = writes_list(self.writes)
        out["events"] = [{"type": t, "reason": r} for t, r in self.events]
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
        self._rings: OrderedDict[str, deque[ReconcileRecord]] = OrderedDict()

    @property
    def records_events(self) -> bool:
        return self.history > 0

    def start(self, request: Request, reconcile_id: str, *, worker: int, why: object,
              added_at: float | None, shard: int | None) -> ReconcileRecord:
        clock = self.clock
        now = clock.monotonic()
        key = request.key
        rec = ReconcileRecord(key, reconcile_id, worker=worker, started=clock.now(),
                              started_at=now)
        rec.shard = shard
        rec.trigger_reason, rec.trigger = describe_trigger(why)
        if added_at is not None:
            rec.queued_seconds = max(0.0, now - added_at)
        if self.history:
            self.active[key] = rec
        if self.tracer is not None:
            self._open_span(rec, request)
        return rec

    def _open_span(self, rec: ReconcileRecord, request: Request) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry import trace

        attributes: dict[str, Any] = {
            "asyncop.controller": self.controller,
            "asyncop.object.name": request.name,
            "asyncop.object.key": rec.key,
            "asyncop.reconcile_id": rec.reconcile_id,
            "asyncop.trigger": rec.trigger,
            "asyncop.trigger.reason": rec.trigger_reason,
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

    def reconciling(self, rec: ReconcileRecord) -> None:
        rec.phase, rec.phase_since = "reconciling", self.clock.monotonic()

    def finish(self, rec: ReconcileRecord, outcome: Outcome | None,
               error: BaseException | None, recording: Recording | None,
               requeues: int = 0) -> None:
        """The reconcile ended (`outcome` None: it was interrupted before an outcome)."""
        rec.duration = self.clock.monotonic() - rec.phase_since if rec.phase == "reconciling" \
            else None
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

    def _file(self, rec: ReconcileRecord) -> None:
        rings = self._rings
        ring = rings.get(rec.key)
        if ring is None:
            ring = rings[rec.key] = deque(maxlen=self.history)
            if len(rings) > self.max_keys:
                rings.popitem(last=False)
        else:
            rings.move_to_end(rec.key)
        ring.append(rec)

    def history_of(self, key: str) -> list[ReconcileRecord]:
        """The key's last reconciles, oldest first."""
        ring = self._rings.get(key)
        return list(ring) if ring is not None else []

    @property
    def keys(self) -> int:
        return len(self._rings)
