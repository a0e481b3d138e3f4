"""crds/ and samples/: the CRDs (generated from the models) are valid, structural, and reject
bad input.

These checks run the embedded API server's own CRD and schema code in-process (fast); the
end-to-end apply over HTTP is in test_samples_e2e.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from asyncop.apiserver.core.crds import resource_types, validate_crd
from asyncop.apiserver.schema.checks import apply_defaults, prune, validate
from asyncop.controllers.crds import load_crds
from asyncop.controllers.kinds import CUSTOM_KINDS

ROOT = Path(__file__).resolve().parents[2]


def _schema_for(api_version: str, kind: str) -> dict[str, Any]:
    for crd in load_crds():
        for rt in resource_types(crd):
            if rt.api_version == api_version and rt.kind == kind:
                assert rt.schema is not None
                return rt.schema
    raise AssertionError(f"no CRD serves {api_version} {kind}")


def _admit(obj: dict[str, Any]) -> list[str]:
    """Prune, default and validate like the API server; return the fields of the causes."""
    obj = copy.deepcopy(obj)
    schema = _schema_for(obj["apiVersion"], obj["kind"])
    prune(obj, schema)
    apply_defaults(obj, schema)
    return [c.get("field", "") for c in validate(obj, schema)]


def test_crds_dir_is_what_the_models_generate() -> None:
    files = {p.name: yaml.safe_load(p.read_text(encoding="utf-8"))
             for p in sorted(ROOT.glob("crds/*.yaml"))}
    assert files == {f"{c['metadata']['name']}.yaml": c for c in load_crds()}


def test_one_valid_crd_per_file_matching_the_kinds() -> None:
    crds = load_crds()
    assert len(crds) == 5
    served = set()
    for crd in crds:
        assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
        assert validate_crd(crd) == [], crd["metadata"]["name"]
        for rt in resource_types(crd):
            assert rt.has_status, f"{rt.plural} needs the status subresource"
            assert rt.printer_columns
            served.add((rt.group, rt.version, rt.plural, rt.kind, rt.namespaced))
    assert served == {
        (k.group, k.version, k.plural, k.kind, k.namespaced) for k in CUSTOM_KINDS
    }


def test_crdkind_names_and_columns_follow_the_seed() -> None:
    (crd,) = [c for c in load_crds() if c["metadata"]["name"] == "crdplural.iksoon.test.com"]
    assert crd["spec"]["names"]["shortNames"] == ["crdshort", "iksoontest"]
    cols = {c["name"]: c for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]}
    assert cols["DBorWAS"]["jsonPath"] == ".spec.choice"
    assert cols["replicas"]["priority"] == 1
    assert "Age" in cols
    (jh,) = [c for c in load_crds() if c["metadata"]["name"] == "jinghzhus.jinghzhu.com"]
    assert jh["spec"]["names"]["shortNames"] == ["jh"]
    (at,) = [c for c in load_crds() if c["metadata"]["name"].startswith("ats.")]
    names = [c["name"] for c in at["spec"]["versions"][0]["additionalPrinterColumns"]]
    assert names == ["Schedule", "Command", "Phase", "Age"]


def _samples() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(ROOT.glob("samples/*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def test_every_sample_is_admitted_and_every_crd_has_one() -> None:
    docs = _samples()
    for doc in docs:
        assert _admit(doc) == [], doc["metadata"]["name"]
    assert {d["kind"] for d in docs} == {k.kind for k in CUSTOM_KINDS}


def test_seed_examples_are_unchanged() -> None:
    by_name = {d["metadata"]["name"]: d for d in _samples()}
    assert by_name["example-at"]["spec"] == {
        "schedule": "2019-04-12T10:12:00Z", "command": "echo YAY"}
    assert by_name["example-foo"]["spec"] == {"deploymentName": "example-foo", "replicas": 1}
    assert by_name["example-network"]["spec"] == {
        "cidr": "192.168.0.0/16", "gateway": "192.168.0.1"}
    assert by_name["iksoon-crd-test"]["apiVersion"] == "iksoon.test.com/v1"
    assert by_name["iksoon-crd-test"]["spec"] == {"choice": "mysql", "replicas": 1}


def _obj(api_version: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec}


CK = "iksoon.test.com/v1"


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        (_obj(CK, "CrdKind", {"choice": "postgres", "replicas": 1}), "spec.choice"),
        (_obj(CK, "CrdKind", {"choice": "mysqlx", "replicas": 1}), "spec.choice"),
        (_obj(CK, "CrdKind", {"choice": "mysql", "replicas": 11}), "spec.replicas"),
        (_obj(CK, "CrdKind", {"choice": "tomcat", "replicas": 0}), "spec.replicas"),
        (_obj("samplecontroller.k8s.io/v1alpha1", "Foo",
              {"deploymentName": "d", "replicas": 11}), "spec.replicas"),
        (_obj("samplecontroller.k8s.io/v1alpha1", "Foo",
              {"deploymentName": "d", "replicas": 0}), "spec.replicas"),
        (_obj("jinghzhu.com/v1", "Jinghzhu", {"desired": -1}), "spec.desired"),
        (_obj("jinghzhu.com/v1", "Jinghzhu", {}), "spec.desired"),
        (_obj("cnat.programming-kubernetes.info/v1alpha1", "At", {"command": "x"}),
         "spec.schedule"),
        (_obj("samplecrd.k8s.io/v1", "Network", {"cidr": "10.0.0.0/8"}), "spec.gateway"),
    ],
)
def test_bad_input_is_rejected_with_the_field_named(obj: dict[str, Any], field: str) -> None:
    assert field in _admit(obj)


def test_defaults_and_pruning() -> None:
    obj = _obj(CK, "CrdKind", {"choice": "tomcat", "bogus": 1})
    schema = _schema_for(CK, "CrdKind")
    prune(obj, schema)
    apply_defaults(obj, schema)
    assert obj["spec"] == {"choice": "tomcat", "replicas": 1}
