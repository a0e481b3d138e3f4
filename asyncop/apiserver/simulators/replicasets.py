"""ReplicaSetSimulator: keeps `spec.replicas` pods per ReplicaSet and reports its status.

Every ReplicaSet (owned by a Deployment or bare) gets pods named `<rs>-<5 chars>`
(`generateName`), labelled and specified from its template and controller-owned by it; extra
pods are deleted unscheduled first, then Pending, then not Ready, newest first. Status:
replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (pods Ready for at least
`minReadySeconds` of clock time), observedGeneration. Orphan pods matching the selector are
not adopted.

Pods are counted from an in-memory index fed by store events, with per-ReplicaSet counters
(active, ready, fully labelled) kept up to date on every change, so a sync costs O(1) unless
pods must be created or deleted (a pod list per sync would be O(n^2) for one big ReplicaSet).
Invariants that keep the index honest: pods this simulator creates or deletes are recorded at
once from the write's answer; an event older (by resourceVersion) than what the index holds is
ignored, so a late event never resurrects a pod; a resync rebuilds the index from a list and
ignores events up to the store's resourceVersion at that moment. Set-up and the owner read:
`OwnerSimulator` (workload.py); pod events go to the index instead of its observe().
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from asyncop.api import NotFound
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    as_int,
    deleting,
    name_of,
    ns_of,
    rv_of,
    uid_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.apiserver.simulators.workload import OwnerSimulator, pod_from_template, pod_ready
from asyncop.clock import Clock, Timer

PodKey = tuple[str, str]


@dataclass(slots=True)
class PodInfo:
    rs_uid: str
    rv: int
    active: bool
    ready: bool
    labels: dict[str, str]
    rank: int  # deletion preference: lower goes first
    created: str
    gone: bool = False  # deleted by us; the DELETED event has not been seen yet
    ready_at: float = 0.0  # clock.monotonic() when it was seen becoming Ready


def pod_info(pod: Obj, rs_uid: str) -> PodInfo:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ready = pod_ready(pod)
    if not spec.get("nodeName"):
        rank = 0
    elif status.get("phase") == "Pending":
        rank = 1
    else:
        rank = 3 if ready else 2
    return PodInfo(
        rs_uid=rs_uid, rv=rv_of(pod), ready=ready, rank=rank,
        active=not deleting(pod) and status.get("phase") not in ("Succeeded", "Failed"),
        labels=dict(pod.get("metadata", {}).get("labels") or {}),
        created=str(pod.get("metadata", {}).get("creationTimestamp") or ""),
    )


def _rs_uid(pod: Obj) -> str | None:
    for ref in pod.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == "ReplicaSet":
            return str(ref.get("uid"))
    return None


class ReplicaSetSimulator(OwnerSimulator):
    name = "replicasets"
    owner_kind = "ReplicaSet"
    owner = ("apps", "v1", "replicasets")
    child = ("", "v1", "pods")

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, config)
        self._pods: dict[PodKey, PodInfo] = {}
        self._by_rs: dict[str, set[PodKey]] = {}
        self._counts: dict[str, list[int]] = {}  # rs uid -> [active, ready, fully labelled]
        self._rs_labels: dict[str, dict[str, str]] = {}  # rs uid -> template labels
        self._avail_timers: dict[str, Timer] = {}  # rs uid -> wake-up for minReadySeconds
        self._watermark = 0

    # the pod index ------------------------------------------------------------------------
    def _count(self, info: PodInfo, sign: int) -> None:
        if not info.active or info.gone:
            return
        counts = self._counts.setdefault(info.rs_uid, [0, 0, 0])
        counts[0] += sign
        counts[1] += sign if info.ready else 0
        labels = self._rs_labels.get(info.rs_uid)
        counts[2] += sign if labels is None or labels.items() <= info.labels.items() else 0

    def _put(self, key: PodKey, info: PodInfo | None) -> None:
        old = self._pods.pop(key, None)
        if old is not None:
            self._count(old, -1)
            members = self._by_rs.get(old.rs_uid)
            if members is not None:
                members.discard(key)
                if not members:
                    del self._by_rs[old.rs_uid]
                    self._counts.pop(old.rs_uid, None)
                    self._rs_labels.pop(old.rs_uid, None)
        if info is not None:
            self._pods[key] = info
            self._by_rs.setdefault(info.rs_uid, set()).add(key)
            self._count(info, +1)

    def _mark_gone(self, key: PodKey) -> None:
        info = self._pods.get(key)
        if info is not None and not info.gone:
            self._count(info, -1)
            info.gone = True

    def _set_labels(self, rs_uid: str, labels: dict[str, str]) -> None:
        """Remember the template labels; recount fully-labelled pods if they changed."""
        if self._rs_labels.get(rs_uid) == labels:
            return
        self._rs_labels[rs_uid] = dict(labels)
        counts = self._counts.get(rs_uid)
        if counts is not None:
            counts[2] = sum(1 for k in self._active(rs_uid)
                            if labels.items() <= self._pods[k].labels.items())

    def _record(self, pod: Obj, *, listed: bool = False) -> None:
        key = (ns_of(pod), name_of(pod))
        uid = _rs_uid(pod)
        cur = self._pods.get(key)
        if cur is not None and (cur.gone or cur.rv >= rv_of(pod)):
            return
        info = pod_info(pod, uid) if uid else None
        if info is not None and info.ready:
            if cur is not None and cur.ready:
                info.ready_at = cur.ready_at
            else:
                info.ready_at = self._ready_since(pod) if listed else self.clock.monotonic()
        self._put(key, info)

    def _ready_since(self, pod: Obj) -> float:
        """For a listed pod: when it became Ready, from its condition (second precision)."""
        now = self.clock.monotonic()
        for cond in (pod.get("status") or {}).get("conditions") or ():
            if cond.get("type") == "Ready" and cond.get("lastTransitionTime"):
                try:
                    when = datetime.strptime(str(cond["lastTransitionTime"]),
                                             "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
                except ValueError:
                    return now
                return now - max((self.clock.now() - when).total_seconds(), 0.0)
        return now

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        if rt.gr == self.child_rt.gr and rv_of(obj) > self._watermark:
            if event == "DELETED":
                self._put((ns_of(obj), name_of(obj)), None)
            else:
                self._record(obj)
        super().observe(event, rt, obj)

    async def resync(self) -> None:
        self._watermark = self.store.resource_version
        self._pods.clear()
        self._by_rs.clear()
        self._counts.clear()
        self._rs_labels.clear()
        for pod in self.store.list(self.child_rt):
            self._record(pod, listed=True)
        await super().resync()

    # reconcile ----------------------------------------------------------------------------
    async def sync(self, key: PodKey) -> None:
        ns = key[0]
        rs = self.live_owner(key)
        if rs is None:
            return
        uid = uid_of(rs)
        spec = rs.get("spec") or {}
        self._set_labels(uid, ((spec.get("template") or {}).get("metadata") or {})
                         .get("labels") or {})
        want = as_int(spec.get("replicas"), 1)
        have = self._counts.get(uid, [0, 0, 0])[0]
        if have < want:
            for _ in range(want - have):
                self._record(await self.store.create(self.child_rt, self._new_pod(rs),
                                                     namespace=ns))
        elif have > want:
            active = self._active(uid)
            newest = sorted(active, key=lambda k: self._pods[k].created, reverse=True)
            for pod_key in sorted(newest, key=lambda k: self._pods[k].rank)[: have - want]:
                try:
                    await self.store.delete(self.child_rt, ns, pod_key[1])
                except NotFound:
                    pass
                self._mark_gone(pod_key)
        await self._write_status(rs)

    def _active(self, rs_uid: str) -> list[PodKey]:
        return [k for k in self._by_rs.get(rs_uid, ())
                if self._pods[k].active and not self._pods[k].gone]

    def _available(self, rs: Obj, ready: int) -> int:
        """Ready pods that have been Ready for minReadySeconds; wakes the RS when one will be."""
        uid = uid_of(rs)
        min_ready = as_int((rs.get("spec") or {}).get("minReadySeconds"), 0)
        timer = self._avail_timers.pop(uid, None)
        if timer is not None:
            timer.cancel()
        if min_ready <= 0:
            return ready
        now = self.clock.monotonic()
        since = [self._pods[k].ready_at for k in self._active(uid) if self._pods[k].ready]
        waiting = [t + min_ready for t in since if t + min_ready > now]
        if waiting:
            key = (ns_of(rs), name_of(rs))
            self._avail_timers[uid] = self.clock.call_at(min(waiting), lambda: self.add(key))
        return len(since) - len(waiting)

    async def _write_status(self, rs: Obj) -> None:
        active, ready, labelled = self._counts.get(uid_of(rs), [0, 0, 0])
        status = dict(rs.get("status") or {})
        status.update({
            "replicas": active,
            "fullyLabeledReplicas": labelled,
            "readyReplicas": ready,
            "availableReplicas": self._available(rs, ready),
            "observedGeneration": as_int(rs["metadata"].get("generation"), 1),
        })
        await self.write_status(rs, status)

    def _new_pod(self, rs: Obj) -> Obj:
        return pod_from_template(rs, api_version="apps/v1", kind="ReplicaSet", extra_labels={})
