"""DeploymentSimulator: the Deployment controller of kube-controller-manager (-> ReplicaSets).

A Deployment's pod template hashes to `pod-template-hash` (10 chars of
`bcdfghjklmnpqrstvwxz2456789`); the ReplicaSet `<deploy>-<hash>` (controller-owned, label and
selector extended with the hash, annotation `deployment.kubernetes.io/revision`) is the new
one and is scaled to `spec.replicas` while every other owned ReplicaSet is scaled to 0, step
by step as the real controller does (RollingUpdate within maxSurge/maxUnavailable, Recreate
old-first); old ones beyond `revisionHistoryLimit` are deleted once empty. Status follows
the real controller: observedGeneration, replicas, updatedReplicas, readyReplicas,
availableReplicas, unavailableReplicas (when > 0) and the conditions Available
(MinimumReplicasAvailable) and Progressing (NewReplicaSetAvailable once the new ReplicaSet is
fully available), which is what `kubectl rollout status` and Helm's kstatus wait need. Pods
are the ReplicaSet simulator's business (replicasets.py); the Deployment only reads its
ReplicaSets' status. A rollout that makes no progress (no change in the new ReplicaSet's
counts) for `spec.progressDeadlineSeconds` of clock time gets Progressing False, reason
ProgressDeadlineExceeded, until it progresses again. Not simulated: pausing beyond "no new
ReplicaSet", minReadySeconds. Set-up, event routing and resync: `OwnerSimulator`
(workload.py). Invariant: a Deployment being deleted is left to the garbage collector;
status is written only when it changes.
"""

from __future__ import annotations

from typing import Any

import orjson

from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    as_int,
    controller_uid,
    deleting,
    name_of,
    ns_of,
    owner_ref,
    uid_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.apiserver.simulators.workload import OwnerSimulator, template_hash
from asyncop.clock import Clock, Timer, format_time

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"


def _revision(obj: Obj) -> int:
    raw = (obj.get("metadata", {}).get("annotations") or {}).get(REVISION, "0")
    try:
        return int(raw)
    except ValueError:
        return 0


