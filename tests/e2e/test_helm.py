"""Helm v4 (helm-python-sdk) against the embedded API server: install, upgrade, uninstall.

Each Helm action runs in a short-lived subprocess (`python -c DRIVER`) while the server runs on
this test's event loop. A subprocess gives every action a fresh Go runtime with its own HOME
(Helm caches discovery under `$HOME/.kube/cache`, and the Go runtime reads the environment only
once, when the library is loaded), and a known field manager: Helm applies with
`fieldManager=basename(argv[0])`, here the interpreter's file name.

The chart (charts/demo) has a CRD in crds/ and a ServiceAccount, Role, RoleBinding, ConfigMap,
an optional second ConfigMap, a Deployment, a Service and a Widget custom resource. Helm writes
every object with server-side apply and its release records as protobuf Secrets; the tests
check the end state in the server's store.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from asyncop.apiserver import ApiServer

pytest.importorskip("helm_python")

CHART = str(Path(__file__).parent / "charts" / "demo")
MANAGER = Path(sys.executable).name

DRIVER = """
import json, sys
import helm_python
req = json.loads(sys.stdin.read())
cfg = helm_python.Config(kubeconfig_path=req["kubeconfig"], namespace=req["namespace"],
                         storage_driver=req["storage_driver"])
try:
    out = getattr(cfg, req["action"])(*req["args"], **req["kwargs"])
except helm_python.HelmError as exc:
    print(json.dumps({"error": type(exc).__name__ + ": " + str(exc)}))
else:
    print(json.dumps({"ok": out}))
