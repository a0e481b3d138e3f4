"""The simulators as real clients see them: through the embedded ApiServer over HTTP."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from asyncop.api import Invalid, NotFound
from asyncop.api.kinds import DEPLOYMENT, POD, REPLICASET, SERVICE
from asyncop.apiserver import ApiServer
from asyncop.client import Client
from asyncop.client.config import load_config
from asyncop.testing import eventually

KUBECTL = shutil.which("kubectl")

WEB = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}},
}


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    srv = ApiServer()
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[Client]:
    async with Client(await load_config(url=server.url)) as c:
        yield c


async def test_deployment_rollout_and_foreground_delete_over_http(client: Client) -> None:
    await client.create(DEPLOYMENT, WEB)  # type: ignore[arg-type]

    async def available() -> dict[str, Any] | None:
        d: dict[str, Any] = dict(await client.get(DEPLOYMENT, "web", namespace="default"))
        st = d.get("status") or {}
        return d if st.get("availableReplicas") == 3 and st.get("updatedReplicas") == 3 else None

    d = await eventually(available, timeout=10, message="deployment available")
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    rses = (await client.list(REPLICASET, namespace="default", label_selector="app=web"))["items"]
    assert len(rses) == 1
    assert rses[0]["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    thash = rses[0]["metadata"]["labels"]["pod-template-hash"]
    pods = (await client.list(POD, namespace="default",
                              label_selector=f"app=web,pod-template-hash={thash}"))["items"]
    assert sorted(p["status"]["phase"] for p in pods) == ["Running"] * 3

    await client.delete(DEPLOYMENT, "web", namespace="default", propagation_policy="Foreground")

    async def all_gone() -> bool:
        try:
            await client.get(DEPLOYMENT, "web", namespace="default")
            return False
        except NotFound:
            pass
        left = (await client.list(POD, namespace="default"))["items"]
        left += (await client.list(REPLICASET, namespace="default"))["items"]
        return not left

    await eventually(all_gone, timeout=10, message="deployment tree deleted")


async def test_service_allocation_over_http(client: Client) -> None:
    body = {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "np", "namespace": "default"},
            "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}
    out = await client.create(SERVICE, body)  # type: ignore[arg-type]
    assert out["spec"]["clusterIP"].startswith("10.")
    body["metadata"]["name"] = "np2"  # type: ignore[index]
    with pytest.raises(Invalid) as err:
        await client.create(SERVICE, body)  # type: ignore[arg-type]
    assert err.value.code == 422
    assert "provided port is already allocated" in str(err.value)


MANIFEST = """\
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: {app: web}
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: shop
spec:
  serviceName: db
  replicas: 2
  updateStrategy: {type: RollingUpdate}  # the server does not default it yet
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: postgres:16
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: shop
spec:
  updateStrategy: {type: RollingUpdate}  # the server does not default it yet
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: fluent-bit:3
---
apiVersion: batch/v1
kind: Job
metadata:
  name: seed
  namespace: shop
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: seed
        image: seed:1
"""


async def kubectl(kubeconfig: Path, cache: Path, *args: str) -> tuple[int, str]:
    assert KUBECTL is not None
    proc = await asyncio.create_subprocess_exec(
        KUBECTL, f"--kubeconfig={kubeconfig}", f"--cache-dir={cache}", "--request-timeout=20s",
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        stdin=asyncio.subprocess.DEVNULL)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")
async def test_kubectl_rollout_status_and_namespace_deletion(server: ApiServer,
                                                             tmp_path: Path) -> None:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    cache = tmp_path / "cache"
    manifest = tmp_path / "shop.yaml"
    manifest.write_text(MANIFEST)
    rc, out = await kubectl(config, cache, "apply", "-f", str(manifest))
    assert rc == 0, out
    rc, out = await kubectl(config, cache, "rollout", "status", "deployment/web", "-n", "shop",
                            "--timeout=30s")
    assert rc == 0, out
    assert 'deployment "web" successfully rolled out' in out
    rc, out = await kubectl(config, cache, "set", "image", "deployment/web", "web=nginx:1.28",
                            "-n", "shop")
    assert rc == 0, out
    rc, out = await kubectl(config, cache, "rollout", "status", "deployment/web", "-n", "shop",
                            "--timeout=30s")
    assert rc == 0 and "successfully rolled out" in out, out
    rc, out = await kubectl(config, cache, "rollout", "undo", "deployment/web", "-n", "shop")
    assert rc == 0 and "rolled back" in out, out
    rc, out = await kubectl(config, cache, "rollout", "status", "deployment/web", "-n", "shop",
                            "--timeout=30s")
    assert rc == 0 and "successfully rolled out" in out, out
    rc, out = await kubectl(config, cache, "get", "deployment/web", "-n", "shop", "-o",
                            "jsonpath={.spec.template.spec.containers[0].image}")
    assert (rc, out) == (0, "nginx:1.27"), out
    for workload in ("statefulset/db", "daemonset/agent"):
        rc, out = await kubectl(config, cache, "rollout", "status", workload, "-n", "shop",
                                "--timeout=30s")
        assert rc == 0 and "roll" in out, out
    rc, out = await kubectl(config, cache, "wait", "--for=condition=complete", "job/seed",
                            "-n", "shop", "--timeout=30s")
    assert rc == 0 and "condition met" in out, out
    rc, out = await kubectl(config, cache, "get", "nodes", "-o", "name")
    assert (rc, out.strip()) == (0, "node/asyncop-node"), out
    rc, out = await kubectl(config, cache, "get", "pvc", "data-db-1", "-n", "shop",
                            "-o", "jsonpath={.status.phase}")
    assert (rc, out) == (0, "Bound"), out
    rc, out = await kubectl(config, cache, "get", "svc", "web", "-n", "shop",
                            "-o", "jsonpath={.spec.clusterIP}")
    assert rc == 0 and out.startswith("10.9"), out
    rc, out = await kubectl(config, cache, "delete", "namespace", "shop", "--timeout=30s")
    assert rc == 0, out
    rc, out = await kubectl(config, cache, "get", "namespace", "shop")
    assert rc != 0 and "NotFound" in out, out


async def test_simulators_resume_after_a_restart_keeping_state(server: ApiServer) -> None:
    store = server.store
    D = store.resolve("apps", "v1", "deployments")
    S = store.resolve("", "v1", "services")
    await store.create(D, {**WEB, "spec": {**WEB["spec"], "replicas": 1}})  # type: ignore[dict-item]
    await eventually(lambda: (store.get(D, "default", "web") or {}).get("status", {})
                     .get("availableReplicas") == 1, timeout=10, message="first rollout")
    await server.restart(keep_state=True)
    store = server.store
    d = store.get(D, "default", "web")
    assert d is not None
    d["spec"]["replicas"] = 2
    await store.update(D, d)
    await eventually(lambda: (store.get(D, "default", "web") or {}).get("status", {})
                     .get("availableReplicas") == 2, timeout=10, message="rollout after restart")
    a = await store.create(S, {"metadata": {"name": "a", "namespace": "default"},
                               "spec": {"ports": [{"port": 80}]}})
    b = await store.create(S, {"metadata": {"name": "b", "namespace": "default"},
                               "spec": {"ports": [{"port": 80}]}})
    assert a["spec"]["clusterIP"] != b["spec"]["clusterIP"]
