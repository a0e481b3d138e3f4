"""ServiceAccountSimulator: kube-controller-manager's service-account controller.

Every namespace that is not terminating gets a ServiceAccount named `default` (clients and
Helm charts wait for it before creating pods), and gets it back if it is deleted.
Invariant: level-triggered (a sync looks at the namespace and its `default` account as they
are now); a namespace being deleted is left alone, like kube does.
"""

from __future__ import annotations

from asyncop.api import AlreadyExists, NotFound
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    Simulator,
    deleting,
    name_of,
    ns_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.clock import Clock

DEFAULT = "default"


class ServiceAccountSimulator(Simulator[str]):
    name = "serviceaccounts"
    watched = frozenset({("", "namespaces"), ("", "serviceaccounts")})

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, retry_delay=config.retry_delay,
                         resync_period=config.resync_period)
        self.ns_rt: ResourceType = store.resolve("", "v1", "namespaces")
        self.rt: ResourceType = store.resolve("", "v1", "serviceaccounts")

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        if rt.gr == self.ns_rt.gr and event == "ADDED":
            self.add(name_of(obj))
        elif rt.gr == self.rt.gr and event == "DELETED" and name_of(obj) == DEFAULT:
            self.add(ns_of(obj))

    async def resync(self) -> None:
        for ns in self.store.list(self.ns_rt):
            self.add(name_of(ns))

    async def sync(self, key: str) -> None:
        ns = self.store.get(self.ns_rt, None, key)
        if ns is None or deleting(ns) or self.store.get(self.rt, key, DEFAULT) is not None:
            return
        body: Obj = {"apiVersion": "v1", "kind": "ServiceAccount",
                     "metadata": {"name": DEFAULT, "namespace": key}}
        try:
            await self.store.create(self.rt, body, namespace=key)
        except (AlreadyExists, NotFound):
            pass  # created meanwhile, or the namespace went away
