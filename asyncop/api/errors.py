"""The ApiError tree: one exception class per Kubernetes failure, built from Status bodies.

Invariant: every error carries the HTTP code, the Status `reason`, the message and the whole
Status object (or a synthesized one when the server sent none); `error_from_status` picks the
most specific class by reason first, then by code.
"""

from __future__ import annotations

from typing import Any

from asyncop.api.status import StatusCause, status_body


class ApiError(Exception):
    """A non-2xx answer from the API server."""

    code: int = 0

    def __init__(self, status: dict[str, Any], *, retry_after: float | None = None) -> None:
        self.status = status
        self.code = int(status.get("code") or type(self).code)
        self.reason: str = str(status.get("reason", ""))
        self.message: str = str(status.get("message", ""))
        self.retry_after = retry_after
        super().__init__(f"{self.code} {self.reason}: {self.message}")

    @property
    def causes(self) -> list[StatusCause]:
        details = self.status.get("details") or {}
        causes: list[StatusCause] = details.get("causes") or []
        return causes


class BadRequest(ApiError):
    code = 400


class Unauthorized(ApiError):
    code = 401


class Forbidden(ApiError):
    code = 403


class NotFound(ApiError):
    code = 404


class MethodNotAllowed(ApiError):
    code = 405


class Conflict(ApiError):
    """409 on a stale resourceVersion (reason Conflict)."""

    code = 409


class AlreadyExists(Conflict):
    """409 on create of an existing name (reason AlreadyExists)."""


class Gone(ApiError):
    """410: the requested resourceVersion is too old (reason Expired or Gone)."""

    code = 410


class UnsupportedMediaType(ApiError):
    code = 415


class Invalid(ApiError):
    """422: the object failed validation; `causes` name the fields."""

    code = 422


class TooManyRequests(ApiError):
    code = 429


class ServerError(ApiError):
    """Any 5xx."""

    code = 500


_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    410: Gone,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
}


def error_from_status(
    code: int, body: dict[str, Any] | None = None, *, retry_after: float | None = None
) -> ApiError:
    """Map an HTTP code and (possibly missing or non-Status) body to the right ApiError."""
    if not body or body.get("kind") != "Status":
        text = str(body.get("message", "")) if body else ""
        body = status_body(code, text or f"the server answered HTTP {code}")
    body.setdefault("code", code)
    if body.get("reason") == "AlreadyExists":
        return AlreadyExists(body, retry_after=retry_after)
    if code >= 500:
        return ServerError(body, retry_after=retry_after)
    cls = _BY_CODE.get(code, ApiError)
    return cls(body, retry_after=retry_after)
