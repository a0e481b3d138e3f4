"""Controller: watches feed a WorkQueue; N worker coroutines reconcile the keys.

`run(cache=, clock=)` registers one event handler per watch on the shared informers, waits
for the cache to sync, then runs `workers` coroutines, each looping: get a `Request` from the
queue (the queue holds Requests themselves) → reconcile → outcome → `done(request)`. What a
result or an error means — forget, requeue after d, rate-limited retry; which metric; what to
log — is decided by the pure function `asyncop.runtime.outcome.outcome_of` (its table is the
reference): `Result()` forgets, `Result(requeue_after=d)` forgets and adds after exactly d on
the clock, an exception retries with per-key backoff, a `Conflict` too but logged at info
without a traceback, a `TerminalError` is logged, counted and forgotten.

Invariants: a key is reconciled by at most one worker at a time (the queue guarantees it);
a failing reconcile never kills its worker (unless `recover_panic=False`, which lets the
exception end `run()`); `CancelledError` is never swallowed. Every reconcile runs inside
structlog contextvars `controller`, `namespace`, `name`, `reconcile_id`.

Read-your-own-writes (`asyncop.runtime.ownwrites`): with a `client`, a write listener records
every object written during the reconcile of key R; before R's next reconcile the worker
waits (bounded by `write_sync_timeout` on the clock) until the cache has seen each recorded
resourceVersion (or its informer's stream passed it with the object gone, deleted since), so
a reconcile never acts on a cache older than its own last writes. A timeout only logs and
proceeds; shutdown abandons such waits.

Observation (`asyncop.runtime.observe`): given `observing=` (tracing or the debug endpoint
on), the queue and the watch handlers keep each key's trigger, and every reconcile is a span
and/or a record in its key's history; `observer` and `queue` are what the debug endpoint
reads. Without it none of that code runs.

Permissions: `rbac=` declares the rules the reconciler needs for its writes (and reads of
kinds it does not watch); `rbac_rules` adds get/list/watch for every watched kind, so
`asyncop generate` renders a Role that is exactly what the controller declares.

Cancelling `run()` stops taking new keys, lets in-flight reconciles finish within
`grace_period` (on the clock; unset, the Manager's `graceful_shutdown_timeout`), cancels what
is left, removes its event handlers from the informers, and re-raises the cancellation.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

import structlog

from asyncop.api import Kind, RawObject, Request
from asyncop.clock import Clock, wait_for
from asyncop.runtime.handlers import Watch
from asyncop.runtime.listeners import EventHandler
from asyncop.runtime.metrics import ControllerStats, Metrics
from asyncop.runtime.observe import Observer, Observing, ReconcileRecord
from asyncop.runtime.outcome import Outcome, error_text, outcome_of
from asyncop.runtime.ownwrites import OwnWrites, Recording
from asyncop.runtime.ratelimit import RateLimiter
from asyncop.runtime.rbac import READ, PolicyRule, merge_rules
from asyncop.runtime.reconcile import Reconciler, Result
from asyncop.runtime.shardgate import ShardCache, ShardGate
from asyncop.runtime.shards import ShardScope
from asyncop.runtime.workqueue import ShutDown, WorkQueue

log = structlog.get_logger("asyncop.runtime.controller")

WriteListener = Callable[[Kind, "RawObject | None", str], None]


DEFAULT_GRACE_PERIOD = 10.0


class Removable(Protocol):
    """What `Informer.add_handler` returns (a `listeners.Registration`): `remove()`."""

    def remove(self) -> None: ...


class InformerLike(Protocol):
    def add_handler(self, handler: EventHandler) -> Removable | None: ...


class CacheLike(Protocol):
    """What a Controller needs from `asyncop.runtime.cache.Cache`."""

    def informer(self, kind: Kind) -> InformerLike: ...

    async def wait_for_sync(self) -> object: ...

    async def wait_for_resource_version(
        self, kind: Kind, key: str, rv: str | None, *, timeout: float
    ) -> object: ...


class WriteSource(Protocol):
    """What a Controller needs from `asyncop.client.Client` (read-your-own-writes)."""

    def add_write_listener(self, cb: WriteListener) -> object: ...


@dataclass(frozen=True, slots=True)
class _Run:
    queue: WorkQueue[Request]
    cache: CacheLike
    clock: Clock
    stats: ControllerStats | None
    grace: float
    gate: ShardGate | None = None
    observer: Observer | None = None
    # Workers waiting for the cache to catch up (not yet reconciling): shutdown cancels them.
    catching_up: set[asyncio.Task[None]] = field(default_factory=set)


DEFAULT_WORKERS = 16
"""Reconciles of one controller in flight at once (distinct keys; one key is never reconciled
twice at a time). Workers are coroutines, so the cost of more is a few KiB each, and an
operator waiting on the API server needs several in flight to use its CPU: measured with
bench/operator.py on 2 cores, 1,000 due Ats went at ~310 Ats/s with 2 workers and ~500 with
8-64 (flat from 8 on), and operator CPU per At was lowest from 8 on. 16 leaves room for
slower API servers (more time waiting per reconcile) without a measurable cost."""


class Controller:
    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        *,
        watches: Sequence[Watch],
        workers: int = DEFAULT_WORKERS,
        rate_limiter: RateLimiter | None = None,
        recover_panic: bool = True,
        grace_period: float | None = None,
        write_sync_timeout: float = 5.0,
        rbac: Sequence[PolicyRule] = (),
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if not watches:
            raise ValueError("a controller needs at least one watch")
        self.name = name
        self.reconciler = reconciler
        self.watches = tuple(watches)
        self.workers = workers
        self.recover_panic = recover_panic
        self.grace_period: float | None = grace_period
        """Drain bound on cancellation; None: the Manager's (else DEFAULT_GRACE_PERIOD)."""
        self.write_sync_timeout = write_sync_timeout
        self.rbac = tuple(rbac)
        """The rules the reconciler declares (writes, and reads beyond the watches)."""
        self._rate_limiter = rate_limiter
        primaries = [w.kind for w in self.watches if w.target == "self"]
        self.primary: Kind | None = primaries[0] if primaries else None
        if self.primary is None and any(w.target == "owner" for w in self.watches):
            raise ValueError("owns() needs a for_() watch naming the primary kind")
        self.queue: WorkQueue[Request] | None = None
        self.observer: Observer | None = None
        """Spans and per-key history while running with `observing` (the debug endpoint)."""
        self._running = False
        self._write_sources: list[WriteSource] = []
        self._own_writes = OwnWrites(timeout=write_sync_timeout)
        # reconcile ids: uuid4 hex from a per-controller PRNG (os.urandom per id is slow).
        self._rng = random.Random()

    def __repr__(self) -> str:
        return f"Controller({self.name!r}, workers={self.workers})"

    @property
    def rbac_rules(self) -> list[PolicyRule]:
        """Everything this controller needs: `rbac` plus get/list/watch of each watched kind."""
        reads = (PolicyRule.for_(w.kind, *READ) for w in self.watches)
        return merge_rules([*reads, *self.rbac])

    async def run(
        self,
        *,
        cache: CacheLike,
        clock: Clock,
        metrics: Metrics | None = None,
        client: WriteSource | None = None,
        grace_period: float | None = None,
        shards: ShardScope | None = None,
        observing: Observing | None = None,
    ) -> None:
        """Run until cancelled; cancellation drains in-flight reconciles, then propagates.

        With `shards` (a sharded Manager), only keys of the replica's active shards are
        enqueued and reconciled (see `asyncop.runtime.shardgate`).

        The drain is bounded by the controller's own `grace_period`, else by the one given
        here (the Manager passes its `graceful_shutdown_timeout`), else 10 s. Every event
        handler registered here is removed when `run()` ends, so a controller that is
        started again (a regained lease) does not leave handlers behind.
        """
        if self._running:
            raise RuntimeError(f"controller {self.name!r} is already running")
        self._running = True
        grace = self.grace_period if self.grace_period is not None else grace_period
        try:
            await self._run(cache=cache, clock=clock, metrics=metrics, client=client,
                            grace=DEFAULT_GRACE_PERIOD if grace is None else grace,
                            shards=shards, observing=observing)
        finally:
            self._running = False

    async def _run(
        self,
        *,
        cache: CacheLike,
        clock: Clock,
        metrics: Metrics | None,
        client: WriteSource | None,
        grace: float,
        shards: ShardScope | None = None,
        observing: Observing | None = None,
    ) -> None:
        observer = None
        if observing is not None and observing.on:
            # a restarted controller (a regained lease) keeps the history it had
            observer = self.observer if self.observer is not None else Observer(
                self.name, self.primary, clock=clock, tracer=observing.tracer,
                history=observing.history, max_keys=observing.max_keys)
            observer.tracer = observing.tracer
        self.observer = observer
        track = observer is not None
        queue: WorkQueue[Request] = WorkQueue(
            clock=clock,
            rate_limiter=self._rate_limiter,
            name=self.name,
            metrics=metrics.queue_metrics(self.name) if metrics is not None else None,
            track_triggers=track,
        )
        self.queue = queue
        stats = metrics.controller(self.name, workers=self.workers) if metrics else None
        gate = None
        if shards is not None:
            gate = ShardGate(shards, cache=cast(ShardCache, cache), primary=self.primary,
                             watches=self.watches, queue=queue)
        rt = _Run(queue, cache, clock, stats, grace, gate, observer)
        registrations = [
            cache.informer(w.kind).add_handler(w.handler(
                queue, primary=self.primary,
                admit=gate.admit_for(w) if gate is not None else None, track=track))
            for w in self.watches
        ]
        if client is not None:
            if not any(c is client for c in self._write_sources):
                client.add_write_listener(self._own_writes.listener)  # once per client
                self._write_sources.append(client)
        tasks: list[asyncio.Task[None]] = []
        try:
            await cache.wait_for_sync()
            log.info("controller started", controller=self.name, workers=self.workers)
            tasks = [
                asyncio.create_task(self._worker(rt, i), name=f"{self.name}-worker-{i}")
                for i in range(self.workers)
            ]
            # asyncio.wait (unlike gather) leaves the workers running when we are cancelled.
            finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            errors = [t.exception() for t in finished if not t.cancelled()]
            await self._stop(rt, tasks)
            for error in errors:
                if error is not None:
                    raise error
        except asyncio.CancelledError:
            await self._stop(rt, tasks)
            log.info("controller stopped", controller=self.name)
            raise
        finally:
            queue.shutdown()
            if gate is not None:
                gate.close()
            for registration in registrations:
                if registration is not None:
                    registration.remove()

    async def _stop(self, rt: _Run, tasks: list[asyncio.Task[None]]) -> None:
        """Drain in-flight keys within the grace period, then cancel the workers."""
        rt.queue.shutdown()
        for task in list(rt.catching_up):
            task.cancel()  # it has not started reconciling: nothing to drain
        try:
            await wait_for(rt.clock, rt.queue.shutdown_with_drain(), rt.grace)
        except TimeoutError:
            log.warning(
                "grace period over, cancelling reconciles",
                controller=self.name,
                in_flight=rt.queue.processing,
            )
        finally:
            rt.queue.shutdown()
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    # -- workers --------------------------------------------------------------------------------
    async def _worker(self, rt: _Run, index: int) -> None:
        queue = rt.queue
        while True:
            try:
                request = await queue.get()
            except ShutDown:
                return
            try:
                if queue.shutting_down:
                    continue  # draining: finish in-flight work only, start nothing new
                await self._process(rt, request, index)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if rt.gate is None or task is None or not rt.gate.take_revoked(task):
                    raise
                task.uncancel()  # the key's shard was lost: stop this key, keep working
                log.warning("reconcile cancelled: shard lost", controller=self.name,
                            key=request.key)
            except Exception:
                if not self.recover_panic:
                    raise
                log.exception("worker error", controller=self.name, key=request.key)
            finally:
                queue.done(request)

    def _reconcile_id(self) -> str:
        return uuid.UUID(int=self._rng.getrandbits(128), version=4).hex

    async def _process(self, rt: _Run, request: Request, worker: int) -> None:
        key = request.key
        reconcile_id = self._reconcile_id()
        log_context = structlog.contextvars.bind_contextvars(
            controller=self.name,
            namespace=request.namespace,
            name=request.name,
            reconcile_id=reconcile_id,
        )
        shard: int | None = None
        ended: float | None = None
        observer = rt.observer
        rec: ReconcileRecord | None = None
        recording: Recording | None = None
        outcome: Outcome | None = None
        error: list[BaseException] = []
        try:
            if rt.gate is not None:
                shard = rt.gate.start(request)
                if shard is None:  # not this replica's (any more): drop it
                    rt.queue.forget(request)
                    return
            if observer is not None:
                why, added_at = rt.queue.take_trigger(request)
                rec = observer.start(request, key, reconcile_id, worker=worker, why=why,
                                     added_at=added_at, shard=shard)
            if self._own_writes.pending:
                if rec is not None and observer is not None and key in self._own_writes.pending:
                    with observer.catching_up(rec, self._own_writes.pending[key][1]):
                        rec.writes_unseen = await self._catch_up(rt, key)
                else:
                    await self._catch_up(rt, key)
                if rt.queue.shutting_down:
                    return
            stats = rt.stats
            if stats is not None:
                stats.busy(1)
            start = rt.clock.monotonic()
            if rec is not None and observer is not None:
                observer.reconciling(rec, start)
            try:
                with self._own_writes.recording(
                        key, rt.clock, events=observer is not None and observer.records_events,
                ) as recording:
                    outcome = await self._reconcile(rt, request, error)
            finally:
                ended = rt.clock.monotonic()
                if stats is not None:
                    stats.busy(-1)
                    if outcome is not None:
                        stats.reconciled(outcome.metric, ended - start,
                                         terminal=outcome.terminal)
                # when each reconcile ran, on the clock (a no-op call above debug level)
                log.debug("reconcile done", key=key, started=start, ended=ended,
                          result=outcome.metric if outcome else None, shard=shard)
        finally:
            if shard is not None and rt.gate is not None:
                rt.gate.finish(request, shard)
            if rec is not None and observer is not None:
                retried = outcome is not None and outcome.action == "rate_limited"
                try:
                    observer.finish(rec, outcome, error[0] if error else None, recording,
                                    requeues=rt.queue.num_requeues(request) if retried else 0,
                                    ended=ended)
                except Exception:  # observing must never break the worker
                    log.exception("recording the reconcile failed", key=key)
            structlog.contextvars.reset_contextvars(**log_context)

    async def _reconcile(self, rt: _Run, request: Request,
                         errors: list[BaseException]) -> Outcome:
        """One reconcile, judged by `outcome_of` and applied to the queue and the log (its
        error, if any, is appended to `errors`)."""
        error: BaseException | None = None
        result: Result | None = None
        try:
            result = await self.reconciler.reconcile(request)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise  # we are being cancelled: never swallow it
            error = exc  # one leaking out of the reconciler's own code is just a failure
        except Exception as exc:
            error = exc
        outcome = outcome_of(result, error)
        if error is not None:
            errors.append(error)
            if outcome.ordinary_failure and not self.recover_panic:
                raise error
        queue = rt.queue
        track = rt.observer is not None
        if outcome.log_level is not None and error is not None:
            fields: dict[str, object] = {"key": request.key, "error": error_text(error)}
            if not outcome.terminal:
                fields["requeues"] = queue.num_requeues(request)
            if outcome.traceback:
                fields["exc_info"] = error
            (log.info if outcome.log_level == "info" else log.error)(outcome.message, **fields)
        if outcome.action == "rate_limited":
            if track and error is not None:
                queue.add_rate_limited(request, ("retry", error_text(error)))
            else:
                queue.add_rate_limited(request)
        else:
            queue.forget(request)
            if outcome.action == "requeue_after":
                if track:
                    queue.add_after(request, outcome.after, ("requeue_after", outcome.after))
                else:
                    queue.add_after(request, outcome.after)
        return outcome

    # -- read-your-own-writes ---------------------------------------------------------------
    async def _catch_up(self, rt: _Run, key: str) -> int:
        """Wait (bounded) for the cache to see the last writes; shutdown may abandon this.
        How many writes it had not seen when the bound ran out."""
        task = asyncio.current_task()
        if task is not None:
            rt.catching_up.add(task)
        try:
            return await self._own_writes.catch_up(rt.cache, rt.clock, key)
        finally:
            if task is not None:
                rt.catching_up.discard(task)
