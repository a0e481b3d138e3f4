"""Manifests with the real kubectl: a valid corpus applies as written, an invalid one is refused
in kube's words.

`manifests/valid.yaml` holds what operators' children and charts contain (a Deployment with
probes, affinity, env from ConfigMaps and Secrets, volumes; Services of three kinds, a
StatefulSet with volumeClaimTemplates, a DaemonSet, a Job and a CronJob, an Ingress with TLS,
an HPA with behavior, a PDB, a NetworkPolicy both ways, RBAC, a PVC, a Lease). kubectl applies
it, and every field given is stored as given (the server adds its defaults; it drops nothing).

The invalid corpus is the set the issue measured — mistakes an operator's child objects
contain — each with the message kube-apiserver 1.33 answers and the kube function that words
it (a 400 as kubectl prints the server's message; a 422 as kubectl renders its causes, `The
Kind "name" is invalid: field: …`). kubectl's default `--validate=strict` sends
`fieldValidation=Strict`, so unknown fields are refused too. Nothing refused is stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.e2e.conftest import Kubectl

MANIFESTS = Path(__file__).parent / "manifests"

POD_TEMPLATE = """
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
        - name: c
          image: busybox:1.36
"""


def deployment(extra: str = "", container: str = "", replicas: str = "1") -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: bad, namespace: default}}"
            f"\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: x}}}}"
            + POD_TEMPLATE + "".join(f"          {line}\n" for line in container.splitlines())
            + extra)


PREFIX = 'Deployment in version "v1" cannot be handled as a Deployment: '
INVALID: list[tuple[str, str, str]] = [
    # (what, manifest, what kube says; the comment names where kube says it)
    ("misspelt field", deployment().replace("containers:", "containrs:"),
     # kube: the strict JSON decoder (sigs.k8s.io/json) under fieldValidation=Strict
     PREFIX + 'strict decoding error: unknown field "spec.template.spec.containrs"'),
    ("unknown field in a container", deployment(container="imagePullPolicyy: Always"),
     PREFIX + 'strict decoding error: unknown field '
     '"spec.template.spec.containers[0].imagePullPolicyy"'),
    ("replicas: three", deployment(replicas="three"),
     # kube: Go's encoding/json UnmarshalTypeError
     PREFIX + "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas "
     "of type int32"),
    ("containerPort 99999", deployment(container="ports: [{containerPort: 99999}]"),
     # kube: ValidateContainerPorts (validation.validatePortNumOrName → IsValidPortNum)
     'The Deployment "bad" is invalid: spec.template.spec.containers[0].ports[0].'
     "containerPort: Invalid value: 99999: must be between 1 and 65535, inclusive"),
    ("quantity 64Mo", deployment(container="resources: {limits: {memory: 64Mo}}"),
     # kube: resource.Quantity's UnmarshalJSON (ParseQuantity: ErrSuffix)
     PREFIX + "quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("env name A=B", deployment(container="env: [{name: A=B, value: x}]"),
     # kube 1.33: validateEnvVarName with RelaxedEnvironmentVariableValidation (on)
     'The Deployment "bad" is invalid: spec.template.spec.containers[0].env[0].name: '
     'Invalid value: "A=B": a valid environment variable name must consist only of printable '
     "ASCII characters other than '='"),
    ("pod restartPolicy Never in a Deployment",
     deployment().replace("    spec:\n      containers:",
                          "    spec:\n      restartPolicy: Never\n      containers:"),
     # kube: ValidatePodTemplateSpecForReplicaSet
     'The Deployment "bad" is invalid: spec.template.spec.restartPolicy: Unsupported value: '
     '"Never": supported values: "Always"'),
    ("Service port 70000",
     "apiVersion: v1\nkind: Service\nmetadata: {name: bad, namespace: default}\n"
     "spec:\n  ports: [{port: 70000}]\n",
     # kube: ValidateService (validateServicePort → IsValidPortNum); targetPort was
     # defaulted from port (SetDefaults_Service), so it is refused too
     'The Service "bad" is invalid: \n* spec.ports[0].port: Invalid value: 70000: must be '
     "between 1 and 65535, inclusive\n* spec.ports[0].targetPort: Invalid value: 70000: must "
     "be between 1 and 65535, inclusive"),
    ("Job restartPolicy Always",
     "apiVersion: batch/v1\nkind: Job\nmetadata: {name: bad, namespace: default}\n"
     "spec:\n  template:\n    spec:\n      restartPolicy: Always\n      containers:\n"
     "        - {name: c, image: busybox:1.36}\n",
     # kube: validateJobSpec (restartPolicy must be OnFailure or Never)
     'The Job "bad" is invalid: spec.template.spec.restartPolicy: Required value: valid '
     'values: "OnFailure", "Never"'),
    ("CronJob schedule 61 * * * *",
     "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: bad, namespace: default}\n"
     "spec:\n  schedule: '61 * * * *'\n  jobTemplate:\n    spec:\n      template:\n"
     "        spec:\n          restartPolicy: Never\n          containers:\n"
     "            - {name: c, image: busybox:1.36}\n",
     # kube: validateScheduleFormat (robfig/cron's parse error)
     'The CronJob "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": end of '
     "range (61) above maximum (59): 61"),
    ("ConfigMap key with a slash",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: default}\n"
     "data: {a/b: x}\n",
     # kube: ValidateConfigMap (IsConfigMapKey)
     'The ConfigMap "bad" is invalid: data[a/b]: Invalid value: "a/b": a valid config key must '
     "consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  "
     "or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"),
    ("Ingress path without a pathType",
     "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad, namespace: "
     "default}\nspec:\n  rules:\n    - http:\n        paths:\n          - path: /\n"
     "            backend: {service: {name: web, port: {number: 80}}}\n",
     # kube: validateHTTPIngressPath
     'The Ingress "bad" is invalid: spec.rules[0].http.paths[0].pathType: '
     "Required value: pathType must be specified"),
    ("PDB with both minAvailable and maxUnavailable",
     "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: bad, namespace: "
     "default}\nspec:\n  minAvailable: 1\n  maxUnavailable: 1\n"
     "  selector: {matchLabels: {app: x}}\n",
     # kube: ValidatePodDisruptionBudgetSpec
     'The PodDisruptionBudget "bad" is invalid: spec: Invalid value: '),
]


def _contains(stored: Any, given: Any, path: str = "") -> list[str]:
    """Where `given` is not part of `stored` (dicts: every key of given; lists: element-wise)."""
    if isinstance(given, dict):
        if not isinstance(stored, dict):
            return [path]
        out: list[str] = []
        for key, value in given.items():
            if key == "stringData":
                continue  # write-only: folded into data
            if key not in stored:
                out.append(f"{path}.{key}")
            else:
                out += _contains(stored[key], value, f"{path}.{key}")
        return out
    if isinstance(given, list):
        if not isinstance(stored, list) or len(stored) != len(given):
            return [path]
        return [p for i, (s, g) in enumerate(zip(stored, given, strict=True))
                for p in _contains(s, g, f"{path}[{i}]")]
    return [] if stored == given else [f"{path}: {stored!r} != {given!r}"]


async def test_a_valid_corpus_applies_and_is_stored_as_written(kubectl: Kubectl) -> None:
    path = str(MANIFESTS / "valid.yaml")
    docs = [d for d in yaml.safe_load_all((MANIFESTS / "valid.yaml").read_text()) if d]
    out = await kubectl.ok("apply", "-f", path)
    assert out.count("created") == len(docs), out
    listed = orjson.loads(await kubectl.ok("get", "-f", path, "-o", "json"))
    by_key = {(o["kind"], o["metadata"]["name"]): o for o in listed["items"]}
    problems = []
    for doc in docs:
        stored = by_key[(doc["kind"], doc["metadata"]["name"])]
        given = {k: v for k, v in doc.items() if k not in ("apiVersion",)}
        problems += [f"{doc['kind']}/{doc['metadata']['name']}{p}"
                     for p in _contains(stored, given)]
    assert problems == []
    # applying again changes nothing; kubectl still sends a patch (and says "configured")
    # for three kinds, computed on its side from what kube stores: a Secret's write-only
    # stringData is never in the live object, a StatefulSet's volumeClaimTemplates come back
    # with kube's defaults (volumeMode, status.phase) in a list it replaces whole, and a
    # PDB's selector has patchStrategy replace
    again = (await kubectl.ok("apply", "-f", path)).splitlines()
    configured = sorted(line.split()[0] for line in again if line.endswith(" configured"))
    assert configured == ["poddisruptionbudget.policy/web", "secret/web-creds",
                          "statefulset.apps/db"], again
    assert sum(line.endswith(" unchanged") for line in again) == len(docs) - 3, again


@pytest.mark.parametrize("minor", ["33"])
async def test_an_invalid_corpus_is_refused_in_kubes_words(kubectl: Kubectl,
                                                          minor: str) -> None:
    if kubectl.minor != minor:
        pytest.skip("kube 1.33's messages")
    for what, manifest, message in INVALID:
        result = await kubectl("apply", "-f", kubectl.write("bad.yaml", manifest))
        assert result.rc != 0, what
        assert message in result.err, (what, result.err)
    for kind in ("deployments", "services", "jobs", "cronjobs", "configmaps", "ingresses",
                 "poddisruptionbudgets"):
        got = await kubectl("get", kind, "bad", "-n", "default")
        assert got.rc != 0 and "NotFound" in got.err, (kind, got.out)
