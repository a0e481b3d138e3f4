"""outcome_of: a reconcile's result or error → queue action, metric and log, without a queue."""

from __future__ import annotations

import asyncio

import pytest

from asyncop.api import AlreadyExists, ApiError, Conflict, status_body
from asyncop.runtime.outcome import Outcome, error_text, outcome_of
from asyncop.runtime.reconcile import Result, TerminalError

CONFLICT = Conflict(status_body(409, "the object has been modified"))
EXISTS = AlreadyExists(status_body(409, 'pods "p" already exists'))


@pytest.mark.parametrize(("result", "error", "expected"), [
    (None, None, Outcome("forget", "success")),
    (Result(), None, Outcome("forget", "success")),
    (Result(requeue_after=5), None, Outcome("requeue_after", "requeue_after", after=5)),
    (Result(requeue_after=0), None, Outcome("requeue_after", "requeue", after=0)),
    (None, TerminalError("bad spec"), Outcome("forget", "error", terminal=True,
                                              log_level="error",
                                              message="reconcile failed terminally",
                                              traceback=True)),
    (None, CONFLICT, Outcome("rate_limited", "error", log_level="info",
                             message="conflict, retrying on fresh data")),
    (None, EXISTS, Outcome("rate_limited", "error", log_level="error",
                           message="reconcile failed", traceback=True, ordinary_failure=True)),
    (None, asyncio.CancelledError(), Outcome("rate_limited", "error", log_level="error",
                                             message="reconcile failed")),
    (None, ValueError("boom"), Outcome("rate_limited", "error", log_level="error",
                                       message="reconcile failed", traceback=True,
                                       ordinary_failure=True)),
])
def test_outcome_table(result: Result | None, error: BaseException | None,
                       expected: Outcome) -> None:
    assert outcome_of(result, error) == expected


def test_error_text() -> None:
    assert error_text(CONFLICT) == "the object has been modified"
    assert error_text(EXISTS).startswith("409")  # the whole ApiError text
    assert error_text(asyncio.CancelledError()) == "CancelledError"
    assert error_text(ApiError(status_body(500, "x"))) == "500 InternalError: x"
