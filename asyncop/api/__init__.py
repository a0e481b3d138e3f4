"""Pure data shared by every layer: raw object types, kinds, requests, owner references, errors.

Invariant: nothing in this package performs I/O or imports another asyncop package.
"""

from asyncop.api.errors import (
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
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
    error_from_status,
)
from asyncop.api.kinds import Kind, KindSource, kind_of
from asyncop.api.objects import ObjectMeta, OwnerReference, RawObject, deep_copy, object_key
from asyncop.api.owners import controller_of, is_controlled_by, owner_reference
from asyncop.api.request import Request
from asyncop.api.status import StatusCause, status_body

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "Kind",
    "KindSource",
    "MethodNotAllowed",
    "NotFound",
    "ObjectMeta",
    "OwnerReference",
    "RawObject",
    "Request",
    "ServerError",
    "StatusCause",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "controller_of",
    "deep_copy",
    "error_from_status",
    "is_controlled_by",
    "kind_of",
    "object_key",
    "owner_reference",
    "status_body",
]
