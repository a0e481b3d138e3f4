"""`embedded_object_meta=True`: labels and annotations inside an embedded template survive.

controller-gen writes kube's ObjectMeta inside a type (a JobTemplateSpec's or a
PodTemplateSpec's `metadata`) as a bare `type: object` unless it runs with
`crd:generateEmbeddedObjectMeta=true`; under a bare object the API server prunes every field,
so the labels and annotations a user puts in a CronJob's job template never reach the Jobs.
With the class keyword the CRD gets controller-gen's five fields (name, namespace, labels,
annotations, finalizers) and the server keeps them; anything else in that metadata is still
pruned.

kube: controller-gen's ObjectMetaPackages (pkg/crd/known_types.go) give the schema; the
server's pruning is apiextensions' structural pruning (pkg/apiserver/schema/pruning,
`prune`), which drops fields a `type: object` without properties does not declare.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from asyncop.apiserver.schema.structural import validate_structural
from asyncop.crd import CRDError, CustomResource, Model
from asyncop.crd.kubetypes import EMBEDDED_OBJECT_META
from asyncop.crd.structural import check_structural
from asyncop.k8s import JobTemplateSpec, PodTemplateSpec
from tests.apiserver.httpkit import call, install_crd


class TemplatesSpec(Model):
    job_template: JobTemplateSpec
    pod_template: PodTemplateSpec | None = None


class Pruned(CustomResource, group="pruned.example.com", version="v1", plural="templates"):
    spec: TemplatesSpec


class Kept(CustomResource, group="kept.example.com", version="v1", plural="templates",
           embedded_object_meta=True):
    spec: TemplatesSpec


METADATAS = ("jobTemplate", "jobTemplate.spec.template", "podTemplate")


def metadata_at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    node = schema["properties"]["spec"]
    for part in path.split("."):
        node = node["properties"][part]
    meta: dict[str, Any] = node["properties"]["metadata"]
    return meta


def test_by_default_an_embedded_object_meta_is_a_bare_object() -> None:
    schema = Pruned.schema()
    for path in METADATAS:
        meta = metadata_at(schema, path)
        assert meta["type"] == "object" and "properties" not in meta, path


def test_with_the_keyword_it_has_controller_gens_five_fields() -> None:
    schema = Kept.schema()
    for path in METADATAS:
        meta = metadata_at(schema, path)
        assert {k: v for k, v in meta.items() if k != "description"} == EMBEDDED_OBJECT_META
        assert meta["description"] == metadata_at(Pruned.schema(), path)["description"]
    assert EMBEDDED_OBJECT_META["properties"]["labels"] == {
        "type": "object", "additionalProperties": {"type": "string"}}
    assert EMBEDDED_OBJECT_META["properties"]["finalizers"] == {
        "type": "array", "items": {"type": "string"}}
    assert sorted(EMBEDDED_OBJECT_META["properties"]) == [
        "annotations", "finalizers", "labels", "name", "namespace"]
    # the root metadata is the server's business: still only `type: object`
    assert schema["properties"]["metadata"] == {"type": "object"}
    check_structural("Kept", schema)
    assert validate_structural(schema, "spec.validation.openAPIV3Schema") == []
    assert Kept.info().embedded_object_meta and not Pruned.info().embedded_object_meta


def test_the_keyword_takes_a_bool_only() -> None:
    with pytest.raises(CRDError, match=r"^Bad: embedded_object_meta='yes' must be True or "
                                       r"False$"):
        class Bad(CustomResource, group="bad.example.com", version="v1",
                  embedded_object_meta="yes"):
            spec: TemplatesSpec


def body(group: str) -> dict[str, Any]:
    meta = {"labels": {"app": "hello"}, "annotations": {"team": "a"}, "finalizers": ["x/y"],
            "name": "n", "namespace": "ns", "uid": "not-a-template-field",
            "generateName": "g-"}
    return {"apiVersion": f"{group}/v1", "kind": "Kept" if group.startswith("kept") else
            "Pruned", "metadata": {"name": "t", "namespace": "default"},
            "spec": {"jobTemplate": {"metadata": meta, "spec": {"template": {
                "metadata": meta, "spec": {"restartPolicy": "Never", "containers": [
                    {"name": "c", "image": "busybox"}]}}}}}}


@pytest.fixture
async def http(apiserver_no_sim: ApiServer) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    async with aiohttp.ClientSession() as session:
        for cls in (Pruned, Kept):
            group = cls.info().group
            await install_crd(session, apiserver_no_sim.url, dict(cls.crd()),
                              f"/apis/{group}/v1/namespaces/default/templates")
        yield apiserver_no_sim.url, session


async def test_the_server_keeps_labels_and_annotations_only_with_the_keyword(
        http: tuple[str, aiohttp.ClientSession]) -> None:
    base, session = http
    stored = {}
    for group in ("pruned.example.com", "kept.example.com"):
        code, obj = await call(session, "POST",
                               f"{base}/apis/{group}/v1/namespaces/default/templates",
                               json=body(group))
        assert code == 201, obj
        stored[group] = obj["spec"]["jobTemplate"]
    kept = {"labels": {"app": "hello"}, "annotations": {"team": "a"}, "finalizers": ["x/y"],
            "name": "n", "namespace": "ns"}  # uid and generateName are pruned
    assert stored["kept.example.com"]["metadata"] == kept
    assert stored["kept.example.com"]["spec"]["template"]["metadata"] == kept
    assert stored["pruned.example.com"]["metadata"] == {}
    assert stored["pruned.example.com"]["spec"]["template"]["metadata"] == {}
