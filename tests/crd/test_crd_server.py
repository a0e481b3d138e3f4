"""Generated CRDs against the embedded API server over real HTTP, and against real kubectl.

The server accepts the generated CRD (both versions, subresources, columns, short names,
categories) and then does what the schema says: validates (422 with field causes), defaults
and prunes objects, serves the scale subresource, and takes typed status writes (a second,
identical write sends nothing: the resourceVersion stays). kubectl applies the generated YAML
and shows the printer columns and the field descriptions (`kubectl explain`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from pydantic import Field

from asyncop.api import Invalid
from asyncop.api.kinds import CRD
from asyncop.apiserver import ApiServer
from asyncop.client import Client, load_config
from asyncop.crd import (
    Conditions,
    CustomResource,
    Int64,
    IntOrString,
    ListMap,
    Model,
    ObjectMeta,
    PrinterColumn,
    Rule,
    Scale,
    crd_yaml,
    crds,
)
from asyncop.operator.install import install_crds
from tests.e2e.conftest import Kubectl


class Port(Model):
    name: str
    """The port's name."""
    port: IntOrString
    """A number or a named port."""


class GadgetSpec(Model):
    """The desired state of a Gadget."""

    size: Annotated[int, Field(ge=0, le=10)] = 1
    """Number of pods."""
    image: str = "nginx:1.27"
    """The image the pods run."""
    ports: Annotated[list[Port], ListMap("name")] = []
    """Ports the pods listen on."""
    limit: Annotated[int, Rule("self <= 100", message="limit is at most 100")] = 10


class GadgetStatus(Model):
    """What the controller saw."""

    replicas: int = 0
    selector: str | None = None
    nodes: list[str] = []
    observed_generation: Int64 | None = None
    conditions: Conditions = []


class Gadget(CustomResource, group="gadgets.example.com", version="v1", short_names=("gd",),
             categories=("gizmos",), storage=True,
             printer_columns=(PrinterColumn("Size", ".spec.size", type="integer"),
                              PrinterColumn("Image", ".spec.image", priority=1),
                              PrinterColumn("Age", ".metadata.creationTimestamp", type="date")),
             scale=Scale(".spec.size", ".status.replicas", ".status.selector")):
    """Gadget runs spec.size pods of spec.image."""

    spec: GadgetSpec
    status: GadgetStatus | None = None


class GadgetV1Alpha1(CustomResource, group="gadgets.example.com", version="v1alpha1",
                     kind="Gadget", short_names=("gd",), categories=("gizmos",),
                     deprecated=True):
    spec: GadgetSpec
    status: GadgetStatus | None = None


@pytest.fixture
async def client(apiserver_no_sim: ApiServer) -> AsyncIterator[Client]:
    async with Client(await load_config(url=apiserver_no_sim.url), max_retries=0) as c:
        await install_crds(c, crds(Gadget, GadgetV1Alpha1), field_manager="test")
        yield c


def gadget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "gadgets.example.com/v1", "kind": "Gadget",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


async def test_the_server_accepts_and_serves_the_generated_crd(client: Client) -> None:
    stored = await client.get(CRD, "gadgets.gadgets.example.com")
    assert [v["name"] for v in stored["spec"]["versions"]] == ["v1", "v1alpha1"]
    assert {c["type"]: c["status"] for c in stored["status"]["conditions"]}["Established"] == (
        "True")
    assert (await client.list(GadgetV1Alpha1.KIND, namespace="default"))["items"] == []


async def test_objects_are_defaulted_pruned_and_validated(client: Client) -> None:
    created = await client.create(Gadget.KIND, gadget("g1", size=2, unknown="dropped",
                                                      ports=[{"name": "http", "port": "web"}]))
    assert created["spec"] == {"size": 2, "image": "nginx:1.27", "limit": 10,
                               "ports": [{"name": "http", "port": "web"}]}
    typed = Gadget.parse(created)
    assert typed.spec.ports[0].port == "web"
    with pytest.raises(Invalid) as info:
        await client.create(Gadget.KIND, gadget("g2", size=11, image=3))
    fields = {c.get("field") for c in info.value.causes}
    assert fields == {"spec.size", "spec.image"}
    with pytest.raises(Invalid) as info:
        await client.create(Gadget.KIND, {**gadget("g3"), "spec": None})
    assert {c.get("field") for c in info.value.causes} == {"spec"}


async def test_typed_object_round_trip_and_status_writes(client: Client) -> None:
    new = Gadget(metadata=ObjectMeta(name="g4", namespace="default"),
                 spec=GadgetSpec(size=3, ports=[Port(name="p", port=80)]))
    raw = await client.create(Gadget.KIND, new.to_raw())
    g = Gadget.parse(raw)
    status = GadgetStatus(replicas=3, selector="app=g4", nodes=["a", "b", "c"],
                          observed_generation=g.metadata.generation)
    stored = await g.write_status(client, status)
    assert stored is not None and stored.status == status
    rv = stored.metadata.resource_version
    assert await stored.write_status(client, status) is None  # nothing changed: nothing sent
    again = await client.get(Gadget.KIND, "g4", namespace="default")
    assert again["metadata"]["resourceVersion"] == rv
    assert again["status"]["observedGeneration"] == 1


async def test_the_scale_subresource_follows_the_declared_paths(client: Client) -> None:
    await client.create(Gadget.KIND, gadget("g5", size=1))
    scale = await client.patch(Gadget.KIND, "g5", {"spec": {"replicas": 4}},
                               namespace="default", subresource="scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 4
    assert (await client.get(Gadget.KIND, "g5", namespace="default"))["spec"]["size"] == 4


async def test_kubectl_applies_the_yaml_and_shows_columns_and_docs(kubectl: Kubectl) -> None:
    path = kubectl.write("gadgets.yaml", crd_yaml(crds(Gadget, GadgetV1Alpha1)[0]))
    await kubectl.ok("apply", "-f", path)
    await kubectl.ok("wait", "--for=condition=Established",
                     "crd/gadgets.gadgets.example.com", "--timeout=20s")
    sample = kubectl.write("g.yaml", "apiVersion: gadgets.example.com/v1\nkind: Gadget\n"
                           "metadata: {name: kg}\nspec: {size: 2}\n")
    await kubectl.ok("apply", "-f", sample)
    table = (await kubectl.ok("get", "gd")).splitlines()
    assert table[0].split() == ["NAME", "SIZE", "AGE"] and table[1].split()[:2] == ["kg", "2"]
    wide = (await kubectl.ok("get", "gizmos", "-o", "wide")).splitlines()
    assert wide[0].split() == ["NAME", "SIZE", "IMAGE", "AGE"]
    explained = await kubectl.ok("explain", "gadget.spec")
    assert "The desired state of a Gadget." in explained and "Number of pods." in explained
    bad = kubectl.write("bad.yaml", "apiVersion: gadgets.example.com/v1\nkind: Gadget\n"
                        "metadata: {name: kb}\nspec: {size: 50}\n")
    failed = await kubectl("apply", "-f", bad)
    assert failed.rc != 0 and "spec.size" in failed.err
