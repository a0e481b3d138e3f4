"""What the workload controllers share: `OwnerSimulator` and the pod-template helpers.

`OwnerSimulator` is the common skeleton of the Deployment, ReplicaSet, StatefulSet, DaemonSet,
Job and CronJob simulators: keyed by an owner object's (namespace, name), it resolves the
owner's and the child's resource types, marks the owner dirty on its own events and on events
of the children it controls (by controller ownerReference), calls `forget()` when an owner is
deleted, resyncs by listing the owners, and `live_owner()` reads an owner back for `sync`
(None once it is gone or being deleted, so a deleted owner is left to the garbage collector);
`write_status()` writes an owner's status only when it changed.

Invariant: the helpers are pure functions over raw dicts; a pod built from a template is a
fresh deep copy, controller-owned by its workload and carries the template's labels plus the
given extras.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    Simulator,
    controller_ref_name,
    controller_uid,
    deleting,
    name_of,
    ns_of,
    owner_ref,
    uid_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.clock import Clock

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: dict[str, Any]) -> str:
    """10 chars of `bcdfghjklmnpqrstvwxz2456789`, stable for equal templates."""
    digest = hashlib.sha256(orjson.dumps(template, option=orjson.OPT_SORT_KEYS)).digest()
    n = int.from_bytes(digest[:8], "big")
    out = []
    for _ in range(10):
        n, r = divmod(n, len(_ALPHABET))
        out.append(_ALPHABET[r])
    return "".join(out)


def pod_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def pod_active(pod: Obj) -> bool:
    """Not being deleted and not terminated."""
    return not deleting(pod) and (pod.get("status") or {}).get("phase") not in (
        "Succeeded", "Failed")


def pod_from_template(owner: Obj, *, api_version: str, kind: str,
                      extra_labels: dict[str, str], name: str | None = None,
                      generate_name: str | None = None) -> Obj:
    template: dict[str, Any] = orjson.loads(
        orjson.dumps((owner.get("spec") or {}).get("template") or {}))
    tmeta = template.get("metadata") or {}
    metadata: dict[str, Any] = {
        "namespace": ns_of(owner),
        "labels": {**(tmeta.get("labels") or {}), **extra_labels},
        "ownerReferences": [owner_ref(owner, api_version, kind)],
    }
    if name:
        metadata["name"] = name
    else:
        metadata["generateName"] = generate_name or f"{name_of(owner)}-"
    if tmeta.get("annotations"):
        metadata["annotations"] = dict(tmeta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": template.get("spec") or {}}


def owned_pods(store: SimStore, pod_rt: ResourceType, owner: Obj) -> list[Obj]:
    """Pods controlled by `owner` (pre-filtered by its selector's matchLabels)."""
    selector = ((owner.get("spec") or {}).get("selector") or {}).get("matchLabels") or None
    uid = uid_of(owner)
    return [p for p in store.list(pod_rt, ns_of(owner), label_selector=selector)
            if controller_uid(p) == uid]


class OwnerSimulator(Simulator[tuple[str, str]]):
    """A simulator of one owner kind (`owner_kind`, resource `owner`) and its `child` objects.

    Subclasses set the class attributes; `owner` and `child` are (group, version, plural),
    and `watched` follows from them.
    """

    owner_kind = ""
    owner: tuple[str, str, str] = ("", "", "")
    child: tuple[str, str, str] = ("", "", "")

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.watched = frozenset({(cls.owner[0], cls.owner[2]), (cls.child[0], cls.child[2])})

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, retry_delay=config.retry_delay,
                         resync_period=config.resync_period)
        self.owner_rt: ResourceType = store.resolve(*self.owner)
        self.child_rt: ResourceType = store.resolve(*self.child)

    def forget(self, owner: Obj) -> None:
        """Drop what is kept in memory for a deleted owner (timers, progress)."""

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        if rt.gr == self.owner_rt.gr:
            if event == "DELETED":
                self.forget(obj)
            else:
                self.add((ns_of(obj), name_of(obj)))
        elif rt.gr == self.child_rt.gr:
            owner = controller_ref_name(obj, self.owner_kind)
            if owner:
                self.add((ns_of(obj), owner))

    async def resync(self) -> None:
        for obj in self.store.list(self.owner_rt):
            self.add((ns_of(obj), name_of(obj)))

    def live_owner(self, key: tuple[str, str]) -> Obj | None:
        """The owner behind `key`, or None when it is gone or being deleted."""
        obj = self.store.get(self.owner_rt, *key)
        return None if obj is None or deleting(obj) else obj

    async def write_status(self, owner: Obj, status: dict[str, Any]) -> Obj:
        """Store `status` on `owner` unless it is already what is stored; the owner after."""
        if status == (owner.get("status") or {}):
            return owner
        owner["status"] = status
        return await self.store.update_status(self.owner_rt, owner)
