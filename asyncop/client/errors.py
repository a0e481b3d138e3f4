"""Failures below HTTP: the request never got an answer (connection, TLS, timeout).

Answers from the server are raised as the `asyncop.api.ApiError` tree instead. Invariant:
the original aiohttp/OS exception is always chained as `__cause__`.
"""

from __future__ import annotations


class TransportError(ConnectionError):
    """No HTTP answer: connection refused or reset, TLS failure, broken stream."""


class RequestTimeout(TransportError, TimeoutError):
    """The request (or a watch stream's read) took longer than its timeout."""
