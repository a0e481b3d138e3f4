"""Worker: the loop each of a Controller's worker coroutines runs, and one reconcile.

Loop: get a Request (and the priority it was queued with) → reconcile → outcome → `done`.
What a result or an error means is `outcome_of`'s decision (asyncop.runtime.outcome); a
retry (`rate_limited`) and a `requeue_after` keep the priority the key was handed out with,
as controller-runtime's controller does, so a replayed key's timers stay behind live work.

Invariants: a key is reconciled by at most one worker at a time (the queue guarantees it);
a failing reconcile never kills its worker unless `recover_panic=False`; `CancelledError` is
never swallowed (a lost shard's cancellation ends only that key's reconcile). A worker that
takes the next key while others are queued first yields to the event loop once: reconciles
that never suspend (nothing to write, as in a restart's replay) would otherwise run back to
back and starve everything else in the process — watch streams, lease renewals, probes —
until the queue is empty, and a live change could not even be read, let alone put first.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from asyncop.api import Request
from asyncop.clock import Clock
from asyncop.runtime.metrics import ControllerStats
from asyncop.runtime.observe import Observer, ReconcileRecord
from asyncop.runtime.outcome import Outcome, error_text, outcome_of
from asyncop.runtime.ownwrites import OwnWrites, Recording
from asyncop.runtime.reconcile import Reconciler, Result
from asyncop.runtime.shardgate import ShardGate
from asyncop.runtime.workqueue import ShutDown, WorkQueue

if TYPE_CHECKING:
    from asyncop.runtime.controller import CacheLike

log = structlog.get_logger("asyncop.runtime.controller")


@dataclass(frozen=True, slots=True)
class Run:
    """What one `Controller.run()` shares with its workers."""

    queue: WorkQueue[Request]
    cache: CacheLike
    clock: Clock
    stats: ControllerStats | None
    grace: float
    gate: ShardGate | None = None
    observer: Observer | None = None
    # Workers waiting for the cache to catch up (not yet reconciling): shutdown cancels them.
    catching_up: set[asyncio.Task[None]] = field(default_factory=set)


class Workers:
    """The worker loop of one controller (its name, reconciler and write bookkeeping)."""

    def __init__(self, name: str, reconciler: Reconciler, *, recover_panic: bool,
                 own_writes: OwnWrites) -> None:
        self.name = name
        self.reconciler = reconciler
        self.recover_panic = recover_panic
        self.own_writes = own_writes
        # reconcile ids: uuid4 hex from a per-controller PRNG (os.urandom per id is slow).
        self._rng = random.Random()

    async def work(self, rt: Run, index: int) -> None:
        queue = rt.queue
        while True:
            if len(queue):
                await asyncio.sleep(0)  # let the loop run between back-to-back reconciles
            try:
                request, priority = await queue.get_with_priority()
            except ShutDown:
                return
            try:
                if queue.shutting_down:
                    continue  # draining: finish in-flight work only, start nothing new
                await self._process(rt, request, index, priority)
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

    async def _process(self, rt: Run, request: Request, worker: int, priority: int) -> None:
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
        own_writes = self.own_writes
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
            if own_writes.pending:
                if rec is not None and observer is not None and key in own_writes.pending:
                    with observer.catching_up(rec, own_writes.pending[key][1]):
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
                with own_writes.recording(
                        key, rt.clock, events=observer is not None and observer.records_events,
                ) as recording:
                    outcome = await self._reconcile(rt, request, error, priority)
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

    async def _reconcile(self, rt: Run, request: Request, errors: list[BaseException],
                         priority: int) -> Outcome:
        """One reconcile, judged by `outcome_of` and applied to the queue (requeues keep
        `priority`) and the log (its error, if any, is appended to `errors`)."""
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
            retry: object = ("retry", error_text(error)) if track and error is not None else None
            queue.add_rate_limited(request, retry, priority=priority)
        else:
            queue.forget(request)
            if outcome.action == "requeue_after":
                why: object = ("requeue_after", outcome.after) if track else None
                queue.add_after(request, outcome.after, why, priority=priority)
        return outcome

    # -- read-your-own-writes ---------------------------------------------------------------
    async def _catch_up(self, rt: Run, key: str) -> int:
        """Wait (bounded) for the cache to see the last writes; shutdown may abandon this.
        How many writes it had not seen when the bound ran out."""
        task = asyncio.current_task()
        if task is not None:
            rt.catching_up.add(task)
        try:
            return await self.own_writes.catch_up(rt.cache, rt.clock, key)
        finally:
            if task is not None:
                rt.catching_up.discard(task)
