"""Generated CRDs against the embedded API server, over real HTTP.

The server accepts a generated multi-version CRD (printer columns, scale and status
subresources, short names, categories, defaults, list maps, CEL rules, selectable fields)
and then does what the schema says: validates objects (422 with field causes), defaults and
prunes them, serves the scale subresource and every served version; typed objects round-trip
(`to_raw` -> create -> `parse`), `from_cache` reads a live Cache, and `write_status` updates
status — a second, identical write sends nothing (the stored resourceVersion stays) and a
write from a stale object is a Conflict. Checks read end state from the server.
"""

from __future__ import annotations

import asyncio
import datetime
import enum
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import pytest
from pydantic import Base64Bytes, Field

from asyncop.api import Conflict, Invalid, Request
from asyncop.api.kinds import CRD
from asyncop.apiserver import ApiServer
from asyncop.client import Client, load_config
from asyncop.clock import RealClock
from asyncop.crd import (
    Condition,
    Conditions,
    CustomResource,
    EmbeddedResource,
    Format,
    Int32,
    Int64,
    IntOrString,
    ListAtomic,
    ListMap,
    ListSet,
    MapType,
    Model,
    Nullable,
    ObjectMeta,
    PreserveUnknownFields,
    PrinterColumn,
    Rule,
    crds,
)
from asyncop.runtime.cache import Cache
from tests.crd.gadgets import (
    Gadget,
    GadgetSpec,
    GadgetSpecV1Beta1,
    GadgetStatus,
    GadgetV1Alpha1,
    GadgetV1Beta1,
    Port,
)


