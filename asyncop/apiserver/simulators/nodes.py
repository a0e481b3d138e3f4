"""The one simulated Node, registered by the kubelet stand-in (pods.py) when it starts.

`ensure_node` creates `config.node_name` if it is missing (labels kubernetes.io/hostname,
kubernetes.io/os, kubernetes.io/arch; address InternalIP `host_ip`; capacity and allocatable
4 CPUs, 16Gi, 110 pods) and gives it the kubelet's status conditions (Ready True, the
pressure conditions False) and nodeInfo. Invariant: idempotent; an existing Node is only
given a status if it has none, so a test can take a node NotReady and keep it so.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import AlreadyExists
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import Obj, SimStore
from asyncop.apiserver.simulators.config import SimulatorConfig

_RESOURCES = {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def node_status(config: SimulatorConfig, when: str) -> dict[str, Any]:
    def cond(ctype: str, status: str, reason: str, message: str) -> dict[str, Any]:
        return {"type": ctype, "status": status, "reason": reason, "message": message,
                "lastHeartbeatTime": when, "lastTransitionTime": when}

    return {
        "conditions": [
            cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                 "kubelet has sufficient memory available"),
            cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                 "kubelet has no disk pressure"),
            cond("PIDPressure", "False", "KubeletHasSufficientPID",
                 "kubelet has sufficient PID available"),
            cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        "addresses": [{"type": "InternalIP", "address": config.host_ip},
                      {"type": "Hostname", "address": config.node_name}],
        "capacity": dict(_RESOURCES), "allocatable": dict(_RESOURCES),
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"kubeletVersion": "v1.33.0", "kubeProxyVersion": "v1.33.0",
                     "containerRuntimeVersion": "asyncop://simulated",
                     "operatingSystem": "linux", "architecture": "amd64",
                     "osImage": "asyncop simulated node", "kernelVersion": "0.0.0",
                     "machineID": "", "systemUUID": "", "bootID": ""},
    }


async def ensure_node(store: SimStore, rt: ResourceType, config: SimulatorConfig,
                      when: str) -> Obj | None:
    node = store.get(rt, None, config.node_name)
    if node is None:
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": config.node_name,
                             "labels": {"kubernetes.io/hostname": config.node_name,
                                        "kubernetes.io/os": "linux",
                                        "kubernetes.io/arch": "amd64"}},
                "spec": {"podCIDR": config.pod_cidr, "podCIDRs": [config.pod_cidr]}}
        try:
            node = await store.create(rt, body)
        except AlreadyExists:
            node = store.get(rt, None, config.node_name)
        if node is None:
            return None
    if not (node.get("status") or {}).get("conditions"):
        node["status"] = node_status(config, when)
        node = await store.update_status(rt, node)
    return node
