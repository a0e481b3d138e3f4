"""Reconcile values: Result, TerminalError, and the function adapter."""

from __future__ import annotations

import dataclasses

import pytest

from asyncop.api import Request
from asyncop.runtime.reconcile import Reconciler, Result, TerminalError, reconciler


def test_result_is_a_frozen_value() -> None:
    assert Result() == Result(requeue_after=None)
    assert Result(requeue_after=5).requeue_after == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        Result().requeue_after = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        Result(requeue_after=-1)


def test_terminal_error_wraps_its_cause() -> None:
    cause = ValueError("bad schedule")
    err = TerminalError(cause)
    assert err.cause is cause
    assert err.__cause__ is cause
    assert str(err) == "bad schedule"
    assert TerminalError("plain").cause == "plain"


async def test_reconciler_adapts_functions_returning_none_or_result() -> None:
    seen: list[Request] = []

    async def fn(request: Request) -> Result | None:
        seen.append(request)
        return None if request.name == "a" else Result(requeue_after=3.0)

    r: Reconciler = reconciler(fn)
    assert await r.reconcile(Request("a", "ns")) == Result()
    assert await r.reconcile(Request("b", "ns")) == Result(requeue_after=3.0)
    assert [s.key for s in seen] == ["ns/a", "ns/b"]
