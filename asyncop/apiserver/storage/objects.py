"""Stored objects as values: copying them and seeing them through a served version.

Leaf of the storage package (the Writer, the views and the HTTP handlers all use it; it
imports nothing of theirs). Invariant: neither function mutates its argument; `as_version`
shares nested dicts with the stored object (callers copy before they change anything).
"""

from __future__ import annotations

from typing import Any

import orjson

from asyncop.apiserver.core import eventsv1
from asyncop.apiserver.core.resources import ResourceType


def copy_obj(obj: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = orjson.loads(orjson.dumps(obj))
    return copied


def as_version(obj: dict[str, Any], rt: ResourceType) -> dict[str, Any]:
    """The object as seen through `rt`'s version (shallow: shares nested dicts)."""
    api_version = rt.api_version
    if obj.get("apiVersion") == api_version:
        return obj
    if rt.storage_group is not None and eventsv1.is_events_v1(rt):
        return eventsv1.from_core(obj)
    return {**obj, "apiVersion": api_version}


__all__ = ["as_version", "copy_obj"]
