"""Event assertions: the Events an object got, found by reason, type and message.

An operator's `EventRecorder` posts core/v1 Events in the background (after the reconcile
that recorded them returns), and aggregates a repeat into one Event with a `count`. So a test
asks the API server, and waits:

```python
await expect_event(mgr.client, memcached, reason="Created", message="Deployment cache")
warnings = await events_about(mgr.client, memcached, type="Warning")
```

`events_about` lists, once, the Events about an object (its `involvedObject` has the object's
uid; an object without one — built locally, never stored — is matched by kind, namespace and
name) that match every filter given: `reason` and `type` exactly, `message` as a substring or
a compiled regular expression (searched). `expect_event` waits (real time, `timeout`) until at
least one matches — or, with `count=N`, until the matching Events' counts add up to exactly N
— and returns them; when the time is up it fails with an AssertionError naming what it looked
for and listing every Event the object did get.

Invariants: nothing here writes; Events are read from the object's namespace (`default` for
a cluster-scoped object, where the recorder posts them); an Event without `count` counts 1.
"""

from __future__ import annotations

import re
from typing import Any, Literal, cast

from asyncop.api import RawObject
from asyncop.api.kinds import EVENT
from asyncop.client import Client
from asyncop.crd.resource import TypedView
from asyncop.testing.wait import eventually

__all__ = ["events_about", "expect_event"]

EventType = Literal["Normal", "Warning"]


def _raw(obj: RawObject | TypedView) -> RawObject:
    return obj.raw if isinstance(obj, TypedView) else obj


def _is_about(event: RawObject, obj: RawObject) -> bool:
    involved: dict[str, Any] = cast(dict[str, Any], event).get("involvedObject") or {}
    meta = obj.get("metadata") or {}
    uid = meta.get("uid")
    if uid:
        return bool(involved.get("uid") == uid)
    return bool(involved.get("kind") == obj.get("kind") and involved.get("name") == meta.get("name")
                and (involved.get("namespace") or "") == (meta.get("namespace") or ""))


def _matches(event: RawObject, reason: str | None, type_: str | None,
             message: str | re.Pattern[str] | None) -> bool:
    if reason is not None and event.get("reason") != reason:
        return False
    if type_ is not None and event.get("type") != type_:
        return False
    text = str(event.get("message") or "")
    if isinstance(message, re.Pattern):
        return message.search(text) is not None
    return message is None or message in text


def _count(event: RawObject) -> int:
    count = event.get("count")
    return count if isinstance(count, int) and count > 0 else 1


async def _about(client: Client, obj: RawObject) -> list[RawObject]:
    namespace = (obj.get("metadata") or {}).get("namespace") or "default"
    items: list[RawObject] = (await client.list(EVENT, namespace=namespace))["items"]
    about = [e for e in items if _is_about(e, obj)]
    return sorted(about, key=lambda e: (str(e.get("firstTimestamp") or ""),
                                        str((e.get("metadata") or {}).get("name") or "")))


async def events_about(
    client: Client,
    obj: RawObject | TypedView,
    *,
    reason: str | None = None,
    type: EventType | None = None,
    message: str | re.Pattern[str] | None = None,
) -> list[RawObject]:
    """The Events about `obj` now (oldest first) that match every filter given."""
    return [e for e in await _about(client, _raw(obj)) if _matches(e, reason, type, message)]


def _describe(obj: RawObject) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind') or 'object'} {where}{meta.get('name') or '?'}"


def _line(event: RawObject) -> str:
    return (f"{event.get('type')} {event.get('reason')}: {event.get('message')!r} "
            f"(x{_count(event)})")


async def expect_event(
    client: Client,
    obj: RawObject | TypedView,
    *,
    reason: str | None = None,
    type: EventType | None = None,
    message: str | re.Pattern[str] | None = None,
    count: int | None = None,
    timeout: float = 10.0,
) -> list[RawObject]:
    """Wait until `obj` has an Event matching every filter given (with `count`: until the
    matching Events' counts add up to exactly `count`); return the matching Events.

    Fails with an AssertionError listing the Events `obj` got when `timeout` (real seconds)
    passes first."""
    raw = _raw(obj)
    seen: list[RawObject] = []

    async def found() -> list[RawObject]:
        seen[:] = await _about(client, raw)
        hits = [e for e in seen if _matches(e, reason, type, message)]
        if count is None:
            return hits
        return hits if sum(_count(e) for e in hits) == count else []

    try:
        return await eventually(found, timeout=timeout, interval=0.02)
    except AssertionError:
        pass
    wanted = ", ".join(f"{name}={value!r}" for name, value in (
        ("reason", reason), ("type", type),
        ("message", message.pattern if isinstance(message, re.Pattern) else message),
        ("count", count)) if value is not None)
    got = "; ".join(_line(e) for e in seen) or "none"
    raise AssertionError(f"no Event about {_describe(raw)} with {wanted or 'any fields'} "
                         f"within {timeout:g}s; it got: {got}")
