"""network and podlogger controllers, end to end on the embedded API server."""

from __future__ import annotations

from typing import Any

import structlog

from asyncop.api import RawObject
from asyncop.api.kinds import POD
from asyncop.controllers.kinds import NETWORK
from asyncop.controllers.network import network_controller
from asyncop.controllers.podlogger import podlogger_controller
from asyncop.runtime.workqueue import WorkQueue
from asyncop.testing import eventually
from tests.controllers.ctlenv import NS, Cluster


def _net(name: str, cidr: str, gateway: str) -> RawObject:
    return {"apiVersion": NETWORK.api_version, "kind": NETWORK.kind,
            "metadata": {"name": name, "namespace": NS},
            "spec": {"cidr": cidr, "gateway": gateway}}


def _ready(status: str, reason: str) -> Any:
    def check(obj: RawObject) -> bool:
        conds = (obj.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == status and c["reason"] == reason
                   for c in conds)
    return check


async def test_network_is_validated_into_its_ready_condition(cluster: Cluster) -> None:
    with structlog.testing.capture_logs() as logs:
        async with cluster.manager(network_controller):
            await cluster.client.create(
                NETWORK, _net("example-network", "192.168.0.0/16", "192.168.0.1"))
            net = await cluster.wait(NETWORK, "example-network", _ready("True", "Valid"))
            assert net["status"]["observedGeneration"] == 1

            await cluster.client.patch(NETWORK, "example-network",
                                       {"spec": {"gateway": "10.0.0.1"}}, namespace=NS)
            net = await cluster.wait(NETWORK, "example-network",
                                     _ready("False", "GatewayOutsideCIDR"))
            assert net["status"]["observedGeneration"] == 2
            assert "10.0.0.1" in net["status"]["conditions"][0]["message"]
            events = await eventually(
                lambda: cluster.events("example-network", "GatewayOutsideCIDR"), timeout=10)
            assert events[0]["type"] == "Warning"

            await cluster.client.create(NETWORK, _net("broken", "300.1.0.0/16", "300.1.0.1"))
            await cluster.wait(NETWORK, "broken", _ready("False", "InvalidCIDR"))
            await cluster.idle("network")
            await cluster.client.delete(NETWORK, "broken", namespace=NS)
            await eventually(lambda: any(e["event"] == "network deleted" for e in logs),
                             timeout=10)
            await cluster.idle("network")
    seen = {(e["event"], e.get("network")) for e in logs}
    assert ("network added", "default/example-network") in seen
    assert ("network updated", "default/example-network") in seen
    assert ("network deleted", "default/broken") in seen


async def test_network_resync_without_changes_is_skipped(cluster: Cluster) -> None:
    async with cluster.manager(network_controller) as mgr:
        await cluster.client.create(NETWORK, _net("v6", "fd00:10::/64", "fd00:10::1"))
        await cluster.wait(NETWORK, "v6", _ready("True", "Valid"))
        await cluster.idle("network")
        cached = mgr.cache.get(NETWORK, "v6", NS)
        assert cached is not None
        (watch,) = cluster.controllers["network"].watches
        queue: WorkQueue[str] = WorkQueue(clock=cluster.clock)
        handler = watch.handler(queue, primary=NETWORK)
        with structlog.testing.capture_logs() as logs:
            handler.on_update(cached, cached)  # a resync: same resourceVersion
            assert len(queue) == 0
            changed = dict(cached, metadata=dict(cached["metadata"], resourceVersion="0"))
            handler.on_update(changed, cached)
            assert len(queue) == 1
        assert [e["event"] for e in logs] == ["network updated"]


async def test_podlogger_logs_pod_adds_updates_and_deletes(cluster: Cluster) -> None:
    pod: RawObject = {"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "p", "namespace": NS},
                      "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    with structlog.testing.capture_logs() as logs:
        async with cluster.manager(podlogger_controller):
            await cluster.client.create(POD, pod)
            await eventually(lambda: _logged(logs, "Sync/Add/Update for Pod", phase="Running"),
                             timeout=10)
            await cluster.client.delete(POD, "p", namespace=NS, grace_period_seconds=0)
            await eventually(lambda: _logged(logs, "Pod does not exist anymore"), timeout=10)
    assert all(e.get("pod") == "default/p" for e in logs
               if e["event"] in ("Sync/Add/Update for Pod", "Pod does not exist anymore"))


def _logged(logs: list[dict[str, Any]], event: str, **fields: Any) -> bool:
    return any(e["event"] == event and all(e.get(k) == v for k, v in fields.items())
               for e in logs)
