"""CustomResource (asyncop/crd/resource.py): the declaration, the Kind, typed access offline.

The typed access against a real API server (write_status, from_cache over a live Cache) is
in test_crd_server.py.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field, ValidationError

from asyncop.api import Kind, KindSource, RawObject, Request, kind_of
from asyncop.crd import (
    CRDError,
    CustomResource,
    Int32,
    Model,
    Nullable,
    ObjectMeta,
    ResourceInfo,
    describe_error,
)
from asyncop.crd.names import is_group, plural_of, version_priority


class WidgetSpec(Model):
    size: Annotated[int, Field(ge=0, le=10)] = 1
    image: str = "nginx"
    extra_args: list[str] = []
    port: Int32 = 80


class WidgetStatus(Model):
    replicas: int = 0
    pod_names: list[str] = []
    phase: Literal["Pending", "Ready"] | None = None
    since: datetime.datetime | None = None


class Widget(CustomResource, group="example.com", version="v1"):
    """A widget."""

    spec: WidgetSpec
    status: WidgetStatus | None = None


# -- the declaration -------------------------------------------------------------------------
def test_the_kind_and_the_declaration_come_from_the_class() -> None:
    assert Widget.KIND == Kind("example.com", "v1", "widgets", "Widget", namespaced=True)
    assert Widget.__resource__ == Widget.info() == ResourceInfo(
        group="example.com", version="v1", kind="Widget", plural="widgets", singular="widget",
        status_subresource=True)
    source: KindSource = Widget  # a resource class is a KindSource for the runtime
    assert kind_of(source) is Widget.KIND

    class Policy(CustomResource, group="example.com", version="v1beta1", scope="Cluster"):
        spec: WidgetSpec | None = None

    assert Policy.KIND == Kind("example.com", "v1beta1", "policies", "Policy",
                               namespaced=False)
    assert Policy.info().status_subresource is False


def test_kind_plural_and_singular_can_be_declared() -> None:
    class WidgetV2(CustomResource, group="example.com", version="v2", kind="Widget",
                   plural="widgetz", singular="wdgt", status_subresource=False):
        status: WidgetStatus | None = None

    assert WidgetV2.KIND == Kind("example.com", "v2", "widgetz", "Widget")
    assert (WidgetV2.info().singular, WidgetV2.info().status_subresource) == ("wdgt", False)


@pytest.mark.parametrize(("kind", "plural"), [
    ("Memcached", "memcacheds"), ("Policy", "policies"), ("Box", "boxes"), ("Gateway",
    "gateways"), ("Match", "matches"), ("Bus", "buses"), ("Wish", "wishes"), ("Quiz",
    "quizes"), ("Day", "days"), ("At", "ats"), ("CrdKind", "crdkinds")])
def test_plurals_follow_simple_english_rules(kind: str, plural: str) -> None:
    assert plural_of(kind) == plural


def test_versions_sort_like_kubernetes() -> None:
    names = ["v1alpha1", "v2", "v1beta1", "foo", "v1", "v1beta2", "v10alpha1", "bar", "v11"]
    assert sorted(names, key=version_priority) == [
        "v11", "v2", "v1", "v1beta2", "v1beta1", "v10alpha1", "v1alpha1", "bar", "foo"]


def test_group_names() -> None:
    assert is_group("cache.example.com") and is_group("a.b")
    assert not is_group("example") and not is_group("Example.com") and not is_group("a..b")


# -- construction and the apiVersion/kind fields ---------------------------------------------
def test_api_version_and_kind_are_filled_when_constructing() -> None:
    w = Widget(spec=WidgetSpec())
    assert (w.api_version, w.kind) == ("example.com/v1", "Widget")
    assert Widget.model_fields["kind"].default == "Widget"
    assert CustomResource.model_fields["kind"].default == ""  # the base is untouched


def test_int32_is_checked_in_python_too() -> None:
    with pytest.raises(ValidationError):
        WidgetSpec(port=2**31)


# -- parse, describe_error, to_raw -----------------------------------------------------------
RAW: RawObject = {  # type: ignore[typeddict-unknown-key]
    "apiVersion": "example.com/v1", "kind": "Widget",
    "metadata": {"name": "w", "namespace": "default", "resourceVersion": "7", "uid": "u1",
                 "generation": 2, "creationTimestamp": "2026-01-02T03:04:05Z",
                 "managedFields": [{"manager": "kubectl"}]},
    "spec": {"size": 3, "extraArgs": ["-v"], "future": "ignored"},
    "status": {"replicas": 1, "podNames": ["a"], "since": "2026-01-02T03:04:05Z"},
}


def test_parse_is_typed_keeps_the_raw_object_and_never_mutates_it() -> None:
    before = repr(RAW)
    w = Widget.parse(RAW)
    assert (w.spec.size, w.spec.image, w.spec.extra_args) == (3, "nginx", ["-v"])
    assert w.status is not None and w.status.pod_names == ["a"]
    assert w.status.since == datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert w.metadata.resource_version == "7" and w.metadata.generation == 2
    assert w.metadata.model_extra == {"managedFields": [{"manager": "kubectl"}]}
    assert w.raw is RAW
    assert repr(RAW) == before


def test_parse_accepts_python_names_too() -> None:
    w = Widget.parse({"spec": {"extra_args": ["-x"]}})  # type: ignore[typeddict-unknown-key]
    assert w.spec.extra_args == ["-x"] and w.kind == "Widget"


def test_describe_error_reads_well() -> None:
    bad = {**RAW, "spec": {"size": 11, "image": 5, "extraArgs": ["ok", 3]}}
    with pytest.raises(ValidationError) as info:
        Widget.parse(bad)  # type: ignore[arg-type]
    assert describe_error(info.value) == (
        "spec.size: Input should be less than or equal to 10; "
        "spec.image: Input should be a valid string; "
        "spec.extraArgs[1]: Input should be a valid string")
    with pytest.raises(ValidationError) as info:
        Widget.parse({"metadata": {}})  # type: ignore[typeddict-item]
    assert describe_error(info.value) == "spec: Field required"


def test_to_raw_builds_the_object_the_api_wants() -> None:
    class Spec(Model):
        size: int = 1
        note: str | None = None
        must: int | None
        maybe: Annotated[str | None, Nullable] = None
        names: list[str | None] = []

    class Thing(CustomResource, group="example.com", version="v1"):
        spec: Spec
        status: WidgetStatus | None = None

    t = Thing(metadata=ObjectMeta(name="n", namespace="default", labels={"a": "b"}),
              spec=Spec(must=None, names=["x", None]))
    raw = t.to_raw()
    assert raw == {"apiVersion": "example.com/v1", "kind": "Thing",
                   "metadata": {"name": "n", "namespace": "default", "labels": {"a": "b"}},
                   "spec": {"size": 1, "must": None, "maybe": None, "names": ["x", None]}}
    assert list(raw) == ["apiVersion", "kind", "metadata", "spec"]
    assert Thing.parse(raw) == t
    assert t.raw == raw  # not parsed: raw is to_raw()


def test_from_cache_reads_a_request_or_a_name() -> None:
    class Cache:
        """A dict-backed reader with the Cache's `get` signature."""

        def __init__(self, objects: dict[tuple[str, str | None], RawObject]) -> None:
            self.objects = objects

        def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None:
            return self.objects.get((name, namespace)) if kind == Widget.KIND else None

    cache = Cache({("w", "default"): RAW})
    found = Widget.from_cache(cache, Request("w", "default"))
    assert found is not None and found.spec.size == 3 and found.raw is RAW
    assert Widget.from_cache(cache, "w", "default") == found
    assert Widget.from_cache(cache, Request("gone", "default")) is None


