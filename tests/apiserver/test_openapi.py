"""OpenAPI v2/v3 documents for kubectl and Helm (asyncop.apiserver.openapi).

What kube-apiserver serves, pinned: kube's own definitions for every built-in kind (with
`x-kubernetes-group-version-kind`), builder3's v3 form, the swagger v2 form and its gnostic
protobuf, the operations of kube's endpoints installer and CRD builder, and the handlers'
HTTP semantics. Documents are built in-process; one test goes over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import aiohttp
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncop.apiserver import ApiServer
from asyncop.apiserver.core.crds import resource_types
from asyncop.apiserver.core.registry import Registry
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.openapi.documents import (
    group_versions,
    kube_minor,
    v2_document,
    v3_document,
)
from asyncop.apiserver.openapi.gnostic import encode_document
from asyncop.apiserver.openapi.service import PROTO_CONTENT_TYPE, OpenAPIService
from tests.apiserver import gnostic_reader
from tests.apiserver.test_crds import crdkind_crd

CRD_KIND = "com.test.iksoon.v1.CrdKind"
PROTO_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def _types(crd: dict[str, Any] | None = None) -> list[ResourceType]:
    return [*Registry().all_types(), *resource_types(crd or crdkind_crd())]


def _v3(minor: int, group: str, version: str,
        types: list[ResourceType] | None = None) -> dict[str, Any]:
    return v3_document(types or _types(), group, version, minor=minor,
                       server_version=f"v1.{minor}.0")


def _refs(node: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Every (schema, $ref) in a document, outside extension values."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield node, ref
        for key, value in node.items():
            if not key.startswith("x-") and key not in ("enum", "default", "example"):
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _patch_ops(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """What kubectl's QueryParamVerifier looks for: the first patch operation per GVK."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for item in doc["paths"].values():
        op = item.get("patch")
        if op:
            gvk = op["x-kubernetes-group-version-kind"]
            found.setdefault((gvk["group"], gvk["version"], gvk["kind"]), op)
    return found


@pytest.mark.parametrize("minor", [27, 33])
def test_every_builtin_kind_has_kubes_definition_with_its_gvk(minor: int) -> None:
    # kube: every served kind's definition is in its group/version document, found by
    # x-kubernetes-group-version-kind (kubectl explain's lookup, explain/v2 generator)
    types = Registry().all_types()
    documented = 0
    for group, version in group_versions(types, minor):
        schemas = _v3(minor, group, version, types)["components"]["schemas"]
        tagged = {(g["group"], g["version"], g["kind"])
                  for s in schemas.values() for g in s.get("x-kubernetes-group-version-kind", [])}
        for rt in types:
            if rt.kind == "SelfSubjectReview" and minor < 28:
                continue  # checked below
            if (rt.group, rt.version) == (group, version):
                assert (group, version, rt.kind) in tagged, rt
                documented += 1
    # authentication.k8s.io/v1 SelfSubjectReview is GA from 1.28: 1.27 has no definition,
    # so neither its schema nor its paths are documented there
    auth = _v3(minor, "authentication.k8s.io", "v1", types)
    has_review = any("selfsubjectreviews" in p for p in auth["paths"])
    assert has_review is (minor >= 28)
    assert documented == len(types) - (0 if minor >= 28 else 1)


