"""The Gadget resource (three versions) that the server and kubectl acceptance tests share."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from asyncop.crd import (
    Conditions,
    CustomResource,
    Int32,
    Int64,
    IntOrString,
    ListMap,
    Model,
    PrinterColumn,
    Rule,
    Scale,
)


class Port(Model):
    """A port the pods listen on."""

    name: str
    """The port's name."""
    port: IntOrString
    """A number or a named port."""
    protocol: Literal["TCP", "UDP"] = "TCP"


class Window(Model, rules=[Rule("self.low <= self.high", message="low must not exceed high")]):
    low: int = 0
    high: int = 10


class GadgetSpec(Model):
    """The desired state of a Gadget."""

    size: Annotated[int, Field(ge=0, le=10)] = 1
    """Number of pods."""
    image: Annotated[str, Field(pattern=r"^[a-z0-9./:-]+$")] = "nginx:1.27"
    """The image the pods run."""
    mode: Literal["fast", "safe"] = "safe"
    ports: Annotated[list[Port], ListMap("name")] = []
    labels: dict[str, str] = {}
    config: dict[str, Any] = {}
    window: Window = Window()
    limit: Int32 | None = None
    tags: set[str] = set()


class GadgetStatus(Model):
    """What the controller saw."""

    replicas: int = 0
    selector: str | None = None
    nodes: list[str] = []
    observed_generation: Int64 | None = None
    conditions: Conditions = []


COLUMNS = (PrinterColumn("Size", ".spec.size", type="integer"),
           PrinterColumn("Image", ".spec.image", priority=1),
           PrinterColumn("Age", ".metadata.creationTimestamp", type="date"))


class Gadget(CustomResource, group="gadgets.example.com", version="v1", short_names=("gd",),
             categories=("gizmos",), storage=True, printer_columns=COLUMNS,
             scale=Scale(".spec.size", ".status.replicas", ".status.selector"),
             selectable_fields=(".spec.mode",)):
    """Gadget runs spec.size pods of spec.image."""

    spec: GadgetSpec
    status: GadgetStatus | None = None


class GadgetSpecV1Beta1(Model):
    size: Annotated[int, Field(ge=0, le=10)] = 1
    image: str = "nginx:1.25"


class GadgetV1Beta1(CustomResource, group="gadgets.example.com", version="v1beta1",
                    kind="Gadget", short_names=("gd",), categories=("gizmos",),
                    deprecated=True, deprecation_warning="gadgets v1beta1 is deprecated",
                    printer_columns=COLUMNS[:1]):
    spec: GadgetSpecV1Beta1
    status: GadgetStatus | None = None


class GadgetV1Alpha1(CustomResource, group="gadgets.example.com", version="v1alpha1",
                     kind="Gadget", short_names=("gd",), categories=("gizmos",),
                     served=False):
    spec: GadgetSpecV1Beta1
