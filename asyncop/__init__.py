"""asyncop: an asyncio toolkit for Kubernetes operators, with an embedded API server.

Only the public names are exported here; see README.md for the reading order.
"""

from asyncop.api import (
    AlreadyExists,
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    Kind,
    NotFound,
    RawObject,
    Request,
    ServerError,
    TooManyRequests,
)
from asyncop.clock import Clock, RealClock

__version__ = "0.1.0"

__all__ = [
    "AlreadyExists",
    "ApiError",
    "Clock",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "Kind",
    "NotFound",
    "RawObject",
    "RealClock",
    "Request",
    "ServerError",
    "TooManyRequests",
    "__version__",
]
