"""The real kubectl (1.27, 1.29, 1.33) reads our OpenAPI documents as it reads kube's.

`kubectl explain` walks kube's own definitions down to any field (OpenAPI v3 for every
minor here, and the v2 protobuf with `--output plaintext-openapiv2`); custom resources
keep their CRD schema; `kubectl apply` finds `fieldValidation` on the kind's PATCH
operation and leaves validation to the server (docs/apiserver.md, "OpenAPI for kubectl").
One server per minor for the whole module (on a thread: kubectl runs as a subprocess), each
kubectl with a fresh `--cache-dir`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from asyncop.apiserver import ApiServer
from tests.e2e.conftest import KUBECTL
from tests.e2e.test_kubectl import CRD

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")

MINORS = ["27", "29", "33"]
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
        resources:
          limits: {cpu: 100m, memory: 64Mi}
"""
#: kube's description of Container.resources, then of ResourceRequirements
RESOURCES_DOC = "Compute Resources required by this container. Cannot be updated."
REQUIREMENTS_DOC = "ResourceRequirements describes the compute resource requirements."


class Served:
    """An ApiServer reporting 1.<minor>, on its own loop in a thread, and a kubectl for it."""

    def __init__(self, minor: str, workdir: Path) -> None:
        self.minor = minor
        self.workdir = workdir
        self.loop = asyncio.new_event_loop()
        self.server = ApiServer(version=("1", minor))
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(30)
        self.kubeconfig = self.server.write_kubeconfig(workdir / "kubeconfig")
        self.calls = 0

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        self.calls += 1  # a fresh cache per call: nothing is read from an earlier answer
        cache = self.workdir / f"cache-{self.calls}"
        return subprocess.run(
            [KUBECTL, f"--kubeconfig={self.kubeconfig}", f"--cache-dir={cache}",
             "--request-timeout=20s", *args],
            input=stdin, capture_output=True, text=True, timeout=60, check=False)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.kubectl(*args, stdin=stdin)
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module", params=MINORS, ids=[f"kubectl-1.{m}" for m in MINORS])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Served]:
    s = Served(request.param, tmp_path_factory.mktemp(f"explain-1.{request.param}"))
    try:
        # the PATH dispatcher runs the kubectl of the server's minor
        client = json.loads(s.ok("version", "--client", "-o", "json"))["clientVersion"]
        assert client["minor"].rstrip("+") == s.minor, client
        s.ok("apply", "-f", "-", stdin=CRD)
        s.ok("wait", "--for=condition=Established", "--timeout=20s",
             "crd/crdplural.iksoon.test.com")
        yield s
    finally:
        s.close()


def _lines(out: str) -> list[str]:
    return [" ".join(line.split()) for line in out.splitlines()]


def test_explain_reaches_a_field_deep_inside_a_builtin_kind(served: Served) -> None:
    # kube: /openapi/v3/apis/apps/v1 holds Deployment and everything it references
    out = served.ok("explain", "deployment.spec.template.spec.containers.resources")
    assert "KIND: Deployment" in _lines(out)
    assert "FIELD: resources <ResourceRequirements>" in _lines(out)
    assert RESOURCES_DOC in out and REQUIREMENTS_DOC in out
    assert "limits <map[string]Quantity>" in _lines(out)
    assert "requests <map[string]Quantity>" in _lines(out)


def test_explain_from_the_v2_protobuf(served: Served) -> None:
    # kube: /openapi/v2 in gnostic protobuf, parsed by kubectl's proto models
    out = served.ok("explain", "deployment.spec.template.spec.containers.resources",
                    "--output", "plaintext-openapiv2")
    assert "RESOURCE: resources <Object>" in _lines(out)
    assert RESOURCES_DOC in out
    assert "limits <map[string]string>" in _lines(out)  # v2: Quantity is a string


def test_explain_a_custom_resource_field(served: Served) -> None:
    out = served.ok("explain", "crdplural.spec")
    assert "KIND: CrdKind" in _lines(out)
    assert "replicas <integer>" in _lines(out) and "choice <string>" in _lines(out)


def test_explain_recursive(served: Served) -> None:
    out = served.ok("explain", "pods", "--recursive")
    lines = _lines(out)
    assert "resources <ResourceRequirements>" in lines
    assert "limits <map[string]Quantity>" in lines
    assert len(lines) > 500  # every field of PodSpec, down to the leaves


def test_apply_leaves_validation_to_the_server(served: Served) -> None:
    if served.minor == "29":
        pytest.skip("1.27 (v2) and 1.33 (v3) cover both ways kubectl asks")
    done = served.kubectl("apply", "-f", "-", "-v=6", stdin=DEPLOYMENT)
    assert done.returncode == 0, done.stderr
    assert "deployment.apps/web created" in done.stdout
    create = [line for line in done.stderr.splitlines() if "deployments?" in line]
    assert create and "fieldValidation=Strict" in create[0]
    changed = DEPLOYMENT.replace("replicas: 1", "replicas: 2")
    done = served.kubectl("apply", "-f", "-", "-v=6", stdin=changed)
    assert done.returncode == 0, done.stderr
    patch = [line for line in done.stderr.splitlines() if "PATCH" in line]
    assert patch and "fieldValidation=Strict" in patch[0]
