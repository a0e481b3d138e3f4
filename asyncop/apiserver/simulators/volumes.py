"""VolumeBinder: a dynamic provisioner + PV controller stand-in for PersistentVolumeClaims.

Every PersistentVolumeClaim that is not Bound gets a PersistentVolume `pvc-<claim uid>`
(capacity = the claim's storage request, default 1Gi; its access modes, storage class and a
claimRef; reclaim policy Delete; a hostPath that nothing ever touches), then the claim gets
`spec.volumeName`, the bind annotations and `status: {phase: Bound, accessModes, capacity}`
(what Helm's kstatus wait needs). Deleting a claim deletes its provisioned volume. Binding is
immediate (WaitForFirstConsumer is not simulated). Invariant: one provisioned volume per
claim uid; a Bound claim is never touched again.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import AlreadyExists, NotFound
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    Simulator,
    deleting,
    name_of,
    ns_of,
    uid_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.clock import Clock


def volume_name(claim: Obj) -> str:
    return f"pvc-{uid_of(claim)}"


class VolumeBinder(Simulator[tuple[str, str]]):
    name = "volumes"
    watched = frozenset({("", "persistentvolumeclaims")})

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, retry_delay=config.retry_delay,
                         resync_period=config.resync_period)
        self.pvc_rt: ResourceType = store.resolve("", "v1", "persistentvolumeclaims")
        self.pv_rt: ResourceType = store.resolve("", "v1", "persistentvolumes")

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        if rt.gr != self.pvc_rt.gr:
            return
        if event == "DELETED":
            self.add(("", volume_name(obj)))  # reclaim the provisioned volume
        elif (obj.get("status") or {}).get("phase") != "Bound":
            self.add((ns_of(obj), name_of(obj)))

    async def resync(self) -> None:
        for claim in self.store.list(self.pvc_rt):
            if (claim.get("status") or {}).get("phase") != "Bound":
                self.add((ns_of(claim), name_of(claim)))

    async def sync(self, key: tuple[str, str]) -> None:
        ns, name = key
        if not ns:
            await self._reclaim(name)
            return
        claim = self.store.get(self.pvc_rt, ns, name)
        if claim is None or deleting(claim) or (claim.get("status") or {}).get(
                "phase") == "Bound":
            return
        spec = claim.setdefault("spec", {})
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage") or "1Gi"
        modes = list(spec.get("accessModes") or ["ReadWriteOnce"])
        pv_name = spec.get("volumeName") or volume_name(claim)
        if self.store.get(self.pv_rt, None, pv_name) is None:
            pv_spec: dict[str, Any] = {
                "capacity": {"storage": storage}, "accessModes": modes,
                "persistentVolumeReclaimPolicy": "Delete",
                "volumeMode": spec.get("volumeMode", "Filesystem"),
                "hostPath": {"path": f"/var/lib/asyncop/volumes/{pv_name}", "type": ""},
                "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                             "namespace": ns, "name": name, "uid": uid_of(claim)},
            }
            if spec.get("storageClassName"):
                pv_spec["storageClassName"] = spec["storageClassName"]
            pv = {"apiVersion": "v1", "kind": "PersistentVolume",
                  "metadata": {"name": pv_name,
                               "annotations": {"pv.kubernetes.io/provisioned-by":
                                               "asyncop.io/simulated"}},
                  "spec": pv_spec}
            try:
                created = await self.store.create(self.pv_rt, pv)
            except AlreadyExists:
                pass
            else:
                created["status"] = {"phase": "Bound"}
                await self.store.update_status(self.pv_rt, created)
        if spec.get("volumeName") != pv_name:
            spec["volumeName"] = pv_name
            annotations = claim["metadata"].setdefault("annotations", {})
            annotations["pv.kubernetes.io/bind-completed"] = "yes"
            annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
            claim = await self.store.update(self.pvc_rt, claim)
        claim["status"] = {"phase": "Bound", "accessModes": modes,
                           "capacity": {"storage": storage}}
        await self.store.update_status(self.pvc_rt, claim)

    async def _reclaim(self, pv_name: str) -> None:
        pv = self.store.get(self.pv_rt, None, pv_name)
        if pv is None or deleting(pv):
            return
        if (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") != "Delete":
            return
        try:
            await self.store.delete(self.pv_rt, None, pv_name)
        except NotFound:
            pass
