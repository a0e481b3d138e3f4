"""Controller: watches feed a WorkQueue; N worker coroutines reconcile the keys.

`run(cache=, clock=)` registers one event handler per watch on the shared informers, waits
for the cache to sync, then runs `workers` coroutines (`asyncop.runtime.worker`), each
looping: get a `Request` from the queue (the queue holds Requests themselves) → reconcile →
outcome → `done(request)`. What a result or an error means — forget, requeue after d,
rate-limited retry; which metric; what to log — is decided by the pure function
`asyncop.runtime.outcome.outcome_of` (its table is the reference): `Result()` forgets,
`Result(requeue_after=d)` forgets and adds after exactly d on the clock, an exception retries
with per-key backoff, a `Conflict` too but logged at info without a traceback, a
`TerminalError` is logged, counted and forgotten.

Priority queue (`priority_queue=True`, the default, as in controller-runtime 0.23+): keys from
an informer's initial list, from the adds a handler gets for what is already cached when the
controller starts (a regained lease), from periodic resyncs and from newly acquired shards
are queued with `LOW_PRIORITY`, so a live change is reconciled before a restart's replay of
every object; retries and requeues keep the priority the key was reconciled with.
`priority_queue=False`: every key priority 0, one FIFO (client-go's order).

Invariants: a key is reconciled by at most one worker at a time (the queue guarantees it);
a failing reconcile never kills its worker (unless `recover_panic=False`, which lets the
exception end `run()`); `CancelledError` is never swallowed; workers yield to the event loop
between reconciles while keys are queued. Every reconcile runs inside structlog contextvars
`controller`, `namespace`, `name`, `reconcile_id`.

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
from collections.abc import Callable, Sequence
from typing import Protocol, cast

import structlog

from asyncop.api import Kind, RawObject, Request
from asyncop.clock import Clock, wait_for
from asyncop.runtime.handlers import Watch
from asyncop.runtime.listeners import EventHandler
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.observe import Observer, Observing
from asyncop.runtime.ownwrites import OwnWrites
from asyncop.runtime.ratelimit import RateLimiter
from asyncop.runtime.rbac import READ, PolicyRule, merge_rules
from asyncop.runtime.reconcile import Reconciler
from asyncop.runtime.shardgate import ShardCache, ShardGate
from asyncop.runtime.shards import ShardScope
from asyncop.runtime.worker import Run, Workers
from asyncop.runtime.workqueue import LOW_PRIORITY, WorkQueue

log = structlog.get_logger("asyncop.runtime.controller")

WriteListener = Callable[[Kind, "RawObject | None", str], None]


DEFAULT_GRACE_PERIOD = 10.0


class Removable(Protocol):
    """What `Informer.add_handler` returns (a `listeners.Registration`): `remove()`."""

    def remove(self) -> None: ...


class InformerLike(Protocol):
    """What a Controller needs from `asyncop.runtime.informer.Informer` (its `has_synced`
    too, when it has one: adds before it are its initial list)."""

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
        priority_queue: bool = True,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if not watches:
            raise ValueError("a controller needs at least one watch")
        self.name = name
        self.watches = tuple(watches)
        self.workers = workers
        self.grace_period: float | None = grace_period
        """Drain bound on cancellation; None: the Manager's (else DEFAULT_GRACE_PERIOD)."""
        self.write_sync_timeout = write_sync_timeout
        self.rbac = tuple(rbac)
        """The rules the reconciler declares (writes, and reads beyond the watches)."""
        self.priority_queue = priority_queue
        """Replays (initial lists, resyncs, acquired shards) wait behind live events."""
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
        self._workers = Workers(name, reconciler, recover_panic=recover_panic,
                                own_writes=self._own_writes)

    @property
    def reconciler(self) -> Reconciler:
        """What the workers call (may be replaced, e.g. wrapped, before or while running)."""
        return self._workers.reconciler

    @reconciler.setter
    def reconciler(self, value: Reconciler) -> None:
        self._workers.reconciler = value

    @property
    def recover_panic(self) -> bool:
        """A failing reconcile is logged and retried (False: it ends `run()`)."""
        return self._workers.recover_panic

    @recover_panic.setter
    def recover_panic(self, value: bool) -> None:
        self._workers.recover_panic = value

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
                             watches=self.watches, queue=queue,
                             replay_priority=LOW_PRIORITY if self.priority_queue else 0)
        rt = Run(queue, cache, clock, stats, grace, gate, observer)
        # Adds are a replay while handlers are being registered (what is cached already) and
        # until their informer has synced (its initial list).
        registering = [True]

        def initial_of(informer: InformerLike) -> Callable[[], bool] | None:
            if not self.priority_queue:
                return None
            return lambda: registering[0] or not getattr(informer, "has_synced", True)

        registrations = []
        for w in self.watches:
            informer = cache.informer(w.kind)
            registrations.append(informer.add_handler(w.handler(
                queue, primary=self.primary, initial=initial_of(informer),
                admit=gate.admit_for(w) if gate is not None else None, track=track)))
        registering[0] = False
        if client is not None:
            if not any(c is client for c in self._write_sources):
                client.add_write_listener(self._own_writes.listener)  # once per client
                self._write_sources.append(client)
        tasks: list[asyncio.Task[None]] = []
        try:
            await cache.wait_for_sync()
            log.info("controller started", controller=self.name, workers=self.workers)
            tasks = [
                asyncio.create_task(self._workers.work(rt, i), name=f"{self.name}-worker-{i}")
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

    async def _stop(self, rt: Run, tasks: list[asyncio.Task[None]]) -> None:
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
