"""Waiting for an informer to reach a resourceVersion (read-your-own-writes).

A waiter is (stream, key, resourceVersion, future); the informer calls `check(stream,
reached)` whenever that namespace stream makes progress (an event, a bookmark, a LIST), and
every waiter of the stream whose condition now holds is resolved. Waiters are few (one per
own write a worker is catching up on), so checking all of a stream's waiters on its progress
is cheap; with no waiters the informer's hot path pays one truth test.

Invariants: resourceVersions are compared as integers (the API server's are; an opaque one
only matches itself); a future is resolved at most once and removed by its waiter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class NotWatched(LookupError):
    """No informer covers that kind or key: there is nothing to wait for."""


def rv_at_least(have: str | None, want: str) -> bool:
    """True when resourceVersion `have` is `want` or newer."""
    if have is None:
        return False
    try:
        return int(have) >= int(want)
    except ValueError:
        return have == want


Reached = Callable[[str | None, str, str | None], bool]
_Waiter = tuple[str, str | None, asyncio.Future[None]]


class VersionWaiters:
    """Futures waiting for keys of one informer to catch up, grouped by namespace stream."""

    __slots__ = ("_by_stream",)

    def __init__(self) -> None:
        self._by_stream: dict[str | None, list[_Waiter]] = {}

    def __bool__(self) -> bool:
        return bool(self._by_stream)

    def add(self, stream: str | None, key: str, rv: str | None) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._by_stream.setdefault(stream, []).append((key, rv, fut))
        return fut

    def discard(self, stream: str | None, fut: asyncio.Future[None]) -> None:
        waiting = self._by_stream.get(stream)
        if waiting is None:
            return
        waiting[:] = [w for w in waiting if w[2] is not fut]
        if not waiting:
            del self._by_stream[stream]

    def check(self, stream: str | None, reached: Reached) -> None:
        """Resolve the waiters of `stream` for which `reached(stream, key, rv)` holds."""
        for key, rv, fut in self._by_stream.get(stream, ()):
            if not fut.done() and reached(stream, key, rv):
                fut.set_result(None)
