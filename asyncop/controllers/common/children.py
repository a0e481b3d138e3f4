"""Owned children: build, ensure, scale a child of a fixed name, and remove the renamed ones.

The steps foo and crdkind share. `owned_deployment` is the Deployment body both want (one
container, the labels doubling as selector and pod labels, controller-owned by the owner).
`ensure_child` reads the child from the cache, creates it from `desired` when missing (an
AlreadyExists means the cache lags: the stored object is read back from the server) and says
whether `owner` controls what is there. `ensure_replicas` fixes replica drift of a child.
`delete_renamed` deletes, with background propagation, every child of the given kinds that
`owner` controls (found through the cache's `owner_uid` index) under a name other than `keep`.

Invariants: an object the owner does not control is never modified or deleted (the caller
reports it); a child being deleted is left alone; a NotFound on delete counts as done.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import structlog

from asyncop.api import (
    AlreadyExists,
    Kind,
    NotFound,
    RawObject,
    deep_copy,
    is_controlled_by,
    owner_reference,
)
from asyncop.client import Client
from asyncop.runtime.cache import Cache

log = structlog.get_logger("asyncop.controllers")


@dataclass(frozen=True, slots=True)
class Child:
    """What `ensure_child` found: the object, whether it was created now, whether it is ours."""

    obj: RawObject
    created: bool
    controlled: bool


async def ensure_child(
    client: Client, cache: Cache, kind: Kind, desired: RawObject, *, owner: RawObject
) -> Child:
    """The child named like `desired` in the owner's namespace, created if missing."""
    ns, name = owner["metadata"]["namespace"], desired["metadata"]["name"]
    obj = cache.get(kind, name, ns)
    if obj is None:
        try:
            obj = await client.create(kind, desired, namespace=ns)
            return Child(obj=obj, created=True, controlled=True)
        except AlreadyExists:  # the cache lags: look at what is there
            obj = await client.get(kind, name, namespace=ns)
    return Child(obj=obj, created=False, controlled=is_controlled_by(obj, owner))


async def delete_renamed(
    client: Client, cache: Cache, kinds: Iterable[Kind], *, owner: RawObject, keep: str
) -> bool:
    """Delete the children `owner` controls under a name other than `keep`; True if any."""
    deleted = False
    uid = owner["metadata"]["uid"]
    for kind in kinds:
        for obj in cache.by_index(kind, "owner_uid", uid):
            meta = obj["metadata"]
            if (meta["name"] == keep or meta.get("deletionTimestamp")
                    or not is_controlled_by(obj, owner)):
                continue
            try:
                await client.delete(kind, meta["name"], namespace=meta["namespace"],
                                    propagation_policy="Background")
                log.info("child deleted", kind=kind.kind, name=meta["name"])
            except NotFound:
                pass
            deleted = True
    return deleted


def owned_deployment(owner: RawObject, name: str, *, labels: dict[str, str], replicas: int,
                     container: dict[str, Any]) -> RawObject:
    """A Deployment `name` in the owner's namespace, controlled by `owner`, running `container`
    in `replicas` pods labelled (and selected) by `labels`."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"]["namespace"],
            "labels": dict(labels),
            "ownerReferences": [owner_reference(owner)],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [container]},
            },
        },
    }


async def ensure_replicas(client: Client, kind: Kind, obj: RawObject, replicas: int
                          ) -> RawObject | None:
    """Set `spec.replicas` of `obj` to `replicas`: the updated object, or None if it was."""
    if (obj.get("spec") or {}).get("replicas") == replicas:
        return None
    body = deep_copy(obj)
    body["spec"]["replicas"] = replicas
    return await client.update(kind, body)
