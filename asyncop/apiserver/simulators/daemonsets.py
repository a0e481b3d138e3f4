"""DaemonSetSimulator: one pod per node, and the simulated cluster has one node.

Each DaemonSet keeps one active pod (`generateName: <ds>-`, template labels plus
`controller-revision-hash` (the template hash) and `pod-template-generation`), bound to
`node_name`. RollingUpdate replaces an outdated pod (delete, then create); OnDelete leaves it.
Terminated pods are replaced. Status: desiredNumberScheduled 1, currentNumberScheduled,
numberMisscheduled 0, numberReady, numberAvailable, updatedNumberScheduled,
numberUnavailable (when > 0), observedGeneration. Not simulated: node selectors, taints,
tolerations and surge. Set-up, event routing and resync: `OwnerSimulator` (workload.py).
Invariant: at most one active pod per DaemonSet.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    as_int,
    deleting,
    name_of,
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
GENERATION_LABEL = "pod-template-generation"


class DaemonSetSimulator(OwnerSimulator):
    name = "daemonsets"
    owner_kind = "DaemonSet"
    owner = ("apps", "v1", "daemonsets")
    child = ("", "v1", "pods")

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, config)
        self.node_name = config.node_name

    async def sync(self, key: tuple[str, str]) -> None:
        ns = key[0]
        ds = self.live_owner(key)
        if ds is None:
            return
        spec = ds.get("spec") or {}
        revision = template_hash(spec.get("template") or {})
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == \
            "RollingUpdate"
        active: list[Obj] = []
        for pod in owned_pods(self.store, self.child_rt, ds):
            if deleting(pod):
                continue
            outdated = (pod.get("metadata", {}).get("labels") or {}).get(
                REVISION_LABEL) != revision
            if not pod_active(pod) or (outdated and rolling) or active:
                await self.store.delete(self.child_rt, ns, name_of(pod))
            else:
                active.append(pod)
        if not active:
            generation = str(as_int(ds["metadata"].get("generation"), 1))
            pod = pod_from_template(ds, api_version="apps/v1", kind="DaemonSet", extra_labels={
                REVISION_LABEL: revision, GENERATION_LABEL: generation})
            pod["spec"]["nodeName"] = self.node_name
            active.append(await self.store.create(self.child_rt, pod, namespace=ns))
        await self._write_status(ds, active, revision)

    async def _write_status(self, ds: Obj, active: list[Obj], revision: str) -> None:
        old: dict[str, Any] = dict(ds.get("status") or {})
        ready = sum(1 for p in active if pod_ready(p))
        updated = sum(1 for p in active
                      if (p.get("metadata", {}).get("labels") or {}).get(REVISION_LABEL)
                      == revision)
        status = {**old,
                  "observedGeneration": as_int(ds["metadata"].get("generation"), 1),
                  "desiredNumberScheduled": 1, "currentNumberScheduled": len(active),
                  "numberMisscheduled": 0, "numberReady": ready, "numberAvailable": ready,
                  "updatedNumberScheduled": updated}
        status.pop("numberUnavailable", None)
        if ready < 1:
            status["numberUnavailable"] = 1 - ready
        await self.write_status(ds, status)
