"""Fault injection for tests: fail or delay selected requests, cut watches, expire history.

Rules match on the kube verb (get, list, watch, create, update, patch, delete,
deletecollection) and on the request path (a substring, or a regular expression when the
pattern compiles and is not found as a substring). Each rule fires `count` times (None =
forever), in the order added. Invariant: a failure is always a proper Status body with the
requested code (429 and 503 also carry a Retry-After header when asked); delays run on the
server's clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asyncop.api import status_body

if TYPE_CHECKING:
    from asyncop.apiserver.storage.store import Store


@dataclass(slots=True)
class _Rule:
    verb: str | None
    path: str | None
    count: int | None
    status: int = 500
    retry_after: int | None = None
    reason: str | None = None
    message: str | None = None
    seconds: float = 0.0

    def matches(self, verb: str, path: str) -> bool:
        if self.count is not None and self.count <= 0:
            return False
        if self.verb is not None and self.verb != verb:
            return False
        if self.path is not None and self.path not in path:
            try:
                if re.search(self.path, path) is None:
                    return False
            except re.error:
                return False
        return True

    def consume(self) -> None:
        if self.count is not None:
            self.count -= 1


@dataclass(frozen=True, slots=True)
class Failure:
    """What the server answers instead of handling the request."""

    status: int
    body: dict[str, Any]
    retry_after: int | None


class Faults:
    """The fault rules of one ApiServer (`server.faults`)."""

    def __init__(self) -> None:
        self._failures: list[_Rule] = []
        self._delays: list[_Rule] = []
        self._store: Store | None = None
        self.injected = 0

    def attach(self, store: Store) -> None:
        self._store = store

    def fail(self, *, verb: str | None = None, path: str | None = None, status: int = 500,
             count: int | None = 1, retry_after: int | None = None,
             reason: str | None = None, message: str | None = None) -> None:
        self._failures.append(_Rule(verb, path, count, status, retry_after, reason, message))

    def delay(self, *, verb: str | None = None, path: str | None = None, seconds: float,
              count: int | None = 1) -> None:
        self._delays.append(_Rule(verb, path, count, seconds=seconds))

    def cut_watches(self) -> int:
        """Close every open watch stream (clients see a clean end of stream)."""
        return self._store.hub.cut() if self._store is not None else 0

    def expire_history(self) -> None:
        """Compact: the next watch/list from any earlier resourceVersion gets 410 Expired."""
        if self._store is not None:
            self._store.expire_history()

    def clear(self) -> None:
        self._failures.clear()
        self._delays.clear()

    # --- used by the HTTP layer ----------------------------------------------------------------

    def delay_for(self, verb: str, path: str) -> float:
        total = 0.0
        for rule in self._delays:
            if rule.matches(verb, path):
                rule.consume()
                total += rule.seconds
        return total

    def failure_for(self, verb: str, path: str) -> Failure | None:
        for rule in self._failures:
            if rule.matches(verb, path):
                rule.consume()
                self.injected += 1
                code = rule.status
                message = rule.message or {
                    429: "Too many requests, please try again later.",
                    503: "the server is currently unable to handle the request",
                }.get(code, f"injected fault ({code})")
                if code >= 500 and rule.message is None and code not in (503, 504):
                    message = f"Internal error occurred: {message}"
                body = status_body(code, message, reason=rule.reason,
                                   retry_after_seconds=rule.retry_after)
                return Failure(code, body, rule.retry_after)
        return None
