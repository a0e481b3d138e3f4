"""Outcome: what a reconcile's result or error means for the queue, the metrics and the log.

A pure function (kube-rs's `error_policy`, without the side effects), tested without a queue:

| reconcile ended with            | queue action              | metric          | log            |
|---------------------------------|---------------------------|-----------------|----------------|
| `Result()` / None               | forget                    | success         | —              |
| `Result(requeue_after=d)`       | forget, then add_after(d) | requeue(_after) | —              |
| `TerminalError`                 | forget                    | error, terminal | error + trace  |
| `Conflict` (not AlreadyExists)  | add_rate_limited          | error           | info, no trace |
| a CancelledError of its own     | add_rate_limited          | error           | error, no trace|
| any other exception             | add_rate_limited          | error           | error + trace  |

A Conflict is the normal end of optimistic concurrency (the retry re-reads fresh data), so it
is logged at info without a traceback. "Ordinary" failures are the ones `recover_panic=False`
lets escape. Invariant: every outcome either forgets the key or schedules it again, never
both undone — a key is never lost.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from asyncop.api import AlreadyExists, Conflict
from asyncop.runtime.metrics import ReconcileResult
from asyncop.runtime.reconcile import Result, TerminalError

Action = Literal["forget", "requeue_after", "rate_limited"]


@dataclass(frozen=True, slots=True)
class Outcome:
    action: Action
    metric: ReconcileResult
    after: float = 0.0
    terminal: bool = False
    #: what to log (None: nothing) and whether with the traceback
    log_level: Literal["info", "error"] | None = None
    message: str = ""
    traceback: bool = False
    #: an unexpected failure (what `recover_panic=False` lets end the controller)
    ordinary_failure: bool = False


SUCCESS = Outcome("forget", "success")


def outcome_of(result: Result | None, error: BaseException | None = None) -> Outcome:
    """The outcome of a reconcile that returned `result` or raised `error`."""
    if error is None:
        after = None if result is None else result.requeue_after
        if after is None:
            return SUCCESS
        return Outcome("requeue_after", "requeue_after" if after > 0 else "requeue",
                       after=after)
    if isinstance(error, TerminalError):
        return Outcome("forget", "error", terminal=True, log_level="error",
                       message="reconcile failed terminally", traceback=True)
    if isinstance(error, Conflict) and not isinstance(error, AlreadyExists):
        return Outcome("rate_limited", "error", log_level="info",
                       message="conflict, retrying on fresh data")
    if isinstance(error, asyncio.CancelledError):
        return Outcome("rate_limited", "error", log_level="error", message="reconcile failed")
    return Outcome("rate_limited", "error", log_level="error", message="reconcile failed",
                   traceback=True, ordinary_failure=True)


def error_text(error: BaseException) -> str:
    """The `error` field of the log line (an ApiError's message, else its text or type)."""
    if isinstance(error, Conflict) and not isinstance(error, AlreadyExists):
        return error.message
    return str(error) or type(error).__name__


__all__ = ["SUCCESS", "Action", "Outcome", "error_text", "outcome_of"]
