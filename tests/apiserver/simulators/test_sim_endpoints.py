"""Endpoints follow the pods a Service selects; selector-less Services are left alone."""

from __future__ import annotations

from typing import Any

from asyncop.testing import eventually
from tests.apiserver.simulators.simkit import Sim

NS = "default"


def pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "ports": [{"name": "web", "containerPort": 8080}]}]}}


def endpoints(sim: Sim, name: str) -> dict[str, Any] | None:
    return sim.store.get(sim.rt("", "v1", "endpoints"), NS, name)


def ips(sim: Sim, name: str) -> list[str]:
    ep = endpoints(sim, name) or {}
    return [a["ip"] for s in ep.get("subsets") or () for a in s.get("addresses") or ()]


async def test_endpoints_track_selected_running_pods(sim: Sim) -> None:
    P, S = sim.rt("", "v1", "pods"), sim.rt("", "v1", "services")
    await sim.store.create(S, {"metadata": {"name": "web", "namespace": NS},
                               "spec": {"selector": {"app": "web"},
                                        "ports": [{"name": "http", "port": 80,
                                                   "targetPort": "web"}]}})
    await eventually(lambda: endpoints(sim, "web") is not None, timeout=5)
    ep = endpoints(sim, "web")
    assert ep is not None and ep["subsets"] == []
    for i in range(2):
        await sim.store.create(P, pod(f"web-{i}", {"app": "web"}))
    await sim.store.create(P, pod("other", {"app": "other"}))
    await eventually(lambda: len(ips(sim, "web")) == 2, timeout=5, message="two addresses")
    ep = endpoints(sim, "web")
    assert ep is not None
    [subset] = ep["subsets"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    refs = sorted(a["targetRef"]["name"] for a in subset["addresses"])
    assert refs == ["web-0", "web-1"]
    assert all(a["nodeName"] == "asyncop-node" for a in subset["addresses"])

    sick = sim.store.get(P, NS, "web-0")
    assert sick is not None
    for cond in sick["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["status"] = "False"
    await sim.store.update_status(P, sick)

    def not_ready() -> list[str]:
        ep = endpoints(sim, "web") or {}
        return [a["targetRef"]["name"] for s in ep.get("subsets") or ()
                for a in s.get("notReadyAddresses") or ()]

    await eventually(lambda: not_ready() == ["web-0"], timeout=5, message="not ready")
    assert len(ips(sim, "web")) == 1

    moved = sim.store.get(P, NS, "web-1")
    assert moved is not None
    moved["metadata"]["labels"] = {"app": "elsewhere"}
    await sim.store.update(P, moved)
    await eventually(lambda: ips(sim, "web") == [], timeout=5, message="relabelled out")

    await sim.store.delete(S, NS, "web")
    await eventually(lambda: endpoints(sim, "web") is None, timeout=5, message="endpoints gone")


async def test_selectorless_service_endpoints_are_user_managed(sim: Sim) -> None:
    S, E = sim.rt("", "v1", "services"), sim.rt("", "v1", "endpoints")
    await sim.store.create(S, {"metadata": {"name": "ext", "namespace": NS},
                               "spec": {"ports": [{"port": 5432}]}})
    subsets = [{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"port": 5432}]}]
    await sim.store.create(E, {"metadata": {"name": "ext", "namespace": NS},
                               "subsets": subsets})
    await sim.store.create(S, {"metadata": {"name": "witness", "namespace": NS},
                               "spec": {"selector": {"app": "w"}, "ports": [{"port": 1}]}})
    await eventually(lambda: endpoints(sim, "witness") is not None, timeout=5)
    ep = endpoints(sim, "ext")
    assert ep is not None and ep["subsets"][0]["addresses"] == [{"ip": "192.0.2.10"}]
    await sim.store.delete(S, NS, "ext")
    await sim.store.delete(S, NS, "witness")
    await eventually(lambda: endpoints(sim, "witness") is None, timeout=5)
    assert endpoints(sim, "ext") is not None
