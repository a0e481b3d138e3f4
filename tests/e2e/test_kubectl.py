"""The real kubectl (1.33 and 1.27, through the PATH dispatcher) against the embedded server.

Each test starts a server reporting the kubectl minor version under test, so the dispatcher
runs that kubectl; steps are grouped so that kubectl start-up costs stay small. Everything
runs with kubectl's default flags (client-side validation on), which is what makes OpenAPI,
Tables and discovery matter.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import yaml

from asyncop.testing import eventually
from tests.e2e.conftest import Background, Kubectl

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crdplural.iksoon.test.com
spec:
  group: iksoon.test.com
  scope: Namespaced
  names:
    plural: crdplural
    singular: crdsingular
    kind: CrdKind
    shortNames: [crdshort, iksoontest]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              choice:
                type: string
                pattern: ^(mysql|tomcat)$
              replicas:
                type: integer
                minimum: 1
                maximum: 10
                default: 1
          status:
            type: object
            properties:
              phase: {type: string}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: DBorWAS
      type: string
      priority: 0
      jsonPath: .spec.choice
      description: Choose Mysql or Tomcat
    - name: replicas
      type: string
      priority: 1
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
"""


def _cr(name: str, choice: str = "mysql", replicas: int = 1) -> str:
    return f"""\
apiVersion: iksoon.test.com/v1
kind: CrdKind
metadata:
  name: {name}
  labels: {{app: demo}}
spec:
  choice: {choice}
  replicas: {replicas}
"""


async def _read(path: str) -> str:
    return await asyncio.to_thread(Path(path).read_text)


def _row(out: str, name: str) -> list[str]:
    for line in out.splitlines():
        cols = line.split()
        if cols and cols[0] == name:
            return cols
    raise AssertionError(f"no row {name!r} in:\n{out}")


async def _install_crd(k: Kubectl) -> None:
    out = await k.ok("apply", "-f", k.write("crd.yaml", CRD))
    assert out.strip() == (
        "customresourcedefinition.apiextensions.k8s.io/crdplural.iksoon.test.com created")
    out = await k.ok("wait", "--for=condition=Established", "--timeout=15s",
                     "crd/crdplural.iksoon.test.com")
    assert "condition met" in out


async def test_crd_and_custom_resources(kubectl: Kubectl) -> None:
    k = kubectl
    await _install_crd(k)
    out = await k.ok("get", "crd")
    assert out.splitlines()[0].split() == ["NAME", "CREATED", "AT"]
    assert re.search(r"crdplural\.iksoon\.test\.com\s+\d{4}-\d\d-\d\dT", out)

    cr = k.write("cr.yaml", _cr("iksoon-crd-test"))
    out = await k.ok("apply", "-f", cr)
    assert out.strip() == "crdkind.iksoon.test.com/iksoon-crd-test created"
    for resource in ("crdplural", "crdsingular"):
        out = await k.ok("get", resource)
        assert out.splitlines()[0].split() == ["NAME", "DBORWAS", "AGE"]
        assert _row(out, "iksoon-crd-test")[1] == "mysql"
    wide = await k.ok("get", "crdshort", "-o", "wide")
    assert wide.splitlines()[0].split() == ["NAME", "DBORWAS", "REPLICAS", "AGE"]
    assert _row(wide, "iksoon-crd-test")[1:3] == ["mysql", "1"]
    labels = await k.ok("get", "crdshort", "--show-labels", "-A")
    assert _row(labels, "default")[1] == "iksoon-crd-test" and "app=demo" in labels

    out = await k.ok("apply", "-f", cr)
    assert out.strip() == "crdkind.iksoon.test.com/iksoon-crd-test unchanged"

    out = await k.ok("patch", "crdshort", "iksoon-crd-test", "--type", "merge",
                     "-p", '{"spec":{"replicas":3}}')
    assert "patched" in out
    out = await k.ok("get", "crdshort", "iksoon-crd-test", "-o", "jsonpath={.spec.replicas}")
    assert out == "3"
    out = await k.ok("scale", "crdshort", "iksoon-crd-test", "--replicas=5")
    assert out.strip() == "crdkind.iksoon.test.com/iksoon-crd-test scaled"
    out = await k.ok("label", "crdshort", "iksoon-crd-test", "tier=db")
    assert "labeled" in out
    out = await k.ok("wait", "--for=jsonpath={.spec.replicas}=5", "--timeout=10s",
                     "crdshort/iksoon-crd-test")
    assert "condition met" in out
    out = await k.ok("get", "crdshort", "-l", "tier=db", "-L", "tier")
    assert out.splitlines()[0].split() == ["NAME", "DBORWAS", "AGE", "TIER"]
    row = _row(out, "iksoon-crd-test")
    assert (row[1], row[3]) == ("mysql", "db")
    smp = await k("patch", "crdshort", "iksoon-crd-test", "-p", '{"spec":{"replicas":4}}')
    assert smp.rc != 0 and "application/strategic-merge-patch+json is not supported" in smp.err

    out = await k.ok("apply", "--server-side", "-f",
                     k.write("ssa.yaml", _cr("server-side", "tomcat", 2)))
    assert out.strip() == "crdkind.iksoon.test.com/server-side serverside-applied"
    yaml_out = await k.ok("get", "iksoontest", "server-side", "-o", "yaml")
    assert "choice: tomcat" in yaml_out and "replicas: 2" in yaml_out
    assert "kind: CrdKind" in yaml_out

    explained = await k.ok("explain", "crdplural.spec")
    assert re.search(r"choice\s+<string>", explained)
    assert re.search(r"replicas\s+<integer>", explained)

    described = await k.ok("describe", "crdshort", "iksoon-crd-test")
    assert re.search(r"Name:\s+iksoon-crd-test", described)
    assert re.search(r"Choice:\s+mysql", described)

    out = await k.ok("delete", "crdshort", "iksoon-crd-test", "--wait=true")
    assert out.strip() == 'crdkind.iksoon.test.com "iksoon-crd-test" deleted'
    missing = await k("get", "crdshort", "iksoon-crd-test")
    assert missing.rc != 0
    assert 'crdplural.iksoon.test.com "iksoon-crd-test" not found' in missing.err


