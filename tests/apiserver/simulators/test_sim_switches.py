"""Each simulator is switchable: turned off, its part of the cluster does nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from asyncop.api import NotFound, status_body
from asyncop.apiserver.simulators import SimulatorConfig, start_simulators
from asyncop.apiserver.storage.store import Store
from asyncop.clock import RealClock
from asyncop.testing import eventually
from tests.apiserver.simulators.simkit import Sim, cancel_all, quiesce, started, stop

NS = "default"


@asynccontextmanager
async def running(**switches: bool) -> AsyncIterator[Sim]:
    sim = await started(RealClock(), SimulatorConfig(**switches))
    try:
        yield sim
    finally:
        await stop(sim)


def deployment(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def settle_after(predicate: Callable[[], Any]) -> None:
    """Wait for a witness of the other simulators' progress, then let everything settle."""
    await eventually(predicate, timeout=5)
    await quiesce()


async def test_pods_off_leaves_pods_pending_unbound() -> None:
    async with running(pods=False) as sim:
        D, RS, P = (sim.rt("apps", "v1", "deployments"), sim.rt("apps", "v1", "replicasets"),
                    sim.rt("", "v1", "pods"))
        await sim.store.create(D, deployment("idle"))
        await settle_after(lambda: any((rs.get("status") or {}).get("replicas") == 1
                                       for rs in sim.store.list(RS, NS)))
        [pod] = sim.store.list(P, NS)
        assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
        d = sim.store.get(D, NS, "idle")
        assert d is not None and d["status"]["readyReplicas"] == 0
        assert d["status"]["unavailableReplicas"] == 1


async def test_deployments_off_creates_no_replicasets() -> None:
    async with running(deployments=False) as sim:
        D, RS, P = (sim.rt("apps", "v1", "deployments"), sim.rt("apps", "v1", "replicasets"),
                    sim.rt("", "v1", "pods"))
        await sim.store.create(D, deployment("static"))
        await sim.store.create(P, {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": "witness", "namespace": NS},
                                   "spec": {"containers": [{"name": "c", "image": "x"}]}})
        await settle_after(lambda: (sim.store.get(P, NS, "witness") or {})
                           .get("status", {}).get("phase") == "Running")
        assert sim.store.list(RS, NS) == []
        d = sim.store.get(D, NS, "static")
        assert (d is not None and "status" not in d) or not d.get("status")


async def test_gc_off_keeps_dependents() -> None:
    async with running(gc=False) as sim:
        CM = sim.rt("", "v1", "configmaps")
        owner = await sim.store.create(CM, {"metadata": {"name": "o", "namespace": NS}})
        await sim.store.create(CM, {"metadata": {
            "name": "d", "namespace": NS, "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                "uid": owner["metadata"]["uid"]}]}})
        await sim.store.delete(CM, NS, "o")
        await quiesce()
        assert sim.store.get(CM, NS, "d") is not None


async def test_namespaces_off_leaves_namespace_terminating() -> None:
    async with running(namespaces=False) as sim:
        NSRT, CM = sim.rt("", "v1", "namespaces"), sim.rt("", "v1", "configmaps")
        await sim.store.create(NSRT, {"metadata": {"name": "stuck"}})
        await sim.store.create(CM, {"metadata": {"name": "c", "namespace": "stuck"}})
        await sim.store.delete(NSRT, None, "stuck")
        await quiesce()
        ns = sim.store.get(NSRT, None, "stuck")
        assert ns is not None and ns["status"]["phase"] == "Terminating"
        assert sim.store.get(CM, "stuck", "c") is not None


async def test_services_off_allocates_nothing() -> None:
    async with running(services=False) as sim:
        S = sim.rt("", "v1", "services")
        out = await sim.store.create(S, {"metadata": {"name": "s", "namespace": NS},
                                         "spec": {"type": "NodePort", "ports": [{"port": 80}]}})
        assert not out["spec"].get("clusterIP")
        assert "nodePort" not in out["spec"]["ports"][0]


async def test_all_off_starts_no_tasks() -> None:
    store = Store(clock=RealClock())
    off = SimulatorConfig(gc=False, namespaces=False, serviceaccounts=False, deployments=False,
                          pods=False, jobs=False, cronjobs=False,
                          statefulsets=False, daemonsets=False, volumes=False,
                          endpoints=False, services=False)
    assert start_simulators(store, RealClock(), off) == []


async def test_a_simulator_whose_resource_is_not_served_is_skipped() -> None:
    store = Store(clock=RealClock())
    real_resolve = store.resolve

    def resolve(group: str, version: str, plural: str) -> Any:
        if plural == "endpoints":
            raise NotFound(status_body(404, "not served"))
        return real_resolve(group, version, plural)

    store.resolve = resolve  # type: ignore[method-assign]
    tasks = start_simulators(store, RealClock(), SimulatorConfig())
    try:
        names = {t.get_name() for t in tasks}
        assert "simulator-endpoints" not in names and "simulator-pods" in names
    finally:
        await cancel_all(tasks)


@pytest.mark.parametrize("bad", [{"service_cidr": "10.96.0.0/33"}, {"pod_cidr": "nope"},
                                 {"node_port_range": (32767, 30000)},
                                 {"pod_start_delay": -1.0}])
def test_config_is_validated(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="SimulatorConfig"):
        SimulatorConfig(**bad)