async def test_write_status_needs_a_status_subresource() -> None:
    class Quiet(CustomResource, group="example.com", version="v1", status_subresource=False):
        status: WidgetStatus | None = None

    class Unused:
        async def update_status(self, kind: Kind, obj: RawObject) -> RawObject:
            raise AssertionError("not reached")

    with pytest.raises(CRDError, match=r"^Quiet: no status subresource to write$"):
        await Quiet().write_status(Unused(), WidgetStatus())


async def test_write_status_rejects_a_status_that_does_not_fit_the_model() -> None:
    class Unused:
        async def update_status(self, kind: Kind, obj: RawObject) -> RawObject:
            raise AssertionError("not reached")

    with pytest.raises(ValidationError):
        await Widget.parse(RAW).write_status(Unused(), {"replicas": "many"})


def test_typed_fields_other_than_spec_and_status() -> None:
    class Config(CustomResource, group="example.com", version="v1"):
        data: dict[str, str] = {}
        binary_data: dict[str, Any] = {}

    assert list(Config.schema()["properties"]) == ["apiVersion", "kind", "metadata", "data",
                                                   "binaryData"]
    assert Config.parse({"data": {"a": "b"}}).data == {"a": "b"}  # type: ignore[typeddict-unknown-key]


def test_a_new_version_may_subclass_an_old_one_with_its_own_keywords() -> None:
    class WidgetV2(Widget, group="example.com", version="v2", kind="Widget", storage=True):
        """A widget, v2."""

        color: str = "red"

    assert WidgetV2.KIND == Kind("example.com", "v2", "widgets", "Widget")
    assert Widget.KIND.version == "v1" and Widget.model_fields["api_version"].default == (
        "example.com/v1")
    assert WidgetV2(spec=WidgetSpec()).api_version == "example.com/v2"
    assert list(WidgetV2.schema()["properties"]) == ["apiVersion", "kind", "metadata", "spec",
                                                     "status", "color"]