def _scaled(raw: Any, replicas: int, *, round_up: bool) -> int:
    """An int-or-percent of `replicas` (percentages round up for surge, down otherwise)."""
    if isinstance(raw, str) and raw.endswith("%"):
        try:
            percent = int(raw[:-1])
        except ValueError:
            return 0
        return -(-replicas * percent // 100) if round_up else replicas * percent // 100
    return as_int(raw)


def fenceposts(deploy: Obj, replicas: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against `replicas`; never both 0."""
    rolling = ((deploy.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    surge = max(_scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True), 0)
    unavailable = max(_scaled(rolling.get("maxUnavailable", "25%"), replicas, round_up=False), 0)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling(deploy: Obj) -> bool:
    strategy = (deploy.get("spec") or {}).get("strategy") or {}
    return bool(strategy.get("type", "RollingUpdate") == "RollingUpdate")


def max_unavailable(deploy: Obj, replicas: int) -> int:
    if not is_rolling(deploy) or replicas == 0:
        return 0
    return min(fenceposts(deploy, replicas)[1], replicas)


def _spec_replicas(rs: Obj) -> int:
    return as_int((rs.get("spec") or {}).get("replicas"), 1)


def _status(rs: Obj, field: str) -> int:
    return as_int((rs.get("status") or {}).get(field))


def _condition(old: list[dict[str, Any]], ctype: str, status: str, reason: str, message: str,
               when: str) -> dict[str, Any]:
    prev = next((c for c in old if c.get("type") == ctype), None)
    if prev and (prev.get("status"), prev.get("reason"), prev.get("message")) == (
            status, reason, message):
        return prev
    transition = prev["lastTransitionTime"] if prev and prev.get("status") == status and \
        prev.get("lastTransitionTime") else when
    return {"type": ctype, "status": status, "lastUpdateTime": when,
            "lastTransitionTime": transition, "reason": reason, "message": message}


class DeploymentSimulator(OwnerSimulator):
    name = "deployments"
    owner_kind = "Deployment"
    owner = ("apps", "v1", "deployments")
    child = ("apps", "v1", "replicasets")

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, config)
        self._progress: dict[str, tuple[tuple[Any, ...], float]] = {}  # uid -> (state, since)
        self._deadlines: dict[str, Timer] = {}

    # Deployment ---------------------------------------------------------------------------
    async def sync(self, key: tuple[str, str]) -> None:
        ns = key[0]
        d = self.live_owner(key)
        if d is None:
            return
        spec = d.get("spec") or {}
        want = as_int(spec.get("replicas"), 1)
        thash = template_hash(spec.get("template") or {})
        uid = uid_of(d)
        selector = (spec.get("selector") or {}).get("matchLabels") or None
        owned = [rs for rs in self.store.list(self.child_rt, ns, label_selector=selector)
                 if controller_uid(rs) == uid and not deleting(rs)]
        new = next((rs for rs in owned
                    if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == thash), None)
        olds = [rs for rs in owned if rs is not new]
        top = max((_revision(rs) for rs in owned), default=0)
        created = False
        if not spec.get("paused"):
            if new is None:
                body = self._new_rs(d, thash, top + 1, 0 if olds else want)
                new = await self.store.create(self.child_rt, body, namespace=ns)
                created = True
            elif olds and _revision(new) <= max(_revision(rs) for rs in olds):
                new["metadata"].setdefault("annotations", {})[REVISION] = str(top + 1)
                new = await self.store.update(self.child_rt, new)
            min_ready = as_int(spec.get("minReadySeconds"), 0)
            if as_int((new.get("spec") or {}).get("minReadySeconds"), 0) != min_ready:
                new.setdefault("spec", {})["minReadySeconds"] = min_ready
                new = await self.store.update(self.child_rt, new)
            new, olds = await self._rollout(d, new, olds, want)
            await self._prune_history(d, olds)
        await self._write_status(d, new, olds, want, created)

    def _timed_out(self, d: Obj, progress: tuple[Any, ...]) -> bool:
        """Whether the rollout made no progress for spec.progressDeadlineSeconds (clock)."""
        uid, now = uid_of(d), self.clock.monotonic()
        seen = self._progress.get(uid)
        if seen is None or seen[0] != progress:
            seen = self._progress[uid] = (progress, now)
        deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
        if not isinstance(deadline, int) or isinstance(deadline, bool):
            return False
        due = seen[1] + deadline
        if now >= due:
            return True
        timer = self._deadlines.pop(uid, None)
        if timer is not None:
            timer.cancel()
        key = (ns_of(d), name_of(d))
        self._deadlines[uid] = self.clock.call_at(due, lambda: self.add(key))
        return False

    def forget(self, owner: Obj) -> None:
        uid = uid_of(owner)
        self._progress.pop(uid, None)
        timer = self._deadlines.pop(uid, None)
        if timer is not None:
            timer.cancel()

    async def _rollout(self, d: Obj, new: Obj, olds: list[Obj],
                       want: int) -> tuple[Obj, list[Obj]]:
        """One step of the rollout, as the real controller takes it (re-run on every change).

        Recreate: old ReplicaSets go to 0 first, the new one is scaled up once their pods are
        gone. RollingUpdate: the new one grows within `want + maxSurge` pods, old ones shrink
        (unavailable replicas first, oldest first) while at least `want - maxUnavailable`
        stay available.
        """
        if not is_rolling(d):
            olds = [await self._scale(rs, 0, want) for rs in olds]
            if all(_status(rs, "replicas") == 0 for rs in olds):
                new = await self._scale(new, want, want)
            return new, olds
        surge, unavailable = fenceposts(d, want)
        new_spec = _spec_replicas(new)
        total = new_spec + sum(_spec_replicas(rs) for rs in olds)
        target = want if new_spec >= want else min(new_spec + max(want + surge - total, 0), want)
        new = await self._scale(new, target, want)
        if target > new_spec:
            return new, olds  # scaled up: shrink the old ones when the new pods are available
        if not olds:
            return new, olds
        old_specs = [_spec_replicas(rs) for rs in olds]
        min_available = want - unavailable
        budget = (target + sum(old_specs) - min_available
                  - (target - _status(new, "availableReplicas")))
        targets = list(old_specs)
        order = sorted(range(len(olds)), key=lambda i: _revision(olds[i]))
        for i in order:  # unavailable old replicas go first
            cut = min(max(targets[i] - _status(olds[i], "availableReplicas"), 0), max(budget, 0))
            targets[i] -= cut
            budget -= cut
        available = _status(new, "availableReplicas") + sum(
            min(_status(rs, "availableReplicas"), t) for rs, t in zip(olds, targets, strict=True))
        extra = available - min_available
        for i in order:
            cut = min(targets[i], max(extra, 0))
            targets[i] -= cut
            extra -= cut
        olds = [await self._scale(rs, t, want) for rs, t in zip(olds, targets, strict=True)]
        return new, olds

    def _new_rs(self, d: Obj, thash: str, revision: int, replicas: int) -> Obj:
        spec = d.get("spec") or {}
        template = orjson.loads(orjson.dumps(spec.get("template") or {}))
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: thash}
        selector = orjson.loads(orjson.dumps(spec.get("selector") or {}))
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: thash}
        want = as_int(spec.get("replicas"), 1)
        rs_spec: dict[str, Any] = {"replicas": replicas, "selector": selector,
                                   "template": template}
        if spec.get("minReadySeconds"):
            rs_spec["minReadySeconds"] = spec["minReadySeconds"]
        return {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "name": f"{name_of(d)}-{thash}", "namespace": ns_of(d),
                "labels": dict(tmeta["labels"]),
                "annotations": {REVISION: str(revision), DESIRED: str(want),
                                MAX_REPLICAS: str(want)},
                "ownerReferences": [owner_ref(d, "apps/v1", "Deployment")],
            },
            "spec": rs_spec,
        }

    async def _scale(self, rs: Obj, replicas: int, desired: int) -> Obj:
        annotations = rs["metadata"].get("annotations") or {}
        if as_int((rs.get("spec") or {}).get("replicas"), 1) == replicas and \
                annotations.get(DESIRED) == str(desired):
            return rs
        rs.setdefault("spec", {})["replicas"] = replicas
        rs["metadata"]["annotations"] = {**annotations, DESIRED: str(desired),
                                         MAX_REPLICAS: str(desired)}
        return await self.store.update(self.child_rt, rs)

    async def _prune_history(self, d: Obj, olds: list[Obj]) -> None:
        limit = as_int((d.get("spec") or {}).get("revisionHistoryLimit"), 10)
        empty = [rs for rs in olds if as_int((rs.get("status") or {}).get("replicas")) == 0
                 and as_int((rs.get("spec") or {}).get("replicas")) == 0]
        empty.sort(key=_revision)
        for rs in empty[: max(len(empty) - limit, 0)]:
            await self.store.delete(self.child_rt, ns_of(rs), name_of(rs))

    async def _write_status(self, d: Obj, new: Obj | None, olds: list[Obj], want: int,
                            created: bool) -> None:
        everything = ([new] if new else []) + olds
        st = [rs.get("status") or {} for rs in everything]
        replicas = sum(as_int(s.get("replicas")) for s in st)
        updated = as_int((new.get("status") or {}).get("replicas")) if new else 0
        ready = sum(as_int(s.get("readyReplicas")) for s in st)
        available = sum(as_int(s.get("availableReplicas")) for s in st)
        total = sum(as_int((rs.get("spec") or {}).get("replicas"), 1) for rs in everything)
        generation = as_int(d["metadata"].get("generation"), 1)
        when = format_time(self.clock.now())
        old_status = d.get("status") or {}
        old_conditions = list(old_status.get("conditions") or ())
        if available >= want - max_unavailable(d, want):
            avail = _condition(old_conditions, "Available", "True", "MinimumReplicasAvailable",
                               "Deployment has minimum availability.", when)
        else:
            avail = _condition(old_conditions, "Available", "False",
                               "MinimumReplicasUnavailable",
                               "Deployment does not have minimum availability.", when)
        rs_name = name_of(new) if new else ""
        if new and updated == want and replicas == want and available >= want:
            self.forget(d)
            progress = _condition(old_conditions, "Progressing", "True", "NewReplicaSetAvailable",
                                  f'ReplicaSet "{rs_name}" has successfully progressed.', when)
        elif new and self._timed_out(d, (rs_name, updated, ready, available, replicas)):
            progress = _condition(old_conditions, "Progressing", "False",
                                  "ProgressDeadlineExceeded",
                                  f'ReplicaSet "{rs_name}" has timed out progressing.', when)
        elif created:
            progress = _condition(old_conditions, "Progressing", "True", "NewReplicaSetCreated",
                                  f'Created new replica set "{rs_name}"', when)
        elif new:
            progress = _condition(old_conditions, "Progressing", "True", "ReplicaSetUpdated",
                                  f'ReplicaSet "{rs_name}" is progressing.', when)
        else:
            progress = _condition(old_conditions, "Progressing", "Unknown", "DeploymentPaused",
                                  "Deployment is paused", when)
        status: dict[str, Any] = {
            "observedGeneration": generation, "replicas": replicas,
            "updatedReplicas": updated, "readyReplicas": ready,
            "availableReplicas": available, "conditions": [avail, progress],
        }
        if total - available > 0:
            status["unavailableReplicas"] = total - available
        if old_status.get("collisionCount") is not None:
            status["collisionCount"] = old_status["collisionCount"]
        if status == old_status:
            return
        d["status"] = status
        if new is not None:
            d["metadata"].setdefault("annotations", {})[REVISION] = str(_revision(new))
        await self.store.update_status(self.owner_rt, d)
