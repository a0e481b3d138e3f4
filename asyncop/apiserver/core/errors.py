"""Kubernetes error constructors with the exact wire messages real clients match on.

Every failure the embedded server reports is an `ApiError` carrying a metav1.Status body built
by `asyncop.api.status_body`; this module only knows the message formats (docs/apiserver.md,
"Status errors"). Invariant: `details.kind` is the resource plural for NotFound,
AlreadyExists and Conflict, and the Kind for Invalid, as the real server does.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    MethodNotAllowed,
    NotFound,
    ServerError,
    StatusCause,
    UnsupportedMediaType,
    status_body,
)
from asyncop.apiserver.core.resources import ResourceType


def qualified_resource(rt: ResourceType) -> str:
    """`configmaps` for core, `widgets.example.com` for other groups."""
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


def qualified_kind(rt: ResourceType) -> str:
    return f"{rt.kind}.{rt.group}" if rt.group else rt.kind


def _group(rt: ResourceType) -> str | None:
    return rt.group or None


def not_found(rt: ResourceType, name: str) -> ApiError:
    return NotFound(
        status_body(
            404, f'{qualified_resource(rt)} "{name}" not found',
            name=name, group=_group(rt), kind=rt.plural,
        )
    )


def path_not_found() -> ApiError:
    return NotFound(status_body(404, "the server could not find the requested resource"))


def namespace_not_found(name: str) -> ApiError:
    return NotFound(
        status_body(404, f'namespaces "{name}" not found', name=name, kind="namespaces")
    )


def already_exists(rt: ResourceType, name: str, *, deleting: bool = False) -> ApiError:
    prefix = "object is being deleted: " if deleting else ""
    return AlreadyExists(
        status_body(
            409, f'{prefix}{qualified_resource(rt)} "{name}" already exists',
            reason="AlreadyExists", name=name, group=_group(rt), kind=rt.plural,
        )
    )


def conflict(rt: ResourceType, name: str, detail: str, *, kind_style: bool = False) -> ApiError:
    what = qualified_kind(rt) if kind_style else qualified_resource(rt)
    return Conflict(
        status_body(
            409, f'Operation cannot be fulfilled on {what} "{name}": {detail}',
            reason="Conflict", name=name, group=_group(rt), kind=rt.plural,
        )
    )


STALE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def stale(rt: ResourceType, name: str) -> ApiError:
    return conflict(rt, name, STALE)


def invalid(rt: ResourceType, name: str, causes: list[StatusCause]) -> ApiError:
    """422 Invalid; the message joins the causes once each (apimachinery's ToAggregate drops
    repeated messages), the causes list keeps them all (errors.NewInvalid)."""
    parts = list(dict.fromkeys(
        f"{c.get('field', '')}: {c.get('message', '')}" if c.get("field") else
        str(c.get("message", "")) for c in causes))
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return Invalid(
        status_body(
            422, f'{qualified_kind(rt)} "{name}" is invalid: {text}',
            name=name, group=_group(rt), kind=rt.kind, causes=causes,
        )
    )


def invalid_options(kind: str, causes: list[StatusCause]) -> ApiError:
    """422 for bad query options (ListOptions, PatchOptions, DeleteOptions)."""
    parts = [f"{c.get('field', '')}: {c.get('message', '')}" for c in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return Invalid(
        status_body(
            422, f'{kind}.meta.k8s.io "" is invalid: {text}',
            name="", group="meta.k8s.io", kind=kind, causes=causes,
        )
    )


def cause(field: str, reason: str, message: str) -> StatusCause:
    return {"reason": reason, "message": message, "field": field}


def bad_request(message: str) -> ApiError:
    return BadRequest(status_body(400, message))


def forbidden(rt: ResourceType, name: str, why: str, *,
              causes: list[StatusCause] | None = None) -> ApiError:
    return Forbidden(
        status_body(
            403, f'{qualified_resource(rt)} "{name}" is forbidden: {why}',
            name=name, group=_group(rt), kind=rt.plural, causes=causes,
        )
    )


def method_not_allowed() -> ApiError:
    return MethodNotAllowed(
        status_body(405, "the server does not allow this method on the requested resource")
    )


def unsupported_media_type(accepted: str) -> ApiError:
    return UnsupportedMediaType(
        status_body(
            415,
            "the body of the request was in an unknown format - accepted media types include: "
            + accepted,
        )
    )


def not_acceptable() -> ApiError:
    return ApiError(
        status_body(
            406,
            "only the following media types are accepted: application/json, "
            "application/yaml, application/vnd.kubernetes.protobuf",
        )
    )


def expired(message: str) -> ApiError:
    return Gone(status_body(410, message, reason="Expired"))


def too_large_rv(requested: int, current: int) -> ApiError:
    body = status_body(
        504, f"Timeout: Too large resource version: {requested}, current: {current}",
        reason="Timeout",
        causes=[{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        retry_after_seconds=1,
    )
    return ServerError(body)


def too_large(message: str) -> ApiError:
    """413 RequestEntityTooLarge: `Request entity too large: <message>`."""
    return ApiError(status_body(413, f"Request entity too large: {message}"))


def internal(message: str) -> ApiError:
    body: dict[str, Any] = status_body(
        500, f"Internal error occurred: {message}", causes=[{"message": message}]
    )
    return ServerError(body)


def quote(value: Any) -> str:
    """Render a value as Go's %q/%v would in `Invalid value: …` messages."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
