"""Writing a custom resource's status through the status subresource.

Invariants: the write carries the resourceVersion of the object it was computed from
(optimistic concurrency: a stale write fails with Conflict instead of clobbering a newer
status); an unchanged status is not written at all, so a reconcile that changes nothing
writes nothing and cannot feed itself a watch event. A stale write raises `Conflict`, which
the Controller retries with backoff on fresh data (logged at info, without a traceback).
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import structlog

from asyncop.api import Kind, RawObject

log = structlog.get_logger("asyncop.controllers")


class StatusClient(Protocol):
    async def update_status(self, kind: Kind, obj: RawObject) -> RawObject: ...


async def write_status(
    client: StatusClient, kind: Kind, obj: RawObject, status: dict[str, Any]
) -> RawObject | None:
    """PUT `status` on `obj` (as read) and return the stored object, or None if unchanged.

    Raises `Conflict` when `obj` is stale: the caller's next reconcile sees the newer one.
    """
    if obj.get("status") == status:
        return None
    # A shallow copy: the body is only serialized, and the cached object stays untouched.
    body = cast(RawObject, {**obj, "status": status})
    return await client.update_status(kind, body)
