"""OpenAPI v2/v3 documents for kubectl and Helm (asyncop.apiserver.openapi.documents)."""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.core.crds import resource_types
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.openapi.documents import (
    definition_name,
    openapi_v2,
    openapi_v2_proto,
    openapi_v3_doc,
    openapi_v3_index,
)
from tests.apiserver.test_crds import crdkind_crd

CONFIGMAP = ResourceType(group="", version="v1", plural="configmaps", kind="ConfigMap")
NAMESPACE = ResourceType(group="", version="v1", plural="namespaces", kind="Namespace",
                         namespaced=False, has_status=True)
DEPLOYMENT = ResourceType(group="apps", version="v1", plural="deployments", kind="Deployment",
                          has_status=True)


def _types() -> list[ResourceType]:
    return [CONFIGMAP, NAMESPACE, DEPLOYMENT, *resource_types(crdkind_crd())]


def _patch_ops(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """What kubectl's QueryParamVerifierV3 looks for: patch operations by GVK."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for item in doc["paths"].values():
        op = item.get("patch")
        if op:
            gvk = op["x-kubernetes-group-version-kind"]
            found.setdefault((gvk["group"], gvk["version"], gvk["kind"]), op)
    return found


def test_index_lists_every_group_version_with_a_content_hash() -> None:
    index = openapi_v3_index(_types())
    assert set(index["paths"]) == {"api/v1", "apis/apps/v1", "apis/iksoon.test.com/v1"}
    url = index["paths"]["apis/iksoon.test.com/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/iksoon.test.com/v1?hash=")
    crd = crdkind_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]["extra"] = {"type": "string"}
    changed = openapi_v3_index([CONFIGMAP, NAMESPACE, DEPLOYMENT, *resource_types(crd)])
    assert changed["paths"]["apis/iksoon.test.com/v1"]["serverRelativeURL"] != url
    assert changed["paths"]["api/v1"] == index["paths"]["api/v1"]


def test_gv_doc_has_patch_ops_with_gvk_and_field_validation() -> None:
    doc = openapi_v3_doc(_types(), "", "v1")
    assert doc["openapi"].startswith("3.0")
    ops = _patch_ops(doc)
    assert set(ops) == {("", "v1", "ConfigMap"), ("", "v1", "Namespace")}
    for op in ops.values():
        names = {p["name"] for p in op["parameters"]}
        assert {"fieldValidation", "fieldManager", "dryRun", "force"} <= names
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}" in doc["paths"]
    assert "/api/v1/namespaces/{name}" in doc["paths"]
    assert "/api/v1/namespaces/{name}/status" in doc["paths"]


def test_builtin_schemas_are_open_and_tagged() -> None:
    doc = openapi_v3_doc(_types(), "apps", "v1")
    schemas = doc["components"]["schemas"]
    dep = schemas["io.k8s.api.apps.v1.Deployment"]
    assert dep["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "version": "v1", "kind": "Deployment"}]
    assert dep["x-kubernetes-preserve-unknown-fields"] is True
    ref = dep["properties"]["metadata"]["$ref"]
    assert ref.removeprefix("#/components/schemas/") in schemas


def test_custom_resource_schema_comes_from_the_crd() -> None:
    doc = openapi_v3_doc(_types(), "iksoon.test.com", "v1")
    name = definition_name("iksoon.test.com", "v1", "CrdKind")
    assert name == "com.test.iksoon.v1.CrdKind"
    schema = doc["components"]["schemas"][name]
    assert schema["properties"]["spec"]["properties"]["replicas"]["maximum"] == 10
    assert schema["properties"]["apiVersion"]["type"] == "string"
    assert "x-kubernetes-preserve-unknown-fields" not in schema
    ops = _patch_ops(doc)
    assert set(ops) == {("iksoon.test.com", "v1", "CrdKind")}
    assert "/apis/iksoon.test.com/v1/namespaces/{namespace}/crdplural/{name}/status" in doc[
        "paths"]
    assert openapi_v3_doc(_types(), "nothing.example.com", "v1")["paths"] == {}


def test_v2_json_uses_definitions_refs() -> None:
    doc = openapi_v2(_types())
    assert doc["swagger"] == "2.0"
    cm = doc["definitions"]["io.k8s.api.core.v1.ConfigMap"]
    assert cm["properties"]["metadata"]["$ref"].startswith("#/definitions/")
    assert "data" in cm["properties"]
    op = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert {"name": "fieldValidation", "in": "query", "type": "string",
            "uniqueItems": True} in op["parameters"]


def test_v2_proto_is_the_minimal_gnostic_document() -> None:
    body = openapi_v2_proto(server_version="v1.27.0")
    assert body == (b"\x0a\x032.0\x12\x15\x0a\x0aKubernetes\x12\x07v1.27.0")
