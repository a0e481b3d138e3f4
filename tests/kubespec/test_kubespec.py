"""asyncop.kubespec: kube's OpenAPI definitions, normalised back from kubernetes-validate's
JSON Schema form to the form kube-apiserver serves under /openapi/v3."""

from __future__ import annotations

import pytest

from asyncop import kubespec


def test_every_minor_kubectl_talks_to_is_installed() -> None:
    # the kubectl dispatcher runs 1.27-1.33 by the server's /version minor
    assert set(range(27, 34)) <= set(kubespec.minors())
    assert kubespec.DEFAULT_MINOR in kubespec.minors()


def test_kinds_are_indexed_by_group_version_kind() -> None:
    defs = kubespec.definitions()
    assert defs.for_kind("apps", "v1", "Deployment") == "io.k8s.api.apps.v1.Deployment"
    assert defs.for_kind("", "v1", "Pod") == "io.k8s.api.core.v1.Pod"
    assert defs.for_kind("batch", "v1", "CronJob") == "io.k8s.api.batch.v1.CronJob"
    assert defs.for_kind("example.com", "v1", "Widget") is None
    # batch/v1 CronJob is GA since 1.21, so every installed minor has it
    for minor in kubespec.minors():
        assert kubespec.definitions(minor).for_kind("batch", "v1", "CronJob")


def test_nullable_types_and_refs_are_kubes_again() -> None:
    defs = kubespec.definitions(33)
    port = defs["io.k8s.api.core.v1.ContainerPort"]
    assert port["properties"]["hostIP"]["type"] == "string"  # not ["string", "null"]
    assert port["properties"]["containerPort"] == {
        "description": port["properties"]["containerPort"]["description"],
        "format": "int32", "type": "integer"}
    assert port["required"] == ["containerPort"]
    containers = defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    # kube's list-map markers survive the conversion
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert defs.resolve(containers["items"]) is defs["io.k8s.api.core.v1.Container"]


def test_int_or_string_and_quantity_have_kubes_v3_form() -> None:
    defs = kubespec.definitions(33)
    assert defs[kubespec.INT_OR_STRING] == {
        "format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}
    assert defs[kubespec.QUANTITY] == {"oneOf": [{"type": "string"}, {"type": "number"}]}


def test_api_version_and_kind_are_plain_strings() -> None:
    # the JSON Schema conversion pinned them with an enum; kube's definitions have none
    kind = kubespec.definitions(33)["io.k8s.api.apps.v1.Deployment"]["properties"]["kind"]
    assert kind["type"] == "string" and "enum" not in kind


def test_a_minor_without_data_names_the_ones_there_are() -> None:
    with pytest.raises(kubespec.KubeSpecError, match=r"no Kubernetes OpenAPI definitions for "
                                                    r"1\.7 \(have 1\.25, "):
        kubespec.definitions(7)


def test_definitions_are_loaded_once() -> None:
    assert kubespec.definitions(33) is kubespec.definitions(33)