async def install(client: Client, crd: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = await client.create(CRD, crd)  # type: ignore[arg-type]
    return created


@pytest.fixture
async def client(apiserver_no_sim: ApiServer) -> AsyncIterator[Client]:
    async with Client(await load_config(url=apiserver_no_sim.url), max_retries=0) as c:
        (crd,) = crds(Gadget, GadgetV1Alpha1, GadgetV1Beta1)
        await install(c, crd)  # type: ignore[arg-type]
        yield c


def gadget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "gadgets.example.com/v1", "kind": "Gadget",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


async def test_the_server_accepts_and_serves_the_generated_crd(client: Client) -> None:
    stored = await client.get(CRD, "gadgets.gadgets.example.com")
    assert [v["name"] for v in stored["spec"]["versions"]] == ["v1", "v1beta1", "v1alpha1"]
    assert stored["status"]["storedVersions"] == ["v1"]
    assert {c["type"]: c["status"] for c in stored["status"]["conditions"]}["Established"] == (
        "True")
    assert stored["spec"]["names"]["shortNames"] == ["gd"]
    assert (await client.list(GadgetV1Beta1.KIND, namespace="default"))["items"] == []


async def test_objects_are_defaulted_and_pruned(client: Client) -> None:
    created = await client.create(Gadget.KIND, gadget(
        "g1", size=2, unknown="dropped", ports=[{"name": "http", "port": "web", "junk": 1}],
        window={}, config={"free": {"form": [1, None]}}, tags=["b", "a"]))
    assert created["spec"] == {
        "size": 2, "image": "nginx:1.27", "mode": "safe",
        "ports": [{"name": "http", "port": "web", "protocol": "TCP"}],
        "labels": {}, "config": {"free": {"form": [1, None]}}, "window": {"low": 0, "high": 10},
        "tags": ["b", "a"]}
    typed = Gadget.parse(created)
    assert typed.spec.ports == [Port(name="http", port="web")]
    assert typed.spec.tags == {"a", "b"}


async def test_objects_are_validated_with_field_causes(client: Client) -> None:
    with pytest.raises(Invalid) as info:
        await client.create(Gadget.KIND, gadget("g2", size=11, image="UPPER", mode="slow",
                                                limit=2**31, ports=[{"port": 80}]))
    causes = {c.get("field"): c.get("message", "") for c in info.value.causes}
    assert set(causes) == {"spec.size", "spec.image", "spec.mode", "spec.limit",
                           "spec.ports[0].name"}
    assert "less than or equal to 10" in causes["spec.size"]
    assert "supported values" in causes["spec.mode"]
    with pytest.raises(Invalid) as info:
        await client.create(Gadget.KIND, {**gadget("g3"), "spec": None})
    assert {c.get("field") for c in info.value.causes} == {"spec"}


async def test_rule_markers_are_enforced_by_the_server(client: Client) -> None:
    """`Rule(...)` on a model becomes x-kubernetes-validations, which the server evaluates."""
    with pytest.raises(Invalid) as info:
        await client.create(Gadget.KIND, gadget("g5", window={"low": 5, "high": 1}))
    assert [(c.get("field"), c.get("message")) for c in info.value.causes] == [
        ("spec.window", 'Invalid value: "object": low must not exceed high')]
    created = await client.create(Gadget.KIND, gadget("g5", window={"low": 1, "high": 5}))
    assert created["spec"]["window"] == {"low": 1, "high": 5}


async def test_typed_objects_round_trip(client: Client) -> None:
    new = Gadget(metadata=ObjectMeta(name="g4", namespace="default", labels={"app": "g"}),
                 spec=GadgetSpec(size=3, ports=[Port(name="p", port=80)], limit=5))
    created = await client.create(Gadget.KIND, new.to_raw())
    typed = Gadget.parse(created)
    assert typed.spec == new.spec
    assert typed.metadata.labels == {"app": "g"} and typed.metadata.generation == 1
    assert typed.api_version == "gadgets.example.com/v1" and typed.kind == "Gadget"


async def test_write_status_writes_once_and_then_nothing(client: Client) -> None:
    raw = await client.create(Gadget.KIND, Gadget(
        metadata=ObjectMeta(name="g5", namespace="default"), spec=GadgetSpec(size=3)).to_raw())
    g = Gadget.parse(raw)
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    status = GadgetStatus(replicas=3, selector="app=g5", nodes=["a", "b", "c"],
                          observed_generation=g.metadata.generation,
                          conditions=[Condition(type="Ready", status="True", reason="Up",
                                                last_transition_time=when)])
    stored = await g.write_status(client, status)
    assert stored is not None and stored.status == status
    rv = stored.metadata.resource_version
    assert rv != g.metadata.resource_version
    assert await stored.write_status(client, status) is None  # unchanged: nothing sent
    assert await stored.write_status(client, status.model_dump()) is None  # a dict, too
    again = await client.get(Gadget.KIND, "g5", namespace="default")
    assert again["metadata"]["resourceVersion"] == rv
    assert again["status"]["observedGeneration"] == 1
    assert again["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-02T03:04:05Z"
    assert again["spec"] == raw["spec"]  # the status subresource leaves spec alone


async def test_write_status_from_a_stale_object_is_a_conflict(client: Client) -> None:
    raw = await client.create(Gadget.KIND, gadget("g6"))
    stale = Gadget.parse(raw)
    await client.patch(Gadget.KIND, "g6", {"spec": {"size": 2}}, namespace="default")
    with pytest.raises(Conflict):
        await stale.write_status(client, GadgetStatus(replicas=1))
    current = await client.get(Gadget.KIND, "g6", namespace="default")
    assert "status" not in current


async def test_the_scale_subresource_follows_the_declared_paths(client: Client) -> None:
    raw = await client.create(Gadget.KIND, gadget("g7", size=1))
    await Gadget.parse(raw).write_status(client, GadgetStatus(replicas=1, selector="app=g7"))
    scaled = await client.patch(Gadget.KIND, "g7", {"spec": {"replicas": 4}},
                                namespace="default", subresource="scale")
    assert scaled["kind"] == "Scale" and scaled["spec"]["replicas"] == 4
    assert scaled["status"] == {"replicas": 1, "selector": "app=g7"}
    stored = await client.get(Gadget.KIND, "g7", namespace="default")
    assert stored["spec"]["size"] == 4 and stored["metadata"]["generation"] == 2


async def test_every_served_version_reads_the_stored_object(client: Client) -> None:
    await client.create(Gadget.KIND, gadget("g8", size=5, mode="fast"))
    old = GadgetV1Beta1.parse(await client.get(GadgetV1Beta1.KIND, "g8", namespace="default"))
    assert old.api_version == "gadgets.example.com/v1beta1"
    assert old.spec == GadgetSpecV1Beta1(size=5, image="nginx:1.27")
    assert "mode" not in old.raw["spec"]  # pruned by the v1beta1 schema


async def test_from_cache_reads_a_live_cache(client: Client) -> None:
    await client.create(Gadget.KIND, gadget("g9", size=7))
    cache = Cache(client, clock=RealClock())
    cache.informer(Gadget.KIND)
    await cache.start()
    try:
        await asyncio.wait_for(cache.wait_for_sync(), 10)
        found = Gadget.from_cache(cache, Request("g9", "default"))
        assert found is not None and found.spec.size == 7
        assert found.raw is cache.get(Gadget.KIND, "g9", "default")
        assert Gadget.from_cache(cache, "nope", "default") is None
    finally:
        await cache.stop()


# -- nulls and embedded objects --------------------------------------------------------------
# kube drops a null where the schema is not nullable (or defaults it); to_raw() leaves those
# out and keeps the ones the schema allows.
class HolderSpec(Model):
    must: int | None
    """Required, and may be null."""
    asked: Annotated[str | None, Nullable] = None
    optional: str | None = None
    items: list[int | None] = []
    template: Annotated[dict[str, Any] | None, EmbeddedResource] = None


class Holder(CustomResource, group="holders.example.com", version="v1"):
    spec: HolderSpec


async def test_nulls_the_schema_allows_are_kept(apiserver_no_sim: ApiServer) -> None:
    async with Client(await load_config(url=apiserver_no_sim.url), max_retries=0) as c:
        await install(c, Holder.crd())  # type: ignore[arg-type]
        typed = Holder(metadata=ObjectMeta(name="h", namespace="default"), spec=HolderSpec(
            must=None, items=[1, None], template={"apiVersion": "v1", "kind": "Pod",
                                                  "metadata": {"name": "p"}, "spec": {}}))
        created = await c.create(Holder.KIND, typed.to_raw())
        assert created["spec"] == {"must": None, "asked": None, "items": [1, None],
                                   "template": typed.spec.template}
        assert Holder.parse(created).spec == typed.spec
        other = await c.create(Holder.KIND, {**typed.to_raw(), "metadata": {"name": "h2"},
                                             "spec": {"must": 1, "optional": None}})
        assert other["spec"] == {"must": 1, "items": []}  # a null it does not allow: dropped
        with pytest.raises(Invalid) as info:
            await c.create(Holder.KIND, {**typed.to_raw(), "metadata": {"name": "h3"},
                                         "spec": {"must": 1, "template": {"spec": {}}}})
        assert {cause.get("field") for cause in info.value.causes} == {
            "spec.template.apiVersion", "spec.template.kind"}


# -- everything the generator emits, accepted ------------------------------------------------
class Color(enum.StrEnum):
    """A colour."""

    RED = "red"
    BLUE = "blue"


class Item(Model):
    name: str
    zone: str = "a"
    weight: float = 1.0


class EverythingSpec(Model, rules=[Rule("self.low <= self.high", reason="FieldValueInvalid",
                                        field_path=".low")]):
    """Every construct the schema conversion emits."""

    low: Int32 = 0
    high: Annotated[Int64, Field(gt=-1, lt=100, multiple_of=1)] = 10
    share: Annotated[float, Field(ge=0, le=1)] = 0.5
    either: int | float = 1
    color: Color = Color.RED
    level: Literal[1, 2, 3] = 1
    only: Literal["x"] = "x"
    port: Annotated[IntOrString, Rule("type(self) == int || self != ''",
                                      message_expression="'bad port ' + string(self)")] = "http"
    name: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[a-z]+$")] = "abc"
    when: datetime.datetime = datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC)
    day: datetime.date = datetime.date(2026, 1, 2)
    blob: bytes = b"\xfb\xff"
    b64: Base64Bytes = Field(default=b"+/8=")
    uid: Annotated[str, Format("uuid")] = "6f1c7a9e-0000-4000-8000-000000000000"
    every: Annotated[str, Format("duration")] = "1h30m"
    tags: set[str] = {"b", "a"}
    pair: tuple[int, int] = (1, 2)
    items: Annotated[list[Item], ListMap("name", "zone"), Field(max_length=10)] = [
        Item(name="first")]
    unique: Annotated[list[int], ListSet] = [1]
    whole: Annotated[list[str], ListAtomic] = []
    labels: Annotated[dict[str, str], MapType("atomic"), Field(max_length=5)] = {"a": "b"}
    maybe: dict[str, int | None] = {"a": None}
    config: dict[str, Any] = {"free": [1, "two"]}
    anything: Any = None
    raw: Annotated[dict[str, Any], PreserveUnknownFields] = {}
    template: Annotated[dict[str, Any], EmbeddedResource] = {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    must: int | None
    asked: Annotated[str | None, Nullable] = None
    made: list[str] = Field(default_factory=lambda: ["made"])


class Everything(CustomResource, group="everything.example.com", version="v1",
                 scope="Cluster", short_names=("ev",), categories=("all",),
                 selectable_fields=(".spec.name", ".spec.low", ".spec.only"),
                 printer_columns=(PrinterColumn("Low", ".spec.low", type="integer",
                                                format="int32"),
                                  PrinterColumn("When", ".spec.when", type="date"),
                                  PrinterColumn("Share", ".spec.share", type="number"))):
    """Everything, cluster-scoped."""

    spec: EverythingSpec
    status: Conditions | None = None


async def test_every_construct_is_accepted_and_defaulted(apiserver_no_sim: ApiServer) -> None:
    async with Client(await load_config(url=apiserver_no_sim.url), max_retries=0) as c:
        await install(c, Everything.crd())  # type: ignore[arg-type]
        created = await c.create(Everything.KIND, {
            "apiVersion": "everything.example.com/v1", "kind": "Everything",
            "metadata": {"name": "e"}, "spec": {"must": None, "items": [{"name": "n"}]}})
        typed = Everything.parse(created)
        assert typed.spec == EverythingSpec(must=None, items=[Item(name="n")])
        assert created["spec"]["tags"] == ["a", "b"] and created["spec"]["blob"] == "-_8="
        assert created["spec"]["maybe"] == {"a": None}
        again = await c.create(Everything.KIND, Everything(
            metadata=ObjectMeta(name="f"), spec=EverythingSpec(must=3)).to_raw())
        assert Everything.parse(again).spec == EverythingSpec(must=3)
