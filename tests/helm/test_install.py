"""`helm install` of helm/asyncop into the embedded ApiServer (helm-python-sdk, real Helm v4).

The install runs in a subprocess (a fresh Go runtime and HOME per action) while the server
runs on this test's loop; the end state is read back from the server over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from asyncop.api import Kind
from asyncop.api.kinds import CRD, DEPLOYMENT, SERVICE, SERVICEACCOUNT
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.controllers.registry import rbac_rules

pytest.importorskip("helm_python")

CHART = Path(__file__).resolve().parents[2] / "helm" / "asyncop"
CLUSTERROLE = Kind("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                   namespaced=False)
CLUSTERROLEBINDING = Kind("rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                          "ClusterRoleBinding", namespaced=False)
ROLE = Kind("rbac.authorization.k8s.io", "v1", "roles", "Role")

INSTALL = """
import json, sys
import helm_python
req = json.loads(sys.stdin.read())
cfg = helm_python.Config(kubeconfig_path=req["kubeconfig"], namespace=req["namespace"])
try:
    rel = cfg.install(req["chart"], "asyncop", req["values"], namespace=req["namespace"],
                      create_namespace=True)
except helm_python.HelmError as exc:
    print(json.dumps({"error": type(exc).__name__ + ": " + str(exc)}))
else:
    print(json.dumps({"ok": rel}, default=str))
"""


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer() as srv:
        yield srv


async def helm_install(server: ApiServer, home: Path, namespace: str,
                       values: dict[str, Any]) -> Any:
    kubeconfig = server.write_kubeconfig(home / "kubeconfig")
    request = {"kubeconfig": str(kubeconfig), "namespace": namespace, "chart": str(CHART),
               "values": values}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", INSTALL, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    out, err = await asyncio.wait_for(proc.communicate(json.dumps(request).encode()), 90)
    lines = out.decode().strip().splitlines()
    assert proc.returncode == 0 and lines, err.decode()[-2000:]
    result = json.loads(lines[-1])
    assert "error" not in result, result["error"]
    return result["ok"]


def triples(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]
            for v in rule["verbs"]}


async def test_install_creates_crds_deployment_rbac_and_service(
    server: ApiServer, tmp_path: Path
) -> None:
    await helm_install(server, tmp_path, "asyncop-system", {})
    async with Client(ClientConfig(host=server.url)) as c:
        crds = {i["metadata"]["name"] for i in (await c.list(CRD))["items"]}
        assert {p.stem for p in (CHART / "crds").glob("*.yaml")} <= crds
        deploy = await c.get(DEPLOYMENT, "asyncop", namespace="asyncop-system")
        assert deploy["spec"]["replicas"] == 2
        pod = deploy["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == "asyncop"
        assert "--leader-elect" in pod["containers"][0]["args"]
        await c.get(SERVICEACCOUNT, "asyncop", namespace="asyncop-system")
        svc = await c.get(SERVICE, "asyncop-metrics", namespace="asyncop-system")
        assert svc["spec"]["ports"][0]["port"] == 8080
        role = await c.get(CLUSTERROLE, "asyncop")
        assert triples(role["rules"]) == triples(rbac_rules())
        binding = await c.get(CLUSTERROLEBINDING, "asyncop")
        assert binding["subjects"][0]["name"] == "asyncop"
        lease_role = await c.get(ROLE, "asyncop-leader-election", namespace="asyncop-system")
        assert ("coordination.k8s.io", "leases", "update") in triples(lease_role["rules"])
