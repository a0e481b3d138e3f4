"""crds/ and samples/ through real clients: kubectl applies them unchanged, and every bundled
controller (from the registry) drives every sample to its end state."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from asyncop.api import Invalid, RawObject, Request
from asyncop.api.kinds import DEPLOYMENT, POD, SERVICE
from asyncop.apiserver import ApiServer
from asyncop.controllers.kinds import AT, CRDKIND, FOO, JINGHZHU, NETWORK
from asyncop.controllers.registry import CONTROLLERS
from asyncop.runtime.manager import Manager
from asyncop.testing import FakeClock, eventually
from tests.controllers.ctlenv import NS, Cluster, phase, samples

ROOT = Path(__file__).resolve().parents[2]


async def _kubectl(kubeconfig: Path, cache: Path, *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
async def test_kubectl_applies_crds_and_samples_unchanged(tmp_path: Path) -> None:
    async with ApiServer(simulators=False) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        cache = tmp_path / "kube-cache"
        code, out = await _kubectl(kubeconfig, cache, "apply", "-f", str(ROOT / "crds"))
        assert code == 0, out
        code, out = await _kubectl(kubeconfig, cache, "apply", "-f", str(ROOT / "samples"))
        assert code == 0, out
        assert "at.cnat.programming-kubernetes.info/example-at created" in out
        assert "crdkind.iksoon.test.com/iksoon-crd-test created" in out

        code, out = await _kubectl(kubeconfig, cache, "get", "ats")
        assert code == 0, out
        header = out.splitlines()[0].split()
        assert header == ["NAME", "SCHEDULE", "COMMAND", "PHASE", "AGE"]
        assert "2019-04-12T10:12:00Z" in out and "echo YAY" in out

        code, out = await _kubectl(kubeconfig, cache, "get", "crdshort", "-o", "wide")
        assert code == 0, out
        assert out.splitlines()[0].split()[:3] == ["NAME", "DBORWAS", "REPLICAS"]
        code, out = await _kubectl(kubeconfig, cache, "get", "jh")
        assert code == 0 and "jinghzhu-example" in out, out

        bad = tmp_path / "bad.yaml"
        bad.write_text(yaml.safe_dump({
            "apiVersion": "iksoon.test.com/v1", "kind": "CrdKind",
            "metadata": {"name": "bad"}, "spec": {"choice": "oracle", "replicas": 11},
        }))
        code, out = await _kubectl(kubeconfig, cache, "apply", "-f", str(bad))
        assert code != 0
        assert "spec.choice" in out and "spec.replicas" in out


async def test_every_controller_drives_every_sample(cluster: Cluster, clock: FakeClock) -> None:
    kinds = {k.kind: k for k in (AT, FOO, NETWORK, CRDKIND, JINGHZHU)}
    mgr = Manager(client=cluster.client, clock=clock)
    for factory in CONTROLLERS.values():
        mgr.add(factory(mgr, workers=2))
    async with mgr:
        for doc in samples():
            await cluster.client.create(kinds[doc["kind"]], doc, namespace=NS)
        await cluster.wait(AT, "example-at", lambda o: phase(o) == "RUNNING")
        await clock.advance(1)
        at = await cluster.wait(AT, "example-at", lambda o: phase(o) == "DONE")
        assert at["status"]["result"] == "Succeeded"
        later = await cluster.wait(AT, "example-at-later", lambda o: phase(o) == "PENDING")
        assert "2099-01-01T08:00:00Z" in later["status"]["message"]
        await cluster.wait(FOO, "example-foo",
                           lambda o: (o.get("status") or {}).get("availableReplicas") == 1)
        for name, ready in (("example-network", "True"), ("example-network-v6", "True"),
                            ("example-network-invalid", "False")):
            net = await cluster.wait(NETWORK, name, lambda o: (o.get("status") or {}).get(
                "conditions"))
            assert net["status"]["conditions"][0]["status"] == ready
        await cluster.wait(CRDKIND, "iksoon-crd-test",
                           lambda o: (o.get("status") or {}).get("readyReplicas") == 1)
        await cluster.wait(SERVICE, "iksoon-crd-test-mysql", lambda s: True)
        await cluster.wait(JINGHZHU, "jinghzhu-example",
                           lambda o: (o.get("status") or {}).get("state") == "Running")
        pods = await cluster.items(POD)
        workers = [p for p in pods if p["metadata"]["name"].startswith("jinghzhu-example-")]
        assert len(workers) == 2
        assert await cluster.get(DEPLOYMENT, "example-foo") is not None


async def _snapshot(cluster: Cluster) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for kind in (AT, FOO, NETWORK, CRDKIND, JINGHZHU, POD, DEPLOYMENT, SERVICE):
        for obj in await cluster.items(kind):
            out[(kind.kind, obj["metadata"]["name"])] = obj["metadata"]["resourceVersion"]
    return out


async def test_reconciling_a_converged_world_again_writes_nothing(
    cluster: Cluster, clock: FakeClock,
) -> None:
    kinds = {k.kind: k for k in (AT, FOO, NETWORK, CRDKIND, JINGHZHU)}
    owner = {AT: "at", FOO: "foo", NETWORK: "network", CRDKIND: "crdkind",
             JINGHZHU: "jinghzhu"}
    factories = [CONTROLLERS[n] for n in owner.values()]
    async with cluster.manager(*factories):
        docs = samples()
        for doc in docs:
            await cluster.client.create(kinds[doc["kind"]], doc, namespace=NS)
        await clock.advance(1)
        await cluster.wait(AT, "example-at", lambda o: phase(o) == "DONE")
        await cluster.wait(JINGHZHU, "jinghzhu-example",
                           lambda o: (o.get("status") or {}).get("state") == "Running")

        async def stable() -> dict[tuple[str, str], str] | None:
            for name in owner.values():
                await cluster.idle(name)
            before = await _snapshot(cluster)
            await cluster.clock.settle()
            return before if await _snapshot(cluster) == before else None

        before = await eventually(stable, timeout=10)
        for doc in docs:
            ctrl = cluster.controllers[owner[kinds[doc["kind"]]]]
            for _ in range(2):
                await ctrl.reconciler.reconcile(Request(doc["metadata"]["name"], NS))
        for name in owner.values():
            await cluster.idle(name)
        assert await _snapshot(cluster) == before


async def test_api_server_rejects_bad_custom_resources_naming_the_field(
    cluster: Cluster,
) -> None:
    cases: list[tuple[Any, dict[str, Any], str]] = [
        (FOO, {"deploymentName": "d", "replicas": 11}, "spec.replicas"),
        (JINGHZHU, {"desired": -1}, "spec.desired"),
        (CRDKIND, {"choice": "mysql|tomcat", "replicas": 1}, "spec.choice"),
        (AT, {"command": "echo"}, "spec.schedule"),
        (NETWORK, {"cidr": "10.0.0.0/8"}, "spec.gateway"),
    ]
    for kind, spec, field in cases:
        obj: RawObject = {"apiVersion": kind.api_version, "kind": kind.kind,
                          "metadata": {"name": "bad", "namespace": NS}, "spec": spec}
        with pytest.raises(Invalid) as err:
            await cluster.client.create(kind, obj)
        assert field in [c.get("field") for c in err.value.causes], (kind, err.value.causes)
