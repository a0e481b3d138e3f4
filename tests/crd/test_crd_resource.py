"""CustomResource declarations, CRD assembly (versions, columns, scale), YAML, typed access."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
import yaml
from pydantic import Field, ValidationError

from asyncop.api import Kind, RawObject, Request
from asyncop.crd import (
    CRDError,
    CustomResource,
    Model,
    ObjectMeta,
    PrinterColumn,
    Scale,
    crd_yaml,
    crds,
    describe_error,
)
from asyncop.crd.names import plural_of, version_priority


class WidgetSpec(Model):
    size: Annotated[int, Field(ge=0, le=10)] = 1
    image: str = "nginx"


class WidgetStatus(Model):
    replicas: int = 0
    selector: str | None = None
    pod_names: list[str] = []


class Widget(CustomResource, group="example.com", version="v1", short_names=("wd",),
             categories=("all",), storage=True,
             printer_columns=(PrinterColumn("Size", ".spec.size", type="integer"),
                              PrinterColumn("Age", ".metadata.creationTimestamp", type="date")),
             scale=Scale(".spec.size", ".status.replicas", ".status.selector"),
             selectable_fields=(".spec.image",)):
    """A widget."""

    spec: WidgetSpec
    status: WidgetStatus | None = None


class WidgetV1Beta1(CustomResource, group="example.com", version="v1beta1", kind="Widget",
                    short_names=("wd",), categories=("all",), deprecated=True,
                    deprecation_warning="example.com/v1beta1 Widget is deprecated; use v1"):
    spec: WidgetSpec
    status: WidgetStatus | None = None


def test_the_kind_is_derived_from_the_declaration() -> None:
    assert Widget.KIND == Kind("example.com", "v1", "widgets", "Widget", namespaced=True)
    assert WidgetV1Beta1.KIND == Kind("example.com", "v1beta1", "widgets", "Widget")

    class Policy(CustomResource, group="example.com", version="v1", scope="Cluster"):
        pass

    assert Policy.KIND == Kind("example.com", "v1", "policies", "Policy", namespaced=False)


@pytest.mark.parametrize(("kind", "plural"), [("Memcached", "memcacheds"), ("Policy", "policies"),
                                              ("Box", "boxes"), ("Gateway", "gateways"),
                                              ("Match", "matches"), ("Bus", "buses")])
def test_plurals(kind: str, plural: str) -> None:
    assert plural_of(kind) == plural


def test_versions_sort_like_kubernetes() -> None:
    names = ["v1alpha1", "v2", "v1beta1", "foo", "v1", "v1beta2", "v10alpha1"]
    assert sorted(names, key=version_priority) == [
        "v2", "v1", "v1beta2", "v1beta1", "v10alpha1", "v1alpha1", "foo"]


def test_one_crd_with_every_version_and_one_storage_version() -> None:
    (crd,) = crds(WidgetV1Beta1, Widget)
    spec = crd["spec"]
    assert crd["metadata"] == {"name": "widgets.example.com"}
    assert spec["names"] == {"plural": "widgets", "singular": "widget", "kind": "Widget",
                             "listKind": "WidgetList", "shortNames": ["wd"],
                             "categories": ["all"]}
    v1, v1beta1 = spec["versions"]
    assert (v1["name"], v1["served"], v1["storage"]) == ("v1", True, True)
    assert (v1beta1["name"], v1beta1["storage"], v1beta1["deprecated"]) == ("v1beta1", False, True)
    assert v1beta1["deprecationWarning"].endswith("use v1")
    assert v1["subresources"] == {"status": {}, "scale": {
        "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector"}}
    assert v1["additionalPrinterColumns"][0] == {"name": "Size", "type": "integer",
                                                  "jsonPath": ".spec.size"}
    assert v1["selectableFields"] == [{"jsonPath": ".spec.image"}]
    assert v1["schema"]["openAPIV3Schema"]["description"] == "A widget."


def test_yaml_is_stable_and_round_trips() -> None:
    (crd,) = crds(Widget, WidgetV1Beta1)
    text = crd_yaml(crd, header="Generated for a test")
    assert text.startswith("# Generated for a test\napiVersion: apiextensions.k8s.io/v1\n")
    assert yaml.safe_load(text) == crd
    assert crd_yaml(crds(WidgetV1Beta1, Widget)[0], header="Generated for a test") == text
    assert "\n    - name: v1\n" in text  # lists indented under their key


def declare(**kw: Any) -> type[CustomResource]:
    class Thing(CustomResource, **kw):  # type: ignore[call-arg]
        spec: WidgetSpec | None = None
        status: WidgetStatus | None = None

    return Thing


@pytest.mark.parametrize(("kw", "message"), [
    ({"version": "v1"}, 'Thing: no group: declare it as class Thing(CustomResource, '
                        'group="example.com", version="v1")'),
    ({"group": "example.com"}, 'Thing: no version: declare it as class Thing(CustomResource, '
                               'group="example.com", version="v1")'),
    ({"group": "example", "version": "v1"}, "Thing: group 'example' must be a DNS subdomain "
                                            "with at least one dot (e.g. cache.example.com)"),
    ({"group": "example.com", "version": "V1"}, "Thing: version 'V1' must be a DNS-1035 label "
                                                "such as v1 or v1alpha1"),
    ({"group": "example.com", "version": "v1", "kind": "thing"},
     "Thing: kind 'thing' must be UpperCamelCase letters and digits"),
    ({"group": "example.com", "version": "v1", "short_names": ("T_1",)},
     "Thing: short name 'T_1' must be a lower-case DNS-1035 label"),
    ({"group": "example.com", "version": "v1", "scope": "Global"},
     'Thing: scope \'Global\' must be "Namespaced" or "Cluster"'),
])
def test_declaration_mistakes_fail_at_class_creation(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(CRDError) as info:
        declare(**kw)
    assert str(info.value) == message


def test_an_abstract_base_has_no_crd() -> None:
    class Base(CustomResource):
        spec: WidgetSpec | None = None

    with pytest.raises(CRDError, match=r"^Base: no group: declare it"):
        crds(Base)


@pytest.mark.parametrize(("kw", "message"), [
    ({"printer_columns": (PrinterColumn("X", ".spec.sise"),)},
     "Thing: printer column 'X': .spec.sise names no declared field"),
    ({"printer_columns": (PrinterColumn("X", ".spec.image", type="integer"),)},
     "Thing: printer column 'X': .spec.image is a string, not integer"),
    ({"scale": Scale(".spec.image", ".status.replicas")},
     "Thing: scale specReplicasPath: .spec.image must be an integer field"),
    ({"scale": Scale(".metadata.generation", ".status.replicas")},
     "Thing: scale specReplicasPath: .metadata.generation must be under .spec or .status"),
    ({"selectable_fields": (".status.podNames",)},
     "Thing: selectable field .status.podNames must be a string, integer or boolean field"),
])
def test_paths_must_name_declared_fields(kw: dict[str, Any], message: str) -> None:
    thing = declare(group="example.com", version="v1", **kw)
    with pytest.raises(CRDError) as info:
        crds(thing)
    assert str(info.value) == message


def test_printer_columns_may_select_list_items() -> None:
    thing = declare(group="example.com", version="v1", printer_columns=(
        PrinterColumn("First", ".status.podNames[0]"),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date")))
    assert crds(thing)[0]["spec"]["versions"][0]["additionalPrinterColumns"][0]["jsonPath"] == (
        ".status.podNames[0]")


def test_versions_must_agree_and_have_one_storage() -> None:
    other = declare(group="example.com", version="v2", kind="Widget", short_names=("wd",),
                    categories=("all",))
    with pytest.raises(CRDError, match=r"^widgets.example.com: 0 storage versions among"):
        crds(other, WidgetV1Beta1)
    cluster = declare(group="example.com", version="v2", kind="Widget", scope="Cluster",
                      short_names=("wd",), categories=("all",), storage=True)
    expected = r"^Widget: versions of widgets.example.com disagree on kind, scope or names \(Thing "
    with pytest.raises(CRDError, match=expected):
        crds(cluster, Widget)


# -- typed access -----------------------------------------------------------------------------
RAW: RawObject = {  # type: ignore[typeddict-unknown-key]
    "apiVersion": "example.com/v1", "kind": "Widget",
    "metadata": {"name": "w", "namespace": "default", "resourceVersion": "7", "uid": "u1",
                 "generation": 2, "managedFields": [{"manager": "kubectl"}]},
    "spec": {"size": 3, "future": "ignored"},
    "status": {"replicas": 1, "podNames": ["a"]},
}


def test_parse_is_typed_and_keeps_the_raw_object() -> None:
    w = Widget.parse(RAW)
    assert w.spec.size == 3 and w.spec.image == "nginx"
    assert w.status is not None and w.status.pod_names == ["a"]
    assert w.metadata.resource_version == "7" and w.metadata.generation == 2
    assert w.raw is RAW
    assert RAW["spec"] == {"size": 3, "future": "ignored"}  # never mutated


def test_parse_errors_read_well() -> None:
    bad = {**RAW, "spec": {"size": 11, "image": 5}}
    with pytest.raises(ValidationError) as info:
        Widget.parse(bad)  # type: ignore[arg-type]
    assert describe_error(info.value) == (
        "spec.size: Input should be less than or equal to 10; "
        "spec.image: Input should be a valid string")


def test_to_raw_builds_a_new_object() -> None:
    w = Widget(metadata=ObjectMeta(name="n", namespace="default"), spec=WidgetSpec(size=2))
    assert w.to_raw() == {"apiVersion": "example.com/v1", "kind": "Widget",
                          "metadata": {"name": "n", "namespace": "default"},
                          "spec": {"size": 2, "image": "nginx"}}


def test_from_cache_reads_a_request_or_a_name() -> None:
    class Cache:
        def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None:
            assert kind == Widget.KIND
            return RAW if (name, namespace) == ("w", "default") else None

    found = Widget.from_cache(Cache(), Request("w", "default"))
    assert found is not None and found.spec.size == 3
    assert Widget.from_cache(Cache(), "w", "default") is not None
    assert Widget.from_cache(Cache(), Request("gone", "default")) is None


async def test_write_status_sends_the_parsed_object_with_the_new_status() -> None:
    sent: list[RawObject] = []

    class Client:
        async def update_status(self, kind: Kind, obj: RawObject) -> RawObject:
            sent.append(obj)
            return {**obj, "metadata": {**obj["metadata"], "resourceVersion": "8"}}

    w = Widget.parse(RAW)
    same = WidgetStatus(replicas=1, pod_names=["a"])
    assert await w.write_status(Client(), same) is None and sent == []
    stored = await w.write_status(Client(), WidgetStatus(replicas=2, pod_names=["a", "b"]))
    assert stored is not None and stored.metadata.resource_version == "8"
    (body,) = sent
    assert body["metadata"]["resourceVersion"] == "7"  # optimistic concurrency
    assert body["status"] == {"replicas": 2, "podNames": ["a", "b"]}
    assert body["spec"] == RAW["spec"] and RAW["status"] == {"replicas": 1, "podNames": ["a"]}
