"""Real kubectl (1.27 and 1.33 via the dispatcher, picked by /version) against the server."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import yaml

from asyncop.apiserver import ApiServer
from tests.apiserver.crdkit import WIDGET_CRD

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")


class Kubectl:
    def __init__(self, kubeconfig: Path, cache: Path) -> None:
        self.base = ["kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache)]

    async def __call__(self, *args: str, stdin: str | None = None, ok: bool = True) -> str:
        proc = await asyncio.create_subprocess_exec(
            *self.base, *args, stdin=asyncio.subprocess.PIPE if stdin else None,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
        if ok:
            assert proc.returncode == 0, f"kubectl {' '.join(args)}: {err.decode()}"
        return out.decode() + err.decode()


@pytest.mark.parametrize("minor", ["27", "33"])
async def test_kubectl_crd_workflow(minor: str, tmp_path: Path) -> None:
    async with ApiServer(simulators=True, version=("1", minor)) as srv:
        kubectl = Kubectl(srv.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path / "cache")
        version = json.loads(await kubectl("version", "-o", "json"))
        assert version["serverVersion"]["minor"] == minor
        assert version["clientVersion"]["minor"] == minor
        out = await kubectl("apply", "-f", "-", stdin=yaml.safe_dump(WIDGET_CRD))
        assert "widgets.example.com created" in out
        widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
                  "spec": {"size": 2}}
        out = await kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget))
        assert "widget.example.com/w1 created" in out
        assert "w1" in await kubectl("get", "wd")
        await kubectl("scale", "widget/w1", "--replicas=4")
        rt = srv.store.resolve("example.com", "v1", "widgets")
        stored = srv.store.get(rt, "default", "w1")
        assert stored is not None and stored["spec"]["size"] == 4
        await kubectl("label", "widget", "w1", "team=a")
        stored = srv.store.get(rt, "default", "w1")
        assert stored is not None and stored["metadata"]["labels"] == {"team": "a"}
        resources = await kubectl("api-resources")
        assert "widgets" in resources and "deployments" in resources
        await kubectl("create", "configmap", "c1", "--from-literal=a=b")
        out = await kubectl("delete", "widget", "w1")
        assert '"w1" deleted' in out
        assert srv.store.get(rt, "default", "w1") is None
        out = await kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(widget))
        assert "serverside-applied" in out
        stored = srv.store.get(rt, "default", "w1")
        assert stored is not None and stored["metadata"]["managedFields"][0]["manager"] == \
            "kubectl"


async def test_kubectl_deployment_rollout(tmp_path: Path) -> None:
    async with ApiServer(simulators=True, version=("1", "30")) as srv:
        kubectl = Kubectl(srv.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path / "cache")
        await kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
        out = await kubectl("rollout", "status", "deployment/web", "--timeout=20s")
        assert "successfully rolled out" in out
        out = await kubectl("delete", "namespace", "default", ok=False)
        assert "forbidden" in out


async def test_kubectl_auth_reviews(tmp_path: Path) -> None:
    async with ApiServer(simulators=False, version=("1", "33")) as srv:
        kubectl = Kubectl(srv.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path / "cache")
        assert (await kubectl("auth", "can-i", "create", "pods")).strip() == "yes"
        assert "system:anonymous" in await kubectl("auth", "whoami")
        rt = srv.store.resolve("authorization.k8s.io", "v1", "selfsubjectaccessreviews")
        assert srv.store.list(rt) == []  # answered, never stored


async def test_a_crd_plural_that_a_built_in_also_uses_resolves_to_the_built_in(
        tmp_path: Path) -> None:
    """kube's discovery lists built-in groups by their APIService priority, before every CRD
    group (priority 1000), so kubectl resolves `deployments` to apps/v1 even when a CRD group
    sorts first by name (`aaa.example.com`); the CRD's kind needs its full name."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "deployments.aaa.example.com"},
           "spec": {"group": "aaa.example.com", "scope": "Namespaced",
                    "names": {"plural": "deployments", "singular": "deployment",
                              "kind": "Deployment"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}}]}}
    async with ApiServer(simulators=False, version=("1", "33")) as srv:
        kubectl = Kubectl(srv.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path / "cache")
        await kubectl("apply", "-f", "-", stdin=yaml.safe_dump(crd))
        await kubectl("wait", "--for=condition=Established",
                      "crd/deployments.aaa.example.com", "--timeout=20s")
        await kubectl("create", "deployment", "web", "--image=nginx")
        # a fresh discovery cache, which knows the CRD group
        fresh = Kubectl(tmp_path / "kubeconfig", tmp_path / "cache2")
        assert "deployment.apps/web" in await fresh("get", "deployments", "-o", "name")
        out = await fresh("get", "deployments.aaa.example.com", "-o", "name")
        assert "web" not in out