def test_definitions_are_kubes_text_in_builder3_form() -> None:
    # kube: builder3 WrapRefs — a $ref with siblings becomes allOf: [{$ref}] beside them
    doc = _v3(33, "apps", "v1")
    schemas = doc["components"]["schemas"]
    dep = schemas["io.k8s.api.apps.v1.Deployment"]
    assert dep["description"].startswith("Deployment enables declarative updates")
    assert dep["properties"]["metadata"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
        "description": "Standard object's metadata. More info: https://git.k8s.io/community/"
                       "contributors/devel/sig-architecture/api-conventions.md#metadata"}
    resources = schemas["io.k8s.api.core.v1.ResourceRequirements"]
    assert set(resources["properties"]) >= {"limits", "requests"}
    assert resources["properties"]["limits"]["additionalProperties"] == {
        "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}
    for node, _ in _refs(doc):
        assert set(node) == {"$ref"}  # no $ref keeps siblings in v3
    # the document holds what its kinds reference and not the rest of kube
    assert "io.k8s.api.batch.v1.JobSpec" not in schemas
    assert "io.k8s.api.core.v1.PodSpec" in schemas


@pytest.mark.parametrize("minor", [27, 33])
def test_every_ref_resolves_inside_its_document(minor: int) -> None:
    types = _types()
    for group, version in group_versions(types, minor):
        doc = _v3(minor, group, version, types)
        schemas = doc["components"]["schemas"]
        for _, ref in _refs(doc):
            assert ref.startswith("#/components/schemas/")
            assert ref.removeprefix("#/components/schemas/") in schemas, (group, ref)
    swagger = v2_document(types, minor=minor, server_version=f"v1.{minor}.0")
    for _, ref in _refs(swagger):
        assert ref.removeprefix("#/definitions/") in swagger["definitions"], ref


def test_operations_are_kubes() -> None:
    # kube: registerResourceHandlers (endpoints installer) and GetOperationIDAndTags
    doc = _v3(33, "batch", "v1")
    paths = doc["paths"]
    item = paths["/apis/batch/v1/namespaces/{namespace}/jobs/{name}"]
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    assert item["parameters"][0] == {"description": "name of the Job", "in": "path",
                                     "name": "name", "required": True,
                                     "schema": {"type": "string", "uniqueItems": True}}
    patch = item["patch"]
    assert patch["operationId"] == "patchBatchV1NamespacedJob"
    assert patch["description"] == "partially update the specified Job"
    assert [p["name"] for p in patch["parameters"]] == [
        "dryRun", "fieldManager", "fieldValidation", "force"]
    assert set(patch["requestBody"]["content"]) == {
        "application/json-patch+json", "application/merge-patch+json",
        "application/strategic-merge-patch+json", "application/apply-patch+yaml"}
    assert patch["tags"] == ["batch_v1"]
    assert patch["x-kubernetes-action"] == "patch"
    assert item["delete"]["description"] == "delete a Job"
    assert {p["name"] for p in item["delete"]["parameters"]} == {
        "dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
        "orphanDependents", "propagationPolicy"}  # kube 1.32+ DeleteOptions
    collection = paths["/apis/batch/v1/namespaces/{namespace}/jobs"]
    assert collection["get"]["description"] == "list or watch objects of kind Job"
    assert collection["delete"]["operationId"] == "deleteBatchV1CollectionNamespacedJob"
    assert "watch" not in {p["name"] for p in collection["delete"]["parameters"]}
    assert collection["post"]["requestBody"]["required"] is True
    everywhere = paths["/apis/batch/v1/jobs"]
    assert everywhere["get"]["operationId"] == "listBatchV1JobForAllNamespaces"
    assert paths["/apis/batch/v1/watch/namespaces/{namespace}/jobs/{name}"]["get"][
        "x-kubernetes-action"] == "watch"
    assert paths["/apis/batch/v1/"]["get"]["operationId"] == "getBatchV1APIResources"
    apps = _v3(33, "apps", "v1")["paths"]
    scale = apps["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert scale["operationId"] == "patchAppsV1NamespacedDeploymentScale"
    assert scale["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling", "kind": "Scale", "version": "v1"}
    core = _v3(33, "", "v1")["paths"]
    assert core["/api/v1/namespaces"]["post"]["description"] == "create a Namespace"
    assert "delete" not in core["/api/v1/namespaces"]  # namespaces have no deletecollection
    assert core["/api/v1/namespaces/{name}/finalize"]["put"]["operationId"] == \
        "replaceCoreV1NamespaceFinalize"
    assert core["/api/v1/namespaces/{namespace}/endpoints"]["post"]["description"] == \
        "create Endpoints"  # kube: GetArticleForNoun, no article for a plural
    rbac = _v3(33, "rbac.authorization.k8s.io", "v1")["paths"]
    assert rbac["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["get"]["tags"] == [
        "rbacAuthorization_v1"]
    old = _v3(27, "batch", "v1")["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs/{name}"]
    assert "ignoreStoreReadErrorWithClusterBreakingPotential" not in {
        p["name"] for p in old["delete"]["parameters"]}


@pytest.mark.parametrize("minor", [27, 33])
def test_every_patch_operation_takes_field_validation(minor: int) -> None:
    # kubectl (QueryParamVerifier / V3) leaves validation to the server when the first
    # PATCH operation of a kind lists fieldValidation — v3 for 1.29+, v2 for 1.27/1.28
    types = _types()
    swagger = v2_document(types, minor=minor, server_version=f"v1.{minor}.0")
    for doc, name in [(_v3(minor, g, v, types), "v3") for g, v in group_versions(types, minor)
                      ] + [(swagger, "v2")]:
        for gvk, op in _patch_ops(doc).items():
            assert "fieldValidation" in {p["name"] for p in op["parameters"]}, (name, gvk)
    kinds = set(_patch_ops(swagger))
    assert {("apps", "v1", "Deployment"), ("", "v1", "ConfigMap"),
            ("iksoon.test.com", "v1", "CrdKind")} <= kinds


def test_custom_resource_schema_is_the_crds_as_kube_publishes_it() -> None:
    # kube: apiextensions openapi builder (buildKubeNative, buildListSchema)
    doc = _v3(33, "iksoon.test.com", "v1")
    schemas = doc["components"]["schemas"]
    schema = schemas[CRD_KIND]
    assert schema["properties"]["spec"]["properties"]["replicas"]["maximum"] == 10
    assert schema["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert schema["properties"]["apiVersion"]["type"] == "string"
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "iksoon.test.com", "version": "v1", "kind": "CrdKind"}]
    listing = schemas["com.test.iksoon.v1.CrdKindList"]
    assert listing["properties"]["items"]["items"] == {"$ref": f"#/components/schemas/{CRD_KIND}"}
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    ops = _patch_ops(doc)
    assert set(ops) == {("iksoon.test.com", "v1", "CrdKind")}
    patch = doc["paths"]["/apis/iksoon.test.com/v1/namespaces/{namespace}/crdplural/{name}"][
        "patch"]
    assert patch["operationId"] == "patchIksoonTestComV1NamespacedCrdKind"
    assert "force" not in {p["name"] for p in patch["parameters"]}  # UpdateOptions
    assert "/apis/iksoon.test.com/v1/namespaces/{namespace}/crdplural/{name}/scale" in doc[
        "paths"]
    assert _v3(33, "nothing.example.com", "v1")["paths"] == {}


def test_crd_schemas_in_v2_drop_what_kubectl_cannot_parse() -> None:
    # kube: ToStructuralOpenAPIV2 (apiextensions openapi/v2) and PruneDefaults
    crd = crdkind_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"].update({
        "port": {"x-kubernetes-int-or-string": True},
        "note": {"type": "string", "nullable": True, "default": "x"},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                  "properties": {"a": {"type": "string"}}},
        "choices": {"type": "string", "anyOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
    })
    spec["required"] = ["note", "choice"]
    v3_spec = _v3(33, "iksoon.test.com", "v1", _types(crd))["components"]["schemas"][
        CRD_KIND]["properties"]["spec"]
    assert v3_spec["properties"]["port"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert v3_spec["properties"]["note"]["default"] == "x"
    v2_spec = v2_document(_types(crd), minor=33, server_version="v1.33.0")["definitions"][
        CRD_KIND]["properties"]["spec"]
    assert v2_spec["properties"]["port"] == {"x-kubernetes-int-or-string": True}
    assert v2_spec["properties"]["note"] == {}
    assert v2_spec["properties"]["extra"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert v2_spec["properties"]["choices"] == {"type": "string"}
    assert v2_spec["required"] == ["choice"]
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"][
        "x-kubernetes-preserve-unknown-fields"] = True
    open_kind = v2_document(_types(crd), minor=33, server_version="v1.33.0")["definitions"][
        CRD_KIND]
    assert open_kind == {"type": "object", "x-kubernetes-group-version-kind": [
        {"group": "iksoon.test.com", "version": "v1", "kind": "CrdKind"}]}


def test_v2_uses_kubes_swagger_forms() -> None:
    doc = v2_document(_types(), minor=33, server_version="v1.33.0")
    assert doc["swagger"] == "2.0" and doc["info"] == {"title": "Kubernetes",
                                                       "version": "v1.33.0"}
    defs = doc["definitions"]
    assert defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "type": "string", "format": "int-or-string"}
    assert defs["io.k8s.apimachinery.pkg.api.resource.Quantity"] == {"type": "string"}
    meta = defs["io.k8s.api.core.v1.ConfigMap"]["properties"]["metadata"]
    assert meta["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert "allOf" not in meta and meta["description"]  # v2 keeps $ref siblings
    op = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert op["parameters"][0] == {"name": "body", "in": "body", "required": True,
                                   "schema": {"$ref": "#/definitions/"
                                              "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    assert {"uniqueItems": True, "type": "string", "name": "fieldValidation", "in": "query",
            "description": op["parameters"][3]["description"]} == op["parameters"][3]
    assert op["consumes"][-1] == "application/apply-patch+yaml"


@pytest.mark.parametrize("minor", [27, 33])
def test_v2_protobuf_round_trips(minor: int) -> None:
    # kube: handler.ToProtoBinary — gnostic's openapi_v2.Document of the JSON swagger
    doc = v2_document(_types(), minor=minor, server_version=f"v1.{minor}.0")
    decoded = gnostic_reader.document(encode_document(doc))
    expected = orjson.loads(orjson.dumps(doc))
    assert decoded["definitions"] == expected["definitions"]
    assert decoded["paths"] == expected["paths"]
    assert decoded == expected


def test_protobuf_encodes_every_schema_field() -> None:
    schema = {"$ref": "#/definitions/x", "format": "f", "title": "t", "description": "d",
              "default": {"a": [1]}, "multipleOf": 2.5, "maximum": 10, "exclusiveMaximum": True,
              "minimum": -3, "exclusiveMinimum": True, "maxLength": 5, "minLength": 1,
              "pattern": "^a$", "maxItems": 3, "minItems": 1, "uniqueItems": True,
              "maxProperties": 9, "minProperties": 2, "required": ["a", "b"],
              "enum": ["a", 1, None], "additionalProperties": False, "type": "object",
              "items": {"type": "string"}, "allOf": [{"type": "string"}],
              "properties": {"b": {"type": "integer"}, "a": {"additionalProperties": {}}},
              "discriminator": "k", "readOnly": True, "example": "e",
              "x-kubernetes-list-type": "atomic"}
    doc = {"swagger": "2.0", "info": {"title": "T", "version": "v"},
           "definitions": {"s": schema}}
    assert gnostic_reader.document(encode_document(doc))["definitions"]["s"] == schema


def test_kube_minor_is_the_nearest_installed() -> None:
    assert kube_minor("33") == 33
    assert kube_minor("27+") == 27
    assert kube_minor("5") == 25  # older than the oldest installed
    assert kube_minor("99") >= 37


def test_documents_are_cached_and_rebuilt_only_when_their_types_change() -> None:
    service = OpenAPIService()
    types = _types()
    index = orjson.loads(service.v3_index(types, minor="33", server_version="v1.33.0").body)
    paths = index["paths"]
    assert set(paths) >= {"api/v1", "apis/apps/v1", "apis/iksoon.test.com/v1"}
    first = service.v3_group(types, "apis/apps/v1", minor="33", server_version="v1.33.0")
    again = service.v3_group(types, "apis/apps/v1", minor="33", server_version="v1.33.0")
    assert first is not None and again is not None and first.body is again.body
    crd = crdkind_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]["extra"] = {"type": "string"}
    changed_types = [*Registry().all_types(), *resource_types(crd)]
    changed = orjson.loads(service.v3_index(changed_types, minor="33",
                                            server_version="v1.33.0").body)["paths"]
    assert changed["apis/iksoon.test.com/v1"] != paths["apis/iksoon.test.com/v1"]
    assert changed["api/v1"] == paths["api/v1"]
    other_minor = orjson.loads(service.v3_index(types, minor="27",
                                                server_version="v1.27.0").body)["paths"]
    assert other_minor["apis/apps/v1"] != paths["apis/apps/v1"]
    v2 = service.v2(types, minor="33", server_version="v1.33.0", accept=PROTO_ACCEPT)
    assert v2.body is service.v2(types, minor="33", server_version="v1.33.0",
                                 accept=PROTO_ACCEPT).body


def test_http_semantics_of_kube_openapi_handlers() -> None:
    # kube: kube-openapi handler (v2) and handler3 (v3): negotiation, ETag, hash redirects
    service = OpenAPIService()
    types = _types()
    kw: dict[str, Any] = {"minor": "33", "server_version": "v1.33.0"}
    as_json = service.v2(types, **kw)  # no Accept: */*, JSON first
    assert as_json.headers["Content-Type"] == "application/json"
    assert orjson.loads(as_json.body)["swagger"] == "2.0"
    proto = service.v2(types, accept=PROTO_ACCEPT, **kw)
    assert proto.headers["Content-Type"] == PROTO_CONTENT_TYPE
    assert proto.headers["Etag"] == as_json.headers["Etag"]
    assert service.v2(types, accept="application/json;q=0.5, " + PROTO_ACCEPT, **kw
                      ).headers["Content-Type"] == PROTO_CONTENT_TYPE
    assert service.v2(types, accept="text/html", **kw).status == 406
    assert service.v2(types, if_none_match=as_json.headers["Etag"], **kw).status == 304
    url = orjson.loads(service.v3_index(types, **kw).body)["paths"]["apis/apps/v1"][
        "serverRelativeURL"]
    etag = url.rpartition("hash=")[2]
    now = datetime(2026, 1, 1, tzinfo=UTC)
    fresh = service.v3_group(types, "apis/apps/v1", query_hash=etag, now=now, **kw)
    assert fresh is not None and fresh.status == 200
    assert fresh.headers["Cache-Control"] == "public, immutable"
    assert fresh.headers["Expires"] == "Fri, 01 Jan 2027 00:00:00 GMT"
    assert fresh.headers["Etag"] == f'"{etag}"'
    stale = service.v3_group(types, "apis/apps/v1", query_hash="OLD", **kw)
    assert stale is not None and stale.status == 301
    assert stale.headers["Location"] == url
    assert service.v3_group(types, "apis/nothing/v1", **kw) is None
    cached = service.v3_group(types, "apis/apps/v1", if_none_match=f'"{etag}"', **kw)
    assert cached is not None and cached.status == 304 and cached.body == b""


async def test_served_over_http_with_the_servers_minor() -> None:
    server = ApiServer(version=("1", "27"))
    await server.start()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(server.url + "/openapi/v3") as r:
                index = await r.json()
            async with http.get(server.url + "/openapi/v3/" + index["paths"][
                    "apis/authentication.k8s.io/v1"]["serverRelativeURL"].removeprefix(
                    "/openapi/v3/")) as r:
                assert r.status == 200 and r.headers["Cache-Control"] == "public, immutable"
                auth = await r.json()
            assert auth["info"]["version"] == "v1.27.0"
            assert "io.k8s.api.authentication.v1.SelfSubjectReview" not in auth["components"][
                "schemas"]  # 1.27 has none: the server's minor decides
            async with http.get(server.url + "/openapi/v3/apis/nothing/v1") as r:
                assert r.status == 404
            async with http.get(server.url + "/openapi/v2",
                                headers={"Accept": PROTO_ACCEPT}) as r:
                assert r.headers["Content-Type"] == PROTO_CONTENT_TYPE
                decoded = gnostic_reader.document(await r.read())
            assert "io.k8s.api.apps.v1.Deployment" in decoded["definitions"]
    finally:
        await server.stop()


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
    | st.sampled_from(["object", "array", "string", "integer", "#/components/schemas/x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "properties", "items", "additionalProperties", "required",
                         "nullable", "anyOf", "allOf", "not", "default", "enum", "$ref",
                         "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
                         "x-kubernetes-preserve-unknown-fields", "spec", "a"]),
        inner, max_size=4),
    max_leaves=20)


@settings(max_examples=50, deadline=None, derandomize=True, database=None)
@given(schema=st.dictionaries(st.sampled_from(["type", "properties", "required", "spec"]),
                              _json, max_size=3))
def test_any_crd_schema_gives_documents_without_raising(schema: dict[str, Any]) -> None:
    # the documents are served to anyone: a CRD schema of any shape never makes them fail
    rt = replace(resource_types(crdkind_crd())[0], schema=schema)
    types = [rt]
    doc = v3_document(types, rt.group, rt.version, minor=33, server_version="v1.33.0")
    assert CRD_KIND in doc["components"]["schemas"]
    swagger = v2_document(types, minor=33, server_version="v1.33.0")
    assert gnostic_reader.document(encode_document(swagger))["paths"].keys() == \
        swagger["paths"].keys()
