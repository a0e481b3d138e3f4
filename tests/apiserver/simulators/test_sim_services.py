"""clusterIP and nodePort allocation on services (admission inside the server's write)."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from asyncop.api import Invalid
from tests.apiserver.simulators.simkit import Sim

NS = "default"
CIDR = ipaddress.ip_network("10.96.0.0/12")


def svc(name: str, stype: str = "ClusterIP", *, ports: list[dict[str, Any]] | None = None,
        cluster_ip: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": stype, "selector": {"app": name},
                            "ports": ports if ports is not None else [{"name": "http",
                                                                       "port": 80}]}
    if cluster_ip is not None:
        spec["clusterIP"] = cluster_ip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


async def create(sim: Sim, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = await sim.store.create(sim.rt("", "v1", "services"), body)
    return out


async def test_cluster_ip_allocated_from_the_service_cidr(sim: Sim) -> None:
    a = await create(sim, svc("a"))
    b = await create(sim, svc("b"))
    for s in (a, b):
        spec = s["spec"]
        assert ipaddress.ip_address(spec["clusterIP"]) in CIDR
        assert spec["clusterIP"] != "10.96.0.1"
        assert spec["clusterIPs"] == [spec["clusterIP"]]
        assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
        assert "nodePort" not in spec["ports"][0]
    assert a["spec"]["clusterIP"] != b["spec"]["clusterIP"]


async def test_headless_and_external_name_get_no_ip(sim: Sim) -> None:
    headless = await create(sim, svc("headless", cluster_ip="None"))
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["clusterIPs"] == ["None"]
    ext = svc("ext", "ExternalName", ports=[])
    ext["spec"]["externalName"] = "example.com"
    out = await create(sim, ext)
    assert "clusterIP" not in out["spec"]


async def test_node_ports_in_range_and_unique(sim: Sim) -> None:
    ports = [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    seen: list[int] = []
    for i, stype in enumerate(["NodePort", "LoadBalancer", "NodePort"]):
        out = await create(sim, svc(f"np{i}", stype, ports=[dict(p) for p in ports]))
        assert out["spec"]["clusterIP"]
        seen += [p["nodePort"] for p in out["spec"]["ports"]]
    assert all(30000 <= p <= 32767 for p in seen)
    assert len(set(seen)) == len(seen) == 6


async def test_explicit_node_port_conflict_is_invalid(sim: Sim) -> None:
    await create(sim, svc("first", "NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    with pytest.raises(Invalid) as err:
        await create(sim, svc("second", "NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert err.value.code == 422
    assert err.value.message == (
        'Service "second" is invalid: spec.ports[0].nodePort: Invalid value: 30080: '
        "provided port is already allocated")
    assert err.value.causes[0]["field"] == "spec.ports[0].nodePort"
    assert sim.store.get(sim.rt("", "v1", "services"), NS, "second") is None


async def test_out_of_range_node_port_is_invalid(sim: Sim) -> None:
    with pytest.raises(Invalid) as err:
        await create(sim, svc("low", "NodePort", ports=[{"port": 80, "nodePort": 80}]))
    assert "provided port is not in the valid range. The range of valid ports is " \
        "30000-32767" in err.value.message


async def test_requested_cluster_ip_honoured_and_conflicts_refused(sim: Sim) -> None:
    out = await create(sim, svc("dns", cluster_ip="10.96.0.10"))
    assert out["spec"]["clusterIPs"] == ["10.96.0.10"]
    with pytest.raises(Invalid) as err:
        await create(sim, svc("dns2", cluster_ip="10.96.0.10"))
    assert "failed to allocate IP 10.96.0.10: provided IP is already allocated" in \
        err.value.message
    with pytest.raises(Invalid) as err:
        await create(sim, svc("far", cluster_ip="1.1.1.1"))
    assert "is not in the valid range. The range of valid IPs is 10.96.0.0/12" in \
        err.value.message


async def test_update_keeps_allocations_and_refuses_ip_change(sim: Sim) -> None:
    S = sim.rt("", "v1", "services")
    out = await create(sim, svc("keep", "NodePort"))
    ip, port = out["spec"]["clusterIP"], out["spec"]["ports"][0]["nodePort"]
    rebuilt = svc("keep", "NodePort")  # a controller rebuilding it from a template
    rebuilt["metadata"]["resourceVersion"] = out["metadata"]["resourceVersion"]
    after = await sim.store.update(S, rebuilt)
    assert after["spec"]["clusterIP"] == ip and after["spec"]["ports"][0]["nodePort"] == port

    after["spec"]["clusterIP"] = "10.96.0.99"
    after["spec"]["clusterIPs"] = ["10.96.0.99"]
    with pytest.raises(Invalid) as err:
        await sim.store.update(S, after)
    assert "may not change once set" in err.value.message

    to_cluster_ip = sim.store.get(S, NS, "keep")
    assert to_cluster_ip is not None
    to_cluster_ip["spec"]["type"] = "ClusterIP"
    after = await sim.store.update(S, to_cluster_ip)
    assert "nodePort" not in after["spec"]["ports"][0]
    assert after["spec"]["clusterIP"] == ip
    again = await create(sim, svc("reuse", "NodePort", ports=[{"port": 80, "nodePort": port}]))
    assert again["spec"]["ports"][0]["nodePort"] == port


async def test_delete_releases_values(sim: Sim) -> None:
    S = sim.rt("", "v1", "services")
    await create(sim, svc("tmp", "NodePort", ports=[{"port": 80, "nodePort": 31000}],
                          cluster_ip="10.96.1.1"))
    await sim.store.delete(S, NS, "tmp")
    out = await create(sim, svc("next", "NodePort", ports=[{"port": 80, "nodePort": 31000}],
                                cluster_ip="10.96.1.1"))
    assert out["spec"]["ports"][0]["nodePort"] == 31000


async def test_a_create_refused_after_admission_does_not_hold_its_values(sim: Sim) -> None:
    bad = svc("Bad_Name", "NodePort", ports=[{"port": 80, "nodePort": 30500}],
              cluster_ip="10.96.5.5")
    with pytest.raises(Invalid):
        await create(sim, bad)  # admitted, then refused by name validation
    out = await create(sim, svc("good", "NodePort", ports=[{"port": 80, "nodePort": 30500}],
                                cluster_ip="10.96.5.5"))
    assert out["spec"]["ports"][0]["nodePort"] == 30500


async def test_generate_name_services_keep_their_values(sim: Sim) -> None:
    body = svc("", "NodePort", ports=[{"port": 80, "nodePort": 30600}])
    body["metadata"] = {"generateName": "gen-", "namespace": NS}
    made = await create(sim, body)
    assert made["metadata"]["name"].startswith("gen-")
    with pytest.raises(Invalid):
        await create(sim, svc("clash", "NodePort", ports=[{"port": 80, "nodePort": 30600}]))
