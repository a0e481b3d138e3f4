"""Real kubectl (1.33 and 1.27, each against a server reporting its minor) and server-side
field validation of a built-in kind: kubectl leaves validation to the server when OpenAPI
says the PATCH operation takes `fieldValidation` (docs/apiserver.md, "OpenAPI for kubectl"),
so the typo'd Deployment below meets kube's strict decoding (handlers/create.go)."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl, requires_kubectl

pytestmark = requires_kubectl

MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containrs:
        - name: web
          image: nginx
      containers:
        - name: web
          image: nginx
"""
MESSAGE = ('Deployment in version "v1" cannot be handled as a Deployment: strict decoding '
           'error: unknown field "spec.template.spec.containrs"')


async def _template(kubectl: Kubectl) -> dict[str, object]:
    out = await kubectl.ok("get", "deployment", "web", "-o", "json")
    spec: dict[str, object] = json.loads(out)["spec"]["template"]["spec"]
    return spec


async def test_apply_strict_fails_with_kubes_message(kubectl: Kubectl) -> None:
    path = kubectl.write("web.yaml", MANIFEST)
    done = await kubectl("apply", "-f", path)  # --validate=strict is kubectl's default
    assert done.rc != 0
    assert MESSAGE in done.err, done.err
    missing = await kubectl("get", "deployment", "web")
    assert missing.rc != 0 and "NotFound" in missing.err  # nothing was stored


async def test_apply_validate_warn_stores_without_the_field(kubectl: Kubectl) -> None:
    path = kubectl.write("web.yaml", MANIFEST)
    done = (await kubectl("apply", "--validate=warn", "-f", path)).check()
    assert 'unknown field "spec.template.spec.containrs"' in done.err, done.err
    spec = await _template(kubectl)
    assert "containrs" not in spec and [c["name"] for c in spec["containers"]] == ["web"]


async def test_apply_validate_false_stores_silently_without_the_field(
        kubectl: Kubectl) -> None:
    path = kubectl.write("web.yaml", MANIFEST)
    done = (await kubectl("apply", "--validate=false", "-f", path)).check()
    assert "unknown field" not in done.err, done.err
    assert "containrs" not in await _template(kubectl)