"""


class HelmError(AssertionError):
    pass


class Helm:
    """helm-python-sdk actions, each in its own process (see the module docstring)."""

    def __init__(self, kubeconfig: Path, home: Path, *, namespace: str = "default",
                 storage_driver: str | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.home = home
        self.namespace = namespace
        self.storage_driver = storage_driver

    async def _run(self, action: str, *args: Any, **kwargs: Any) -> Any:
        request = json.dumps({"kubeconfig": str(self.kubeconfig), "namespace": self.namespace,
                              "storage_driver": self.storage_driver, "action": action,
                              "args": args, "kwargs": kwargs})
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", DRIVER,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"HOME": str(self.home), "PATH": "/usr/bin:/bin"},
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(request.encode()), 90)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise HelmError(f"helm {action} did not finish") from None
        lines = out.decode().strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise HelmError(f"helm {action} crashed ({proc.returncode}): {err.decode()[-2000:]}")
        result = json.loads(lines[-1])
        if "error" in result:
            raise HelmError(f"helm {action}: {result['error']}")
        return result["ok"]

    async def install(self, name: str, values: dict[str, Any], **kw: Any) -> dict[str, Any]:
        out: dict[str, Any] = await self._run("install", CHART, name, values, **kw)
        return out

    async def upgrade(self, name: str, values: dict[str, Any], **kw: Any) -> dict[str, Any]:
        out: dict[str, Any] = await self._run("upgrade", CHART, name, values, **kw)
        return out

    async def uninstall(self, name: str, **kw: Any) -> dict[str, Any]:
        out: dict[str, Any] = await self._run("uninstall", name, **kw)
        return out

    async def status(self, name: str) -> dict[str, Any]:
        out: dict[str, Any] = await self._run("status", name)
        return out

    async def history(self, name: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = await self._run("history", name)
        return out

    async def rollback(self, name: str, **kw: Any) -> None:
        await self._run("rollback", name, **kw)

    async def list(self, **kw: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = await self._run("list", **kw)
        return out


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    async with ApiServer() as server:
        yield server


@pytest.fixture
async def helm(apiserver: ApiServer, tmp_path: Path) -> Helm:
    home = tmp_path / "home"
    home.mkdir()
    return Helm(apiserver.write_kubeconfig(tmp_path / "kubeconfig"), home)


# ------------------------------------------------------------------ store access


def get(server: ApiServer, gvr: str, name: str, namespace: str | None = "default"
        ) -> dict[str, Any] | None:
    group, version, plural = gvr.split("/")
    store = server.store
    return store.get(store.resolve(group, version, plural), namespace, name)


def names(server: ApiServer, gvr: str, namespace: str = "default") -> list[str]:
    group, version, plural = gvr.split("/")
    store = server.store
    return sorted(o["metadata"]["name"] for o in store.list(store.resolve(group, version, plural),
                                                           namespace))


CM, SECRET = "/v1/configmaps", "/v1/secrets"
DEPLOY, SVC, SA = "apps/v1/deployments", "/v1/services", "/v1/serviceaccounts"
ROLE, BINDING = "rbac.authorization.k8s.io/v1/roles", "rbac.authorization.k8s.io/v1/rolebindings"
WIDGET, CRD = "example.com/v1/widgets", "apiextensions.k8s.io/v1/customresourcedefinitions"


def release_record(server: ApiServer, name: str, revision: int) -> tuple[dict[str, Any], Any]:
    """The release Secret and the release it encodes (base64 of base64(gzip(JSON)))."""
    secret = get(server, SECRET, f"sh.helm.release.v1.{name}.v{revision}")
    assert secret is not None, f"release secret v{revision} is missing"
    payload = base64.b64decode(base64.b64decode(secret["data"]["release"]))
    return secret, json.loads(gzip.decompress(payload))


def apply_entry(obj: dict[str, Any]) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [e for e in obj["metadata"].get("managedFields", [])
               if e["manager"] == MANAGER and e["operation"] == "Apply"]
    assert len(entries) == 1, obj["metadata"].get("managedFields")
    return entries[0]


# ------------------------------------------------------------------ tests


async def test_install_upgrade_uninstall(apiserver: ApiServer, helm: Helm) -> None:
    values = {"greeting": "hi", "extra": "x", "cache": {"enabled": True}}
    release = await helm.install("rel1", values)
    assert (release["status"], release["revision"]) == ("deployed", 1)

    crd = get(apiserver, CRD, "widgets.example.com", None)
    assert crd is not None
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions["Established"] == "True"

    cm = get(apiserver, CM, "rel1-demo")
    assert cm is not None
    assert cm["data"] == {"greeting": "hi", "extra": "x"}
    assert cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    assert cm["metadata"]["annotations"] == {"meta.helm.sh/release-name": "rel1",
                                             "meta.helm.sh/release-namespace": "default"}
    assert apply_entry(cm)["fieldsV1"]["f:data"] == {"f:extra": {}, "f:greeting": {}}
    assert get(apiserver, CM, "rel1-cache") is not None
    assert get(apiserver, SA, "rel1-demo") is not None
    role = get(apiserver, ROLE, "rel1-demo")
    assert role is not None
    assert role["rules"][0]["verbs"] == ["get", "list", "watch"]
    binding = get(apiserver, BINDING, "rel1-demo")
    assert binding is not None
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "rel1-demo",
                                    "namespace": "default"}]
    deploy = get(apiserver, DEPLOY, "rel1-demo")
    assert deploy is not None
    assert deploy["spec"]["replicas"] == 1
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"]) == ("web", "nginx:1.27")
    svc = get(apiserver, SVC, "rel1-demo")
    assert svc is not None
    assert [(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] == [(80, "http")]
    widget = get(apiserver, WIDGET, "rel1-demo")
    assert widget is not None
    assert widget["spec"] == {"size": 3}

    secret, record = release_record(apiserver, "rel1", 1)
    assert secret["type"] == "helm.sh/release.v1"
    assert {k: secret["metadata"]["labels"][k] for k in ("owner", "name", "status", "version")} \
        == {"owner": "helm", "name": "rel1", "status": "deployed", "version": "1"}
    assert (record["name"], record["version"], record["info"]["status"]) == ("rel1", 1, "deployed")
    assert record["config"] == values

    # upgrade: a value changes, an optional key and a whole object leave the chart
    generation = deploy["metadata"]["generation"]
    release = await helm.upgrade("rel1", {"greeting": "bye", "replicas": 2,
                                          "widget": {"enabled": True, "size": 5}})
    assert (release["status"], release["revision"]) == ("deployed", 2)
    cm = get(apiserver, CM, "rel1-demo")
    assert cm is not None
    assert cm["data"] == {"greeting": "bye"}  # SSA removed the key Helm no longer applies
    assert get(apiserver, CM, "rel1-cache") is None
    deploy = get(apiserver, DEPLOY, "rel1-demo")
    assert deploy is not None
    assert deploy["spec"]["replicas"] == 2
    assert deploy["metadata"]["generation"] == generation + 1
    widget = get(apiserver, WIDGET, "rel1-demo")
    assert widget is not None
    assert widget["spec"] == {"size": 5}
    old, _ = release_record(apiserver, "rel1", 1)
    new, record = release_record(apiserver, "rel1", 2)
    assert old["metadata"]["labels"]["status"] == "superseded"
    assert new["metadata"]["labels"]["status"] == "deployed"
    assert record["info"]["status"] == "deployed"

    # the same values again: every apply is a no-op (no new resourceVersion)
    before = {gvr: get(apiserver, gvr, "rel1-demo") for gvr in (CM, DEPLOY, SVC, WIDGET)}
    await helm.upgrade("rel1", {"greeting": "bye", "replicas": 2,
                                "widget": {"enabled": True, "size": 5}})
    for gvr, obj in before.items():
        after = get(apiserver, gvr, "rel1-demo")
        assert obj is not None and after is not None
        assert after["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"], gvr

    status = await helm.status("rel1")
    assert (status["status"], status["revision"]) == ("deployed", 3)
    assert [r["revision"] for r in await helm.history("rel1")] == [1, 2, 3]

    await helm.uninstall("rel1")
    for gvr in (CM, DEPLOY, SVC, SA, ROLE, BINDING, WIDGET):
        assert get(apiserver, gvr, "rel1-demo") is None, gvr
    assert names(apiserver, SECRET) == []
    # crds/ are never deleted by Helm
    assert get(apiserver, CRD, "widgets.example.com", None) is not None


@pytest.mark.parametrize("wait", ["watcher", "legacy"])
async def test_install_upgrade_uninstall_waiting_for_readiness(
    apiserver: ApiServer, helm: Helm, wait: str
) -> None:
    release = await helm.install("rel2", {"replicas": 2}, wait=wait, timeout=30)
    assert release["status"] == "deployed"
    # Helm returned only once it saw the Deployment rolled out (kstatus, or legacy polling)
    deploy = get(apiserver, DEPLOY, "rel2-demo")
    assert deploy is not None
    status = deploy["status"]
    assert status["observedGeneration"] == deploy["metadata"]["generation"]
    assert status["readyReplicas"] == status["availableReplicas"] == 2
    assert {c["type"]: c["status"] for c in status["conditions"]}["Available"] == "True"

    release = await helm.upgrade("rel2", {"replicas": 1, "image": "nginx:1.28"},
                                 wait=wait, timeout=30)
    assert release["status"] == "deployed"
    deploy = get(apiserver, DEPLOY, "rel2-demo")
    assert deploy is not None
    assert deploy["status"]["updatedReplicas"] == deploy["status"]["readyReplicas"] == 1
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"

    await helm.uninstall("rel2", wait=wait, timeout=30)
    assert get(apiserver, DEPLOY, "rel2-demo") is None
    assert names(apiserver, SECRET) == []


async def test_install_into_a_new_namespace(apiserver: ApiServer, helm: Helm) -> None:
    release = await helm.install("rel3", {"widget": {"enabled": False}}, namespace="newns",
                                 create_namespace=True)
    assert release["status"] == "deployed"
    ns = get(apiserver, "/v1/namespaces", "newns", None)
    assert ns is not None
    assert ns["metadata"]["labels"]["name"] == "newns"
    assert get(apiserver, CM, "rel3-demo", "newns") is not None
    assert get(apiserver, WIDGET, "rel3-demo", "newns") is None
    assert names(apiserver, SECRET, "newns") == ["sh.helm.release.v1.rel3.v1"]
    assert "rel3-demo" not in names(apiserver, CM)


async def test_install_refuses_to_adopt_an_unowned_object(apiserver: ApiServer, helm: Helm) -> None:
    store = apiserver.store
    await store.create(store.resolve("", "v1", "configmaps"), {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "rel4-demo", "namespace": "default"}, "data": {"mine": "1"}})
    with pytest.raises(HelmError, match="invalid ownership metadata"):
        await helm.install("rel4", {})
    cm = get(apiserver, CM, "rel4-demo")
    assert cm is not None
    assert cm["data"] == {"mine": "1"}


async def test_rollback_restores_the_previous_revision(apiserver: ApiServer, helm: Helm) -> None:
    await helm.install("rel5", {"extra": "x", "cache": {"enabled": True}})
    await helm.upgrade("rel5", {"greeting": "bye"})
    assert get(apiserver, CM, "rel5-cache") is None
    await helm.rollback("rel5", version=1)
    cm = get(apiserver, CM, "rel5-demo")
    assert cm is not None
    assert cm["data"] == {"greeting": "hello", "extra": "x"}
    assert get(apiserver, CM, "rel5-cache") is not None
    labels = {n: get(apiserver, SECRET, n)["metadata"]["labels"]["status"]  # type: ignore[index]
              for n in names(apiserver, SECRET)}
    assert labels == {"sh.helm.release.v1.rel5.v1": "superseded",
                      "sh.helm.release.v1.rel5.v2": "superseded",
                      "sh.helm.release.v1.rel5.v3": "deployed"}
    listed = await helm.list(all_namespaces=True)
    assert [(r["name"], r["revision"], r["status"]) for r in listed] == [("rel5", 3, "deployed")]


async def test_upgrade_conflicts_with_a_field_another_manager_changed(
    apiserver: ApiServer, helm: Helm
) -> None:
    """Helm 4 applies with force=false: a field someone else took over is a 409 conflict."""
    await helm.install("rel6", {})
    store = apiserver.store
    deploy_rt = store.resolve("apps", "v1", "deployments")
    async with aiohttp.ClientSession() as http, http.patch(
        f"{apiserver.url}/apis/apps/v1/namespaces/default/deployments/rel6-demo"
        "?fieldManager=autoscaler", json={"spec": {"replicas": 5}},
        headers={"Content-Type": "application/merge-patch+json"},
    ) as resp:
        assert resp.status == 200
    conflict = 'conflict with "autoscaler" using apps/v1: .spec.replicas'
    with pytest.raises(HelmError, match=re.escape(conflict)):
        await helm.upgrade("rel6", {"greeting": "changed"})
    deploy = store.get(deploy_rt, "default", "rel6-demo")
    assert deploy is not None
    assert deploy["spec"]["replicas"] == 5
    secret, _ = release_record(apiserver, "rel6", 2)
    assert secret["metadata"]["labels"]["status"] == "failed"


async def test_configmap_release_storage(apiserver: ApiServer, tmp_path: Path) -> None:
    """storage_driver="configmap": the release records are protobuf ConfigMaps."""
    home = tmp_path / "home-cm"
    home.mkdir()
    helm = Helm(apiserver.write_kubeconfig(tmp_path / "kubeconfig-cm"), home,
                storage_driver="configmap")
    await helm.install("rel7", {"greeting": "stored"})
    await helm.upgrade("rel7", {"greeting": "again"})
    records = {n: get(apiserver, CM, n) for n in names(apiserver, CM) if n.startswith("sh.helm")}
    assert sorted(records) == ["sh.helm.release.v1.rel7.v1", "sh.helm.release.v1.rel7.v2"]
    v2 = records["sh.helm.release.v1.rel7.v2"]
    assert v2 is not None
    assert v2["metadata"]["labels"]["status"] == "deployed"
    release = json.loads(gzip.decompress(base64.b64decode(v2["data"]["release"])))
    assert release["config"] == {"greeting": "again"}
    assert names(apiserver, SECRET) == []
    await helm.uninstall("rel7")
    assert [n for n in names(apiserver, CM) if n.startswith(("sh.helm", "rel7"))] == []


async def test_server_dry_run_creates_nothing(apiserver: ApiServer, helm: Helm) -> None:
    # crds/ are not installed by a dry run, so the Widget (a CR) is left out
    release = await helm.install("rel8", {"widget": {"enabled": False}}, dry_run="server")
    assert release["status"] == "pending-install"
    assert "rel8-demo" not in names(apiserver, CM)
    assert names(apiserver, DEPLOY) == []
    assert names(apiserver, SECRET) == []
    assert get(apiserver, CRD, "widgets.example.com", None) is None
