"""EventRecorder: core/v1 Events about objects, posted in the background.

`event(obj, type, reason, message)` never blocks and never raises into the caller: it
rate-limits per involved object (a token bucket on the clock), then puts the event on a
bounded queue (10,000 by default) that `run()` (owned by the Manager) drains with a few
concurrent senders (4 by default: one at a time fell behind an operator finishing ~500
objects a second, each with two Events). Invariants:

- A repeat (same object, type, reason and message) of an Event this recorder posted is
  aggregated into that Event (identical events are never posted concurrently): a merge
  patch of `count` + 1 and `lastTimestamp` instead of a new object (like client-go's
  EventCorrelator). If the Event has gone (expired, deleted),
  a new one is created.
- Events about cluster-scoped objects go to the `default` namespace (with an empty
  `involvedObject.namespace`), as the API server's legacy Event validation requires.
- A full queue or a rate-limited object drops the event (and logs it); API errors are logged.
- Every timestamp comes from the clock; the aggregation and rate-limit tables are bounded LRUs.
- An Event recorded during a reconcile is noted in that reconcile's record (what the debug
  endpoint shows it wrote, `ownwrites.note_event`); with a `tracer`, its post is a `post
  event` span (a trace of its own) linked to the reconcile's span, so a trace viewer goes
  from the reconcile to the Events it caused and back.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import structlog

from asyncop.api import AlreadyExists, ApiError, Kind, NotFound, RawObject
from asyncop.api.kinds import EVENT
from asyncop.clock import Clock, format_time, wait_for
from asyncop.runtime.ownwrites import note_event
from asyncop.runtime.rbac import PolicyRule

if TYPE_CHECKING:
    from opentelemetry.trace import SpanContext, Tracer

log = structlog.get_logger("asyncop.recorder")

EventType = Literal["Normal", "Warning"]
MAX_MESSAGE = 1024

RBAC_RULES: tuple[PolicyRule, ...] = (PolicyRule(("",), ("events",), ("create", "patch")),)
"""What the recorder needs wherever it posts Events (the Helm chart renders this)."""


class EventClient(Protocol):
    """The part of `asyncop.client.Client` that the recorder uses."""

    async def create(
        self, kind: Kind, obj: RawObject, *, namespace: str | None = None
    ) -> RawObject: ...

    async def patch(
        self,
        kind: Kind,
        name: str,
        body: Any,
        *,
        namespace: str | None = None,
    ) -> RawObject: ...


@dataclass(frozen=True, slots=True)
class _Pending:
    involved: dict[str, Any]
    namespace: str
    type: str
    reason: str
    message: str
    timestamp: str
    link: SpanContext | None = None
    """The span of the reconcile that recorded it (tracing on)."""

    @property
    def key(self) -> tuple[str, ...]:
        """What makes two Events the same series (aggregated into one with a count)."""
        inv = self.involved
        return (self.namespace, inv["uid"], inv["kind"], inv["name"], self.type, self.reason,
                self.message)


@dataclass(slots=True)
class _Posted:
    name: str
    count: int
    first: str


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class EventRecorder:
    def __init__(
        self,
        client: EventClient,
        *,
        component: str,
        clock: Clock,
        host: str = "",
        queue_size: int = 10_000,
        senders: int = 4,
        burst: int = 25,
        qps: float = 1.0 / 300.0,
        cache_size: int = 4096,
    ) -> None:
        self._client = client
        self.component = component
        self._clock = clock
        self._host = host
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=queue_size)
        self._senders = senders
        self._inflight: dict[tuple[str, ...], asyncio.Future[None]] = {}
        self._burst = float(burst)
        self._qps = qps
        self._cache_size = cache_size
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._posted: OrderedDict[tuple[str, ...], _Posted] = OrderedDict()
        self._last_nanos = 0
        self.dropped = 0
        self.tracer: Tracer | None = None
        """OpenTelemetry tracer (set by the Manager when tracing is on)."""
        self._log = log.bind(component=component)

    def event(
        self,
        obj: RawObject,
        type: EventType,
        reason: str,
        message: str,
        *,
        kind: Kind | None = None,
    ) -> None:
        """Record an Event about `obj` (pass `kind` when `obj` lacks apiVersion/kind)."""
        try:
            note_event(type, reason)
            self._enqueue(obj, type, reason, message, kind)
        except Exception as exc:  # never fail the caller (a reconcile)
            self._log.warning("event not recorded", reason=reason, error=str(exc))

    def _enqueue(
        self, obj: RawObject, type: str, reason: str, message: str, kind: Kind | None
    ) -> None:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or ""
        involved: dict[str, Any] = {
            "apiVersion": kind.api_version if kind else obj.get("apiVersion", ""),
            "kind": kind.kind if kind else obj.get("kind", ""),
            "name": meta.get("name", ""),
            "namespace": namespace,
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        ident = meta.get("uid") or f"{involved['kind']}/{namespace}/{involved['name']}"
        if not self._allow(ident):
            self.dropped += 1
            self._log.debug("event rate limited", reason=reason, object=involved["name"])
            return
        pending = _Pending(
            involved=involved,
            namespace=namespace or "default",
            type=type,
            reason=reason,
            message=message[:MAX_MESSAGE],
            timestamp=format_time(self._clock.now()),
            link=self._current_span() if self.tracer is not None else None,
        )
        try:
            self._queue.put_nowait(pending)
        except asyncio.QueueFull:
            self.dropped += 1
            self._log.warning("event queue full", reason=reason, object=involved["name"])

    @staticmethod
    def _current_span() -> SpanContext | None:
        from opentelemetry import trace

        ctx = trace.get_current_span().get_span_context()
        return ctx if ctx.is_valid else None

    def _allow(self, ident: str) -> bool:
        now = self._clock.monotonic()
        bucket = self._buckets.pop(ident, None)
        if bucket is None:
            bucket = _Bucket(tokens=self._burst, at=now)
        bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.at) * self._qps)
        bucket.at = now
        self._buckets[ident] = bucket
        if len(self._buckets) > self._cache_size:
            self._buckets.popitem(last=False)
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    async def run(self) -> None:
        """Post queued events, `senders` at a time, until cancelled."""
        async with asyncio.TaskGroup() as tg:
            for _ in range(self._senders):
                tg.create_task(self._send())

    async def _send(self) -> None:
        """One sender: post the next event; identical events wait for each other (so a
        repeat becomes a `count` patch of the first, never a second create)."""
        loop = asyncio.get_running_loop()
        while True:
            pending = await self._queue.get()
            key = pending.key
            try:
                while (busy := self._inflight.get(key)) is not None:
                    await busy
                done = self._inflight[key] = loop.create_future()
                try:
                    if self.tracer is None:
                        await self._post(pending)
                    else:
                        await self._traced_post(self.tracer, pending)
                finally:
                    del self._inflight[key]
                    done.set_result(None)
            except ApiError as exc:
                self._log.warning("event post failed", reason=pending.reason, error=str(exc))
            except Exception as exc:
                self._log.warning("event post error", reason=pending.reason, error=repr(exc))
            finally:
                self._queue.task_done()

    async def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued event was posted (needs `run()`); False on timeout."""
        try:
            await wait_for(self._clock, self._queue.join(), timeout)
        except TimeoutError:
            return False
        return True

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    async def _traced_post(self, tracer: Tracer, p: _Pending) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry.trace import Link

        attributes = {"asyncop.event.reason": p.reason, "asyncop.event.type": p.type,
                      "asyncop.event.object": f"{p.involved['kind']} {p.involved['name']}",
                      "k8s.namespace.name": p.namespace}
        with tracer.start_as_current_span(
                "post event", context=otel_context.Context(), attributes=attributes,
                links=[Link(p.link)] if p.link is not None else None):
            await self._post(p)

    async def _post(self, p: _Pending) -> None:
        key = p.key
        seen = self._posted.pop(key, None)
        if seen is not None:
            seen.count += 1
            body = {"count": seen.count, "lastTimestamp": p.timestamp, "message": p.message}
            try:
                await self._client.patch(EVENT, seen.name, body, namespace=p.namespace)
                self._remember(key, seen)
                return
            except NotFound:
                pass  # expired or deleted: start a new series
        created = await self._create(p)
        self._remember(key, _Posted(name=created, count=1, first=p.timestamp))

    async def _create(self, p: _Pending) -> str:
        for _ in range(3):
            name = f"{p.involved['name'] or 'event'}.{self._unique_nanos():x}"
            body: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": p.namespace},
            }
            body.update(
                involvedObject=p.involved,
                reason=p.reason,
                message=p.message,
                type=p.type,
                count=1,
                firstTimestamp=p.timestamp,
                lastTimestamp=p.timestamp,
                source={"component": self.component, "host": self._host}
                if self._host
                else {"component": self.component},
                reportingComponent=self.component,
                reportingInstance=self._host,
            )
            try:
                await self._client.create(EVENT, cast(RawObject, body), namespace=p.namespace)
                return name
            except AlreadyExists:
                continue
        raise RuntimeError("could not find a free event name")

    def _unique_nanos(self) -> int:
        now = self._clock.now()
        nanos = int(now.timestamp()) * 1_000_000_000 + now.microsecond * 1000
        self._last_nanos = max(nanos, self._last_nanos + 1)
        return self._last_nanos

    def _remember(self, key: tuple[str, ...], posted: _Posted) -> None:
        self._posted[key] = posted
        if len(self._posted) > self._cache_size:
            self._posted.popitem(last=False)
