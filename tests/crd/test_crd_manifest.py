"""CRD assembly (asyncop/crd/manifest.py) and its YAML text (asyncop/crd/yamltext.py)."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
import yaml
from pydantic import Field

from asyncop.crd import (
    CRDError,
    CustomResource,
    Int64,
    IntOrString,
    Model,
    PrinterColumn,
    Scale,
    crd_yaml,
    crds,
)
from asyncop.crd.manifest import API_VERSION, KIND


class MemcachedSpec(Model):
    """MemcachedSpec is the desired state of a Memcached."""

    size: Annotated[int, Field(ge=0, le=10)] = 1
    """Number of memcached pods."""
    image: str = "memcached:1.6"
    port: IntOrString = 11211
    extra_args: list[str] = []


class MemcachedStatus(Model):
    nodes: list[str] = []
    replicas: int = 0
    observed_generation: Int64 | None = None


class Memcached(CustomResource, group="cache.example.com", version="v1alpha1",
                short_names=("mc",), categories=("all",),
                printer_columns=(PrinterColumn("Size", ".spec.size", type="integer"),),
                scale=Scale(spec_replicas_path=".spec.size",
                            status_replicas_path=".status.replicas")):
    """Memcached runs a memcached Deployment of spec.size pods."""

    spec: MemcachedSpec
    status: MemcachedStatus | None = None


MEMCACHED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Memcached runs a memcached Deployment of spec.size pods.",
    "required": ["spec"],
    "properties": {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "description": "MemcachedSpec is the desired state of a Memcached.",
            "properties": {
                "size": {"type": "integer", "description": "Number of memcached pods.",
                         "default": 1, "minimum": 0, "maximum": 10},
                "image": {"type": "string", "default": "memcached:1.6"},
                "port": {"default": 11211, "x-kubernetes-int-or-string": True},
                "extraArgs": {"type": "array", "default": [], "items": {"type": "string"}},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "nodes": {"type": "array", "default": [], "items": {"type": "string"}},
                "replicas": {"type": "integer", "default": 0},
                "observedGeneration": {"type": "integer", "format": "int64"},
            },
        },
    },
}


def test_the_memcached_example_in_full() -> None:
    assert Memcached.schema() == MEMCACHED_SCHEMA
    assert Memcached.crd() == {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "memcacheds.cache.example.com"},
        "spec": {
            "group": "cache.example.com",
            "scope": "Namespaced",
            "names": {"plural": "memcacheds", "singular": "memcached", "kind": "Memcached",
                      "listKind": "MemcachedList", "shortNames": ["mc"],
                      "categories": ["all"]},
            "versions": [{
                "name": "v1alpha1", "served": True, "storage": True,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.size",
                    "statusReplicasPath": ".status.replicas"}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer",
                                              "jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": MEMCACHED_SCHEMA},
            }],
        },
    }
    assert crds(Memcached) == [Memcached.crd()]


def test_schema_returns_a_copy() -> None:
    Memcached.schema()["properties"].clear()
    assert Memcached.schema() == MEMCACHED_SCHEMA


# -- several versions ------------------------------------------------------------------------
class GizmoSpec(Model):
    size: int = 1
    color: str = "red"


class GizmoStatus(Model):
    replicas: int = 0


def gizmo(version: str, **kw: Any) -> type[CustomResource]:
    class Gizmo(CustomResource, group="example.com", version=version, kind="Gizmo",
                short_names=("gz",), **kw):  # type: ignore[call-arg]
        spec: GizmoSpec
        status: GizmoStatus | None = None

    Gizmo.__name__ = f"Gizmo{version.title()}"
    return Gizmo


def test_versions_are_sorted_by_kubernetes_priority_with_one_storage() -> None:
    classes = [gizmo(v, storage=v == "v1beta1" or None)
               for v in ("v1alpha1", "v1", "v2beta1", "v1beta2", "v1beta1", "v10alpha1")]
    (crd,) = crds(*classes)
    versions = crd["spec"]["versions"]
    assert [v["name"] for v in versions] == ["v1", "v2beta1", "v1beta2", "v1beta1", "v10alpha1",
                                             "v1alpha1"]
    assert [v["storage"] for v in versions] == [False, False, False, True, False, False]
    assert crds(*reversed(classes)) == [crd]  # the order of the arguments does not matter


def test_version_entries_say_served_deprecated_and_selectable() -> None:
    old = gizmo("v1beta1", served=False, deprecated=True,
                deprecation_warning="example.com/v1beta1 Gizmo is deprecated; use v1",
                selectable_fields=(".spec.color",))
    (crd,) = crds(old, gizmo("v1", storage=True))
    v1, v1beta1 = crd["spec"]["versions"]
    assert list(v1beta1) == ["name", "served", "storage", "deprecated", "deprecationWarning",
                             "subresources", "selectableFields", "schema"]
    assert (v1beta1["served"], v1beta1["deprecated"]) == (False, True)
    assert v1beta1["selectableFields"] == [{"jsonPath": ".spec.color"}]
    assert list(v1) == ["name", "served", "storage", "subresources", "schema"]


def test_one_crd_per_group_and_plural_sorted_by_name() -> None:
    names = [c["metadata"]["name"] for c in crds(Memcached, gizmo("v1"), Memcached)]
    assert names == ["gizmos.example.com", "memcacheds.cache.example.com"]


def test_a_single_class_crd_is_its_storage_version() -> None:
    lone = gizmo("v1", storage=False)
    assert lone.crd()["spec"]["versions"][0]["storage"] is True
    with pytest.raises(CRDError) as info:
        crds(lone)
    assert str(info.value) == ("gizmos.example.com: 0 storage versions among GizmoV1; declare "
                               "exactly one with storage=True")


@pytest.mark.parametrize(("classes", "message"), [
    (lambda: [gizmo("v1"), gizmo("v2")],
     "gizmos.example.com: 0 storage versions among GizmoV2, GizmoV1; declare exactly one with "
     "storage=True"),
    (lambda: [gizmo("v1", storage=True), gizmo("v2", storage=True)],
     "gizmos.example.com: 2 storage versions among GizmoV2, GizmoV1; declare exactly one with "
     "storage=True"),
    (lambda: [gizmo("v1", storage=True, served=False), gizmo("v2", served=False)],
     "gizmos.example.com: no served version; declare one with served=True"),
    (lambda: [gizmo("v1", storage=True), gizmo("v1")],
     "GizmoV1: version v1 of gizmos.example.com is declared twice (also by GizmoV1)"),
    (lambda: [gizmo("v1", storage=True), gizmo("v2", scope="Cluster")],
     "GizmoV1: versions of gizmos.example.com disagree on scope (GizmoV2 declares it "
     "differently)"),
    (lambda: [gizmo("v1", storage=True), gizmo("v2", categories=("all",))],
     "GizmoV1: versions of gizmos.example.com disagree on categories (GizmoV2 declares it "
     "differently)"),
    (lambda: [gizmo("v1", storage=True), gizmo("v2", singular="gizmoo")],
     "GizmoV1: versions of gizmos.example.com disagree on singular (GizmoV2 declares it "
     "differently)"),
])
def test_versions_must_agree_and_have_one_storage(classes: Any, message: str) -> None:
    with pytest.raises(CRDError) as info:
        crds(*classes())
    assert str(info.value) == message


def test_printer_columns_may_use_metadata_list_selectors_and_free_form_fields() -> None:
    class Spec(Model):
        nodes: list[str] = []
        extra: dict[str, Any] = {}

    class Wide(CustomResource, group="example.com", version="v1", printer_columns=(
            PrinterColumn("First", ".spec.nodes[0]"),
            PrinterColumn("Free", ".spec.extra.anything.below"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
            PrinterColumn("Owner", ".metadata.ownerReferences[0].name", priority=1,
                          description="The first owner."))):
        spec: Spec

    columns = Wide.crd()["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [c["jsonPath"] for c in columns] == [
        ".spec.nodes[0]", ".spec.extra.anything.below", ".metadata.creationTimestamp",
        ".metadata.ownerReferences[0].name"]
    assert columns[3] == {"name": "Owner", "type": "string", "priority": 1,
                          "jsonPath": ".metadata.ownerReferences[0].name",
                          "description": "The first owner."}


def test_cluster_scoped_resources() -> None:
    class Policy(CustomResource, group="example.com", version="v1", scope="Cluster"):
        data: dict[str, str] = {}

    crd = Policy.crd()
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"]["plural"] == "policies"
    assert crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["data"] == {
        "type": "object", "default": {}, "additionalProperties": {"type": "string"}}
    assert "subresources" not in crd["spec"]["versions"][0]


# -- YAML ------------------------------------------------------------------------------------
def test_yaml_is_block_style_stable_and_round_trips() -> None:
    text = crd_yaml(Memcached.crd(), header="Generated by asyncop.\nDo not edit.")
    assert text.startswith("# Generated by asyncop.\n# Do not edit.\n"
                           "apiVersion: apiextensions.k8s.io/v1\n")
    assert yaml.safe_load(text) == Memcached.crd()
    assert crd_yaml(Memcached.crd(), header="Generated by asyncop.\nDo not edit.") == text
    assert "\n  versions:\n    - name: v1alpha1\n      served: true\n" in text
    assert "{" not in text.replace("status: {}", "")  # block style, except empty maps
    description = API_VERSION["description"]
    assert f"description: {description}\n" in text  # one line, however long


def test_yaml_quotes_what_yaml_1_1_would_misread_and_keeps_line_breaks() -> None:
    shared = {"a": 1}
    doc = {"enum": ["y", "n", "on", "no", "yes", "1.0", "null", "~", "x"],
           "text": "first paragraph\n\nsecond", "same": shared, "again": shared}
    text = crd_yaml(doc)
    assert text == ("enum:\n  - 'y'\n  - 'n'\n  - 'on'\n  - 'no'\n  - 'yes'\n  - '1.0'\n"
                    "  - 'null'\n  - '~'\n  - x\ntext: |-\n  first paragraph\n\n  second\n"
                    "same:\n  a: 1\nagain:\n  a: 1\n")
    assert yaml.safe_load(text) == doc
