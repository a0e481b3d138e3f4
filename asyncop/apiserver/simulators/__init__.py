"""Cluster simulators: what kube-controller-manager, the scheduler and a kubelet would do.

`start_simulators(store, clock, config)` installs the service allocation hook and starts one
pump task (consuming `store.subscribe()` and routing each event to the simulators watching
its resource) plus one worker task per enabled simulator; the server cancels the returned
tasks on stop. Each is switchable in `SimulatorConfig` (all on by default):
- gc: ownerReference garbage collection (background, foreground, orphan)       gc.py
- namespaces: empty a Terminating namespace, then finalize it                namespaces.py
- serviceaccounts: a `default` ServiceAccount in every namespace             serviceaccounts.py
- deployments: Deployment -> ReplicaSet (rollouts) -> Pods, with status      deployments.py,
  replicasets.py
- jobs, cronjobs, statefulsets, daemonsets: their Jobs/pods and status        jobs.py, ...
- volumes: PersistentVolumeClaims bound to provisioned PersistentVolumes      volumes.py
- endpoints: Endpoints for the pods a Service selects                         endpoints.py
- pods: binding and the kubelet lifecycle Pending -> Running (-> Succeeded/Failed)  pods.py
- services: clusterIP and nodePort allocation (an admission hook)             services.py
The six workload simulators share `OwnerSimulator` and the pod-template helpers (workload.py).
Tests steer pods with annotations (`sim.asyncop.io/start-seconds`, `ready`, `run-seconds`,
`exit-code`): the table `POD_ANNOTATIONS` and the typed `pod_annotations(...)` are in config.py,
with `SimulatorConfig`. All timing goes through the injected Clock. Invariant: simulators talk
to the server only through the in-process store API, so they go through the same
validation, admission, finalizer and watch-event paths as any HTTP client; nothing ever runs
on the host.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from asyncop.api import NotFound
from asyncop.apiserver.simulators.base import SimStore, Simulator, log, pump
from asyncop.apiserver.simulators.config import (
    POD_ANNOTATIONS,
    PodAnnotation,
    SimulatorConfig,
    pod_annotations,
)
from asyncop.apiserver.simulators.cronjobs import CronJobSimulator
from asyncop.apiserver.simulators.daemonsets import DaemonSetSimulator
from asyncop.apiserver.simulators.deployments import DeploymentSimulator
from asyncop.apiserver.simulators.endpoints import EndpointsSimulator
from asyncop.apiserver.simulators.gc import GarbageCollector
from asyncop.apiserver.simulators.jobs import JobSimulator
from asyncop.apiserver.simulators.namespaces import NamespaceSimulator
from asyncop.apiserver.simulators.pods import PodSimulator
from asyncop.apiserver.simulators.replicasets import ReplicaSetSimulator
from asyncop.apiserver.simulators.serviceaccounts import ServiceAccountSimulator
from asyncop.apiserver.simulators.services import ServiceAllocator
from asyncop.apiserver.simulators.statefulsets import StatefulSetSimulator
from asyncop.apiserver.simulators.volumes import VolumeBinder
from asyncop.clock import Clock

__all__ = [
    "POD_ANNOTATIONS",
    "PodAnnotation",
    "SimulatorConfig",
    "pod_annotations",
    "start_simulators",
]


Factory = Callable[[SimStore, Clock, SimulatorConfig], Simulator[Any]]

#: (switch, simulator classes) in start order.
_SIMULATORS: tuple[tuple[str, tuple[Factory, ...]], ...] = (
    ("gc", (GarbageCollector,)),
    ("namespaces", (NamespaceSimulator,)),
    ("serviceaccounts", (ServiceAccountSimulator,)),
    ("deployments", (DeploymentSimulator, ReplicaSetSimulator)),
    ("jobs", (JobSimulator,)),
    ("cronjobs", (CronJobSimulator,)),
    ("statefulsets", (StatefulSetSimulator,)),
    ("daemonsets", (DaemonSetSimulator,)),
    ("volumes", (VolumeBinder,)),
    ("endpoints", (EndpointsSimulator,)),
    ("pods", (PodSimulator,)),
)


def start_simulators(store: SimStore, clock: Clock,
                     config: SimulatorConfig | None = None) -> list[asyncio.Task[None]]:
    """Start the enabled simulators; returns their tasks (the pump first).

    A simulator whose resources the server does not serve is skipped with a warning.
    """
    config = config or SimulatorConfig()
    sims: list[Simulator[Any]] = []
    try:
        if config.services:
            ServiceAllocator(store, config).install()
    except NotFound:
        log.warning("simulator skipped: resource not served", simulator="services")
    for switch, classes in _SIMULATORS:
        if not getattr(config, switch):
            continue
        for factory in classes:
            try:
                sims.append(factory(store, clock, config))
            except NotFound:
                log.warning("simulator skipped: resource not served",
                            simulator=getattr(factory, "name", str(factory)))
    if not sims:
        return []
    tasks = [asyncio.create_task(pump(store, clock, sims, retry_delay=config.retry_delay),
                                 name="simulators-pump")]
    tasks += [asyncio.create_task(sim.run(), name=f"simulator-{sim.name}") for sim in sims]
    return tasks
