"""Reconcile: the one interface an operator author implements.

A `Reconciler` has one coroutine, `reconcile(request) -> Result`. The `Request` is only a
key (namespace/name), never the event that caused it: the reconciler reads the current
state from the cache and drives the world towards it (level-triggered). Outcomes:

- `Result()`: done; the key's retry history is forgotten.
- `Result(requeue_after=d)`: reconcile again in `d` seconds exactly (0 means at once).
- raising an exception: retried with per-key exponential backoff (rate limited).
- raising `TerminalError`: logged and counted, never retried (until the next event).

`reconciler(fn)` adapts a plain `async def fn(request) -> Result | None` (None = `Result()`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from asyncop.api import Request


@dataclass(frozen=True, slots=True)
class Result:
    """What a reconcile asks for next. `requeue_after` is in seconds on the Manager's clock."""

    requeue_after: float | None = None

    def __post_init__(self) -> None:
        if self.requeue_after is not None and self.requeue_after < 0:
            raise ValueError("requeue_after must not be negative")


class Reconciler(Protocol):
    async def reconcile(self, request: Request) -> Result: ...


class TerminalError(Exception):
    """An error that retrying cannot fix (bad spec, missing permission the user must grant).

    Wraps its cause: `raise TerminalError(err)` or `raise TerminalError("bad schedule")`.
    """

    def __init__(self, cause: BaseException | str) -> None:
        super().__init__(str(cause))
        self.cause = cause
        if isinstance(cause, BaseException):
            self.__cause__ = cause


ReconcileFunc = Callable[[Request], Awaitable["Result | None"]]


class FunctionReconciler:
    """A `Reconciler` around a plain coroutine function."""

    __slots__ = ("fn",)

    def __init__(self, fn: ReconcileFunc) -> None:
        self.fn = fn

    async def reconcile(self, request: Request) -> Result:
        result = await self.fn(request)
        return Result() if result is None else result

    def __repr__(self) -> str:
        return f"reconciler({getattr(self.fn, '__qualname__', self.fn)!r})"


def reconciler(fn: ReconcileFunc) -> Reconciler:
    """Adapt `async def fn(request) -> Result | None` to the `Reconciler` protocol."""
    return FunctionReconciler(fn)
