"""Cluster simulators: GC, namespaces, workloads, pods, services (each switchable).

`start_simulators(store, clock, config)` installs the service allocation hook and starts one
pump task (consuming `store.subscribe()`) plus one worker task per enabled simulator; the
server cancels the returned tasks on stop. Invariant: simulators talk to the server only
through the in-process store API, so they go through the same validation, admission,
finalizer and watch-event paths as any HTTP client.
"""

from __future__ import annotations

import asyncio
from typing import Any

from asyncop.apiserver.simulators.base import SimStore, Simulator, pump
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.apiserver.simulators.daemonsets import DaemonSetSimulator
from asyncop.apiserver.simulators.deployments import DeploymentSimulator
from asyncop.apiserver.simulators.endpoints import EndpointsSimulator
from asyncop.apiserver.simulators.gc import GarbageCollector
from asyncop.apiserver.simulators.jobs import JobSimulator
from asyncop.apiserver.simulators.namespaces import NamespaceSimulator
from asyncop.apiserver.simulators.pods import PodSimulator
from asyncop.apiserver.simulators.replicasets import ReplicaSetSimulator
from asyncop.apiserver.simulators.services import ServiceAllocator
from asyncop.apiserver.simulators.statefulsets import StatefulSetSimulator
from asyncop.apiserver.simulators.volumes import VolumeBinder
from asyncop.clock import Clock

__all__ = ["SimulatorConfig", "start_simulators"]


def start_simulators(store: SimStore, clock: Clock,
                     config: SimulatorConfig | None = None) -> list[asyncio.Task[None]]:
    """Start the enabled simulators; returns their tasks (the pump first)."""
    config = config or SimulatorConfig()
    if config.services:
        ServiceAllocator(store, config).install()
    sims: list[Simulator[Any]] = []
    if config.gc:
        sims.append(GarbageCollector(store, clock, config))
    if config.namespaces:
        sims.append(NamespaceSimulator(store, clock, config))
    if config.deployments:
        sims.append(DeploymentSimulator(store, clock, config))
        sims.append(ReplicaSetSimulator(store, clock, config))
    if config.jobs:
        sims.append(JobSimulator(store, clock, config))
    if config.statefulsets:
        sims.append(StatefulSetSimulator(store, clock, config))
    if config.daemonsets:
        sims.append(DaemonSetSimulator(store, clock, config))
    if config.volumes:
        sims.append(VolumeBinder(store, clock, config))
    if config.endpoints:
        sims.append(EndpointsSimulator(store, clock, config))
    if config.pods:
        sims.append(PodSimulator(store, clock, config))
    if not sims:
        return []
    tasks = [asyncio.create_task(pump(store, clock, sims, retry_delay=config.retry_delay),
                                 name="simulators-pump")]
    tasks += [asyncio.create_task(sim.run(), name=f"simulator-{sim.name}") for sim in sims]
    return tasks
