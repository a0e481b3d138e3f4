"""StatefulSetSimulator: ordinal pods `<sts>-<i>` with a revision, and the status kstatus reads.

Pods carry the template labels plus `controller-revision-hash: <sts>-<template hash>`,
`statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index`, and get
`spec.hostname`/`spec.subdomain` (serviceName). `OrderedReady` (the default) creates the lowest
missing ordinal only once every lower one is Ready, one at a time, and removes the highest
first; `Parallel` does all at once. RollingUpdate replaces outdated pods from the highest
ordinal down to `partition`, one at a time once all pods are Ready; OnDelete never replaces.
Terminated (Succeeded/Failed) pods are deleted and recreated. Each `volumeClaimTemplates` entry
becomes a claim `<template>-<sts>-<i>` (labelled with the selector's matchLabels, created
before its pod and kept afterwards, as the default Retain policy does) mounted as a volume of
that name. Status: observedGeneration, replicas, readyReplicas, availableReplicas,
currentReplicas, updatedReplicas, currentRevision (moves to updateRevision once every pod is
updated), updateRevision, collisionCount.
Not simulated: ControllerRevision objects, PVC retention policies, minReadySeconds.
Set-up, event routing and resync: `OwnerSimulator` (workload.py).
Invariant: a pod name is only (re)created when no pod of that name exists.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    as_int,
    deleting,
    name_of,
    ns_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.apiserver.simulators.workload import (
    OwnerSimulator,
    owned_pods,
    pod_active,
    pod_from_template,
    pod_ready,
    template_hash,
)
from asyncop.clock import Clock

REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def _ordinal(sts_name: str, pod: Obj) -> int | None:
    prefix, _, index = name_of(pod).rpartition("-")
    return int(index) if prefix == sts_name and index.isdigit() else None


class StatefulSetSimulator(OwnerSimulator):
    name = "statefulsets"
    owner_kind = "StatefulSet"
    owner = ("apps", "v1", "statefulsets")
    child = ("", "v1", "pods")

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, config)
        self.pvc_rt: ResourceType = store.resolve("", "v1", "persistentvolumeclaims")

    async def sync(self, key: tuple[str, str]) -> None:
        ns, name = key
        sts = self.live_owner(key)
        if sts is None:
            return
        spec = sts.get("spec") or {}
        want = as_int(spec.get("replicas"), 1)
        revision = f"{name}-{template_hash(spec.get('template') or {})}"
        parallel = spec.get("podManagementPolicy") == "Parallel"
        pods: dict[int, Obj] = {}
        for pod in owned_pods(self.store, self.child_rt, sts):
            index = _ordinal(name, pod)
            if index is None or deleting(pod):
                continue
            if not pod_active(pod):  # terminated: replace it
                await self.store.delete(self.child_rt, ns, name_of(pod))
                continue
            pods[index] = pod
        await self._scale(sts, pods, want, revision, parallel)
        await self._roll(sts, pods, want, revision)
        await self._write_status(sts, pods, want, revision)

    async def _scale(self, sts: Obj, pods: dict[int, Obj], want: int, revision: str,
                     parallel: bool) -> None:
        ns, name = ns_of(sts), name_of(sts)
        for index in range(want):
            if index in pods:
                continue
            if not parallel and not all(pod_ready(pods[j]) for j in range(index) if j in pods):
                break
            pod_name = f"{name}-{index}"
            if self.store.get(self.child_rt, ns, pod_name) is not None:
                break  # the old incarnation is still going away
            pod = pod_from_template(sts, api_version="apps/v1", kind="StatefulSet",
                                    name=pod_name, extra_labels={
                                        REVISION_LABEL: revision, POD_NAME_LABEL: pod_name,
                                        POD_INDEX_LABEL: str(index)})
            pod["spec"]["hostname"] = pod_name
            service = (sts.get("spec") or {}).get("serviceName")
            if service:
                pod["spec"]["subdomain"] = service
            await self._claims(sts, pod, index)
            pods[index] = await self.store.create(self.child_rt, pod, namespace=ns)
            if not parallel:
                break
        for index in sorted((i for i in pods if i >= want), reverse=True):
            await self.store.delete(self.child_rt, ns, name_of(pods.pop(index)))
            if not parallel:
                break

    async def _claims(self, sts: Obj, pod: Obj, index: int) -> None:
        """Create the pod's claims from volumeClaimTemplates and mount them as volumes."""
        spec = sts.get("spec") or {}
        volumes: list[dict[str, Any]] = pod["spec"].setdefault("volumes", [])
        labels = (spec.get("selector") or {}).get("matchLabels") or {}
        for template in spec.get("volumeClaimTemplates") or ():
            tname = str((template.get("metadata") or {}).get("name") or "")
            if not tname:
                continue
            claim_name = f"{tname}-{name_of(sts)}-{index}"
            if self.store.get(self.pvc_rt, ns_of(sts), claim_name) is None:
                tmeta = template.get("metadata") or {}
                claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "metadata": {"name": claim_name, "namespace": ns_of(sts),
                                      "labels": {**(tmeta.get("labels") or {}), **labels}},
                         "spec": dict(template.get("spec") or {})}
                await self.store.create(self.pvc_rt, claim, namespace=ns_of(sts))
            if not any(v.get("name") == tname for v in volumes):
                volumes.append({"name": tname,
                                "persistentVolumeClaim": {"claimName": claim_name}})
        if not volumes:
            del pod["spec"]["volumes"]

    async def _roll(self, sts: Obj, pods: dict[int, Obj], want: int, revision: str) -> None:
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        if len(pods) != want or not all(pod_ready(p) for p in pods.values()):
            return
        partition = as_int((strategy.get("rollingUpdate") or {}).get("partition"), 0)
        for index in sorted(pods, reverse=True):
            if index < partition:
                break
            labels = pods[index].get("metadata", {}).get("labels") or {}
            if labels.get(REVISION_LABEL) != revision:
                await self.store.delete(self.child_rt, ns_of(sts), name_of(pods.pop(index)))
                return

    async def _write_status(self, sts: Obj, pods: dict[int, Obj], want: int,
                            revision: str) -> None:
        old: dict[str, Any] = dict(sts.get("status") or {})
        revisions = [(p.get("metadata", {}).get("labels") or {}).get(REVISION_LABEL)
                     for p in pods.values()]
        updated = revisions.count(revision)
        current = old.get("currentRevision") or revision
        if updated == want == len(pods):
            current = revision
        ready = sum(1 for p in pods.values() if pod_ready(p))
        status = {**old,
                  "observedGeneration": as_int(sts["metadata"].get("generation"), 1),
                  "replicas": len(pods), "readyReplicas": ready, "availableReplicas": ready,
                  "currentReplicas": revisions.count(current), "updatedReplicas": updated,
                  "currentRevision": current, "updateRevision": revision,
                  "collisionCount": as_int(old.get("collisionCount"), 0)}
        await self.write_status(sts, status)