async def test_schema_invalid_objects_are_rejected_with_the_field(kubectl: Kubectl) -> None:
    k = kubectl
    await _install_crd(k)
    bad = await k("apply", "-f", k.write("bad.yaml", _cr("bad", "oracle", 11)))
    assert bad.rc != 0
    assert 'The CrdKind "bad" is invalid' in bad.err
    assert "spec.choice: Invalid value: \"oracle\": spec.choice in body should match " \
           "'^(mysql|tomcat)$'" in bad.err
    assert "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or " \
           "equal to 10" in bad.err
    unknown = await k("apply", "-f", k.write("unknown.yaml", _cr("u") + "  colour: red\n"))
    assert unknown.rc != 0 and 'unknown field "spec.colour"' in unknown.err
    lax = await k("apply", "--validate=false", "-f", k.write("lax.yaml", _cr("u")
                                                             + "  colour: red\n"))
    assert lax.rc == 0, lax.err
    out = await k.ok("get", "crdshort", "u", "-o", "jsonpath={.spec}")
    assert "colour" not in out and '"replicas":1' in out.replace(" ", "")
    warn = await k("apply", "--validate=warn", "-f", k.write("warn.yaml", _cr("w")
                                                             + "  colour: red\n"))
    assert warn.rc == 0 and 'Warning: unknown field "spec.colour"' in warn.err


async def test_crd_update_changes_printer_columns(kubectl: Kubectl) -> None:
    k = kubectl
    await _install_crd(k)
    await k.ok("apply", "-f", k.write("a.yaml", _cr("first", replicas=4)))
    counted = CRD.replace("    - name: Age\n", "    - name: Count\n      type: integer\n"
                                                 "      jsonPath: .spec.replicas\n"
                                                 "    - name: Age\n")
    out = await k.ok("apply", "-f", k.write("crd2.yaml", counted))
    assert "configured" in out
    out = await k.ok("get", "crdplural")
    assert out.splitlines()[0].split() == ["NAME", "DBORWAS", "COUNT", "AGE"]
    assert _row(out, "first")[1:3] == ["mysql", "4"]


