"""Writing a custom resource's status through the status subresource.

Invariants: the write carries the resourceVersion of the object it was computed from
(optimistic concurrency: a stale write fails with Conflict instead of clobbering a newer
status); an unchanged status is not written at all, so a reconcile that changes nothing
writes nothing and cannot feed itself a watch event. A stale read is not an error:
`unless_stale` ends the reconcile and lets the newer version's event bring it back.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

import structlog

from asyncop.api import AlreadyExists, Conflict, Kind, RawObject, Request, deep_copy
from asyncop.runtime.reconcile import Result

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
    body = deep_copy(obj)
    body["status"] = status
    return await client.update_status(kind, body)


async def unless_stale(req: Request, body: Awaitable[Result]) -> Result:
    """Run a reconcile body; a Conflict (stale read) ends it quietly with `Result()`.

    Sound because a Conflict proves the server holds a newer version than the one read:
    its watch event is on the way (or already arrived while we worked, which re-queues the
    key), so the key is reconciled again on fresh data without a retry or a backoff.
    AlreadyExists (a Conflict subclass) is not a stale read and propagates.
    """
    try:
        return await body
    except AlreadyExists:
        raise
    except Conflict as exc:
        log.info("stale read, waiting for the newer version", key=req.key, error=exc.message)
        return Result()
