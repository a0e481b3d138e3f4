"""Kubernetes `Status` bodies (metav1.Status), as the API server returns them for every error.

Invariant: `status_body` always produces `kind: Status, apiVersion: v1, status: Failure` with the
reason Kubernetes uses for the code unless a reason is given.
"""

from __future__ import annotations

from typing import Any, TypedDict

REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class StatusCause(TypedDict, total=False):
    reason: str  # e.g. FieldValueInvalid, FieldValueRequired, FieldValueNotSupported
    message: str
    field: str


def status_body(
    code: int,
    message: str,
    *,
    reason: str | None = None,
    name: str | None = None,
    group: str | None = None,
    kind: str | None = None,
    causes: list[StatusCause] | None = None,
    retry_after_seconds: int | None = None,
) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name is not None:
        details["name"] = name
    if group is not None:
        details["group"] = group
    if kind is not None:
        details["kind"] = kind
    if causes:
        details["causes"] = list(causes)
    if retry_after_seconds is not None:
        details["retryAfterSeconds"] = retry_after_seconds
    # kube-apiserver's field order (the Go struct's): kind, apiVersion, metadata, status,
    # message, reason, details, code — clients' tests compare whole bodies.
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or REASONS.get(code, "Unknown" if code < 500 else "InternalError"),
    }
    if details:
        body["details"] = details
    body["code"] = code
    return body