async def _wait_for_row(bg: Background, pattern: str, *, timeout: float = 30.0) -> None:
    """Wait for a whole output row matching `pattern`. kubectl prints a table row through a
    tabwriter that writes cell by cell, so a read can end in the middle of a row: only a
    row that is complete (newline-terminated) counts."""
    row = re.compile(pattern + r"[^\n]*\n")
    await eventually(lambda: row.search(bg.out) is not None, timeout=timeout,
                     message=f"a row matching {pattern!r} in kubectl output")


async def test_watch_streams_new_rows(kubectl: Kubectl) -> None:
    k = kubectl
    await _install_crd(k)
    await k.ok("apply", "-f", k.write("a.yaml", _cr("first")))
    watch = await k.background("get", "crdplural", "-w")
    try:
        await _wait_for_row(watch, r"first\s+mysql")
        assert "DBORWAS" in watch.out
        await k.ok("apply", "-f", k.write("b.yaml", _cr("second", "tomcat", 2)))
        await _wait_for_row(watch, r"second\s+tomcat")
    finally:
        await watch.stop()
    single = await k.background("get", "crdshort", "first", "-w", "--output-watch-events")
    try:
        await _wait_for_row(single, r"ADDED\s+first\s+mysql")
        await k.ok("patch", "crdshort", "first", "--type", "merge",
                   "-p", '{"spec":{"choice":"tomcat"}}')
        await _wait_for_row(single, r"MODIFIED\s+first\s+tomcat")
        assert "second" not in single.out
    finally:
        await single.stop()


async def test_builtin_workflow(kubectl: Kubectl) -> None:
    k = kubectl
    version = json.loads(await k.ok("version", "-o", "json"))
    assert version["clientVersion"]["minor"].rstrip("+") == k.minor
    assert version["serverVersion"]["minor"] == k.minor
    out = await k.ok("create", "namespace", "team-a")
    assert out.strip() == "namespace/team-a created"
    out = await k.ok("get", "namespace", "team-a")
    assert _row(out, "team-a")[1] == "Active"
    manifest = k.write("cm.yaml", """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a}
data: {a: "1", b: "2"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
""")
    out = await k.ok("apply", "-f", manifest)
    assert "configmap/settings created" in out and "deployment.apps/web created" in out
    out = await k.ok("get", "cm", "-n", "team-a")
    assert _row(out, "settings")[1] == "2"
    out = await k.ok("get", "deploy", "-n", "team-a", "-o", "wide")
    header = out.splitlines()[0].split()
    assert header[:5] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert "nginx:1.27" in _row(out, "web")
    out = await k.ok("apply", "-f", manifest)
    assert "configmap/settings unchanged" in out
    changed = k.write("cm2.yaml", (await _read(manifest)).replace('b: "2"', 'c: "3"').replace(
        "nginx:1.27", "nginx:1.28"))
    out = await k.ok("apply", "-f", changed)
    assert "configmap/settings configured" in out and "deployment.apps/web configured" in out
    data = json.loads(await k.ok("get", "cm", "settings", "-n", "team-a", "-o", "json"))["data"]
    assert data == {"a": "1", "c": "3"}
    image = await k.ok("get", "deploy", "web", "-n", "team-a", "-o",
                       "jsonpath={.spec.template.spec.containers[0].image}")
    assert image == "nginx:1.28"
    out = await k.ok("delete", "-f", changed)
    assert 'configmap "settings" deleted' in out


ROOT = Path(__file__).resolve().parents[2]


def _sample_names() -> list[str]:
    names = []
    for sample in sorted((ROOT / "samples").glob("*.yaml")):
        names += [d["metadata"]["name"] for d in yaml.safe_load_all(sample.read_text()) if d]
    return names


async def test_repository_crds_and_samples_apply_cleanly(kubectl: Kubectl) -> None:
    """The bundled CRDs and samples go through kubectl's default (strict) validation."""
    k = kubectl
    out = await k.ok("apply", "-f", str(ROOT / "crds"))
    assert out.count("customresourcedefinition.apiextensions.k8s.io/") >= 5
    await k.ok("wait", "--for=condition=Established", "--timeout=15s", "crd", "--all")
    out = await k.ok("apply", "-f", str(ROOT / "samples"))
    assert "created" in out
    crds = json.loads(await k.ok("get", "crd", "-o", "json"))["items"]
    plurals = ",".join(c["spec"]["names"]["plural"] for c in crds)
    listing = await k.ok("get", plurals)
    for name in _sample_names():
        assert name in listing
