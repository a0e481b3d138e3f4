"""EndpointsSimulator: the endpoints controller, one `Endpoints` object per selecting Service.

For a Service with a `spec.selector` (not ExternalName), the Endpoints of the same name lists
the matching pods that have a podIP and are not being deleted: Ready ones under `addresses`,
the others under `notReadyAddresses` (all under `addresses` with publishNotReadyAddresses),
each with ip, nodeName and a Pod targetRef, sorted by IP; `ports` carry the resolved target
port (a number, or a named container port of the first pod that has it) with the port's name
and protocol. No matching pod means `subsets: []`. Services without a selector keep
user-managed Endpoints untouched; deleting a selecting Service deletes its Endpoints.
EndpointSlices are not served. Invariant: Endpoints are written only when they change.
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
from asyncop.apiserver.simulators.workload import pod_ready
from asyncop.clock import Clock

SvcKey = tuple[str, str]
MANAGED_BY = "endpoints.kubernetes.io/managed-by"
CONTROLLER = "endpoint-controller"


def _selector(svc: Obj) -> dict[str, str] | None:
    spec = svc.get("spec") or {}
    selector = spec.get("selector")
    if not selector or spec.get("type") == "ExternalName":
        return None
    return dict(selector)


def _target_port(port: dict[str, Any], pods: list[Obj]) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for pod in pods:
        for container in (pod.get("spec") or {}).get("containers") or ():
            for cport in container.get("ports") or ():
                if cport.get("name") == target and isinstance(cport.get("containerPort"), int):
                    return int(cport["containerPort"])
    return None


def _address(pod: Obj) -> dict[str, Any]:
    address: dict[str, Any] = {"ip": (pod.get("status") or {})["podIP"],
                               "targetRef": {"kind": "Pod", "namespace": ns_of(pod),
                                             "name": name_of(pod), "uid": uid_of(pod)}}
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        address["nodeName"] = node
    return address


def build_subsets(svc: Obj, pods: list[Obj]) -> list[dict[str, Any]]:
    spec = svc.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    live = sorted((p for p in pods if not deleting(p) and (p.get("status") or {}).get("podIP")),
                  key=lambda p: str(p["status"]["podIP"]))
    ready = [_address(p) for p in live if publish or pod_ready(p)]
    not_ready = [_address(p) for p in live if not publish and not pod_ready(p)]
    if not ready and not not_ready:
        return []
    ports = []
    for port in spec.get("ports") or ():
        number = _target_port(port, live)
        if number is None:
            continue
        entry: dict[str, Any] = {"port": number, "protocol": port.get("protocol", "TCP")}
        if port.get("name"):
            entry["name"] = port["name"]
        ports.append(entry)
    subset: dict[str, Any] = {}
    if ready:
        subset["addresses"] = ready
    if not_ready:
        subset["notReadyAddresses"] = not_ready
    if ports:
        subset["ports"] = ports
    return [subset]


class EndpointsSimulator(Simulator[SvcKey]):
    name = "endpoints"
    watched = frozenset({("", "services"), ("", "pods")})

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, retry_delay=config.retry_delay,
                         resync_period=config.resync_period)
        self.svc_rt: ResourceType = store.resolve("", "v1", "services")
        self.pod_rt: ResourceType = store.resolve("", "v1", "pods")
        self.ep_rt: ResourceType = store.resolve("", "v1", "endpoints")
        self._selectors: dict[str, dict[str, dict[str, str]]] = {}  # ns -> svc -> selector
        self._listed: dict[tuple[str, str], set[str]] = {}  # pod key -> services listing it
        self._members: dict[SvcKey, set[str]] = {}  # service -> pod names it lists

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        ns, name = ns_of(obj), name_of(obj)
        if rt.gr == self.svc_rt.gr:
            selector = _selector(obj) if event != "DELETED" else None
            if selector is not None:
                self._selectors.setdefault(ns, {})[name] = selector
            elif name in self._selectors.get(ns, {}):
                del self._selectors[ns][name]
            elif event != "DELETED":
                return
            self.add((ns, name))
        elif rt.gr == self.pod_rt.gr:
            labels = obj.get("metadata", {}).get("labels") or {}
            services = set(self._listed.get((ns, name), ()))
            services.update(svc for svc, sel in self._selectors.get(ns, {}).items()
                            if sel.items() <= labels.items())
            for svc in services:
                self.add((ns, svc))

    async def resync(self) -> None:
        self._selectors.clear()
        for key in list(self._members):
            self.add(key)
        for svc in self.store.list(self.svc_rt):
            selector = _selector(svc)
            if selector is not None:
                self._selectors.setdefault(ns_of(svc), {})[name_of(svc)] = selector
                self.add((ns_of(svc), name_of(svc)))

    def _remember(self, key: SvcKey, members: set[str]) -> None:
        """Record which pods `key` lists, so a pod leaving the selector re-dirties it."""
        ns, name = key
        old = self._members.pop(key, set())
        for pod in old - members:
            services = self._listed.get((ns, pod))
            if services is not None:
                services.discard(name)
                if not services:
                    del self._listed[(ns, pod)]
        for pod in members - old:
            self._listed.setdefault((ns, pod), set()).add(name)
        if members:
            self._members[key] = members

    async def sync(self, key: SvcKey) -> None:
        ns, name = key
        svc = self.store.get(self.svc_rt, ns, name)
        current = self.store.get(self.ep_rt, ns, name)
        selector = _selector(svc) if svc is not None and not deleting(svc) else None
        if selector is None:
            self._remember(key, set())
            if svc is None and current is not None and current.get("metadata", {}).get(
                    "labels", {}).get(MANAGED_BY) == CONTROLLER:
                try:
                    await self.store.delete(self.ep_rt, ns, name)
                except NotFound:
                    pass
            return
        assert svc is not None
        pods = self.store.list(self.pod_rt, ns, label_selector=selector)
        self._remember(key, {name_of(p) for p in pods})
        labels = {**(svc.get("metadata", {}).get("labels") or {}), MANAGED_BY: CONTROLLER}
        if (svc.get("spec") or {}).get("clusterIP") == "None":
            labels["service.kubernetes.io/headless"] = ""
        subsets = build_subsets(svc, pods)
        if current is None:
            body = {"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": name, "namespace": ns, "labels": labels},
                    "subsets": subsets}
            try:
                await self.store.create(self.ep_rt, body, namespace=ns)
            except AlreadyExists:
                self.add(key)
            return
        if current.get("subsets") == subsets and current["metadata"].get("labels") == labels:
            return
        current["subsets"] = subsets
        current["metadata"]["labels"] = labels
        await self.store.update(self.ep_rt, current)
