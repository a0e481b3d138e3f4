"""network: validate a Network (cidr + gateway) into its Ready condition.

The seed's controller only logs add/update/delete; ours logs the same (from a predicate on
the watch, which sees the events) and validates: the CIDR parses as IPv4 or IPv6 (host bits
must be zero), the gateway is an address of the same family, inside the CIDR, and neither
its network nor its broadcast address (for /31, /32, /127 and /128, where every address is
usable, only containment is checked). The outcome is `status.conditions[Ready]` with reason
`Valid`, `InvalidCIDR`, `InvalidGateway` or `GatewayOutsideCIDR`, and `observedGeneration`.

Invariants: resync updates whose resourceVersion did not change are dropped before they
reach the queue (like the Go original); an invalid Network gets one Warning Event per change of
its verdict, never a retry loop.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Annotated

import structlog
from pydantic import Field

from asyncop.api import RawObject, Request
from asyncop.client import Client
from asyncop.clock import Clock, format_time
from asyncop.controllers.common import (
    EVENTS_RULES,
    PolicyRule,
    condition,
    set_condition,
    write_status,
)
from asyncop.crd import Conditions, CustomResource, Int64, Model, PrinterColumn
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import DEFAULT_WORKERS, Controller
from asyncop.runtime.handlers import Predicate, for_, resource_version_changed
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result
from asyncop.runtime.recorder import EventRecorder

log = structlog.get_logger("asyncop.controllers.network")


class NetworkSpec(Model):
    """An IPv4 or IPv6 network and its gateway."""

    cidr: Annotated[str, Field(max_length=64)]
    """The network, e.g. 192.168.0.0/16 or fd00::/64."""
    gateway: Annotated[str, Field(max_length=64)]
    """The gateway address: inside the CIDR, not its network or broadcast address."""


class NetworkStatus(Model):
    """The verdict on the spec, as a Ready condition."""

    observed_generation: Int64 | None = None
    """The metadata.generation this status was computed from."""
    conditions: Conditions | None = None
    """Ready: True with reason Valid, or False with the reason the spec is invalid."""


class Network(
    CustomResource,
    group="samplecrd.k8s.io",
    version="v1",
    printer_columns=(
        PrinterColumn("CIDR", ".spec.cidr"),
        PrinterColumn("Gateway", ".spec.gateway"),
        PrinterColumn("Ready", '.status.conditions[?(@.type=="Ready")].status'),
        PrinterColumn("Reason", '.status.conditions[?(@.type=="Ready")].reason', priority=1),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ),
):
    """Network describes an IPv4 or IPv6 network and its gateway."""

    spec: NetworkSpec | None = None
    status: NetworkStatus | None = None


NETWORK = Network.KIND


RBAC_RULES: tuple[PolicyRule, ...] = (
    PolicyRule((NETWORK.group,), (NETWORK.plural,), ("get", "list", "watch")),
    PolicyRule((NETWORK.group,), (f"{NETWORK.plural}/status",), ("update",)),
    *EVENTS_RULES,
)


@dataclass(frozen=True, slots=True)
class Verdict:
    valid: bool
    reason: str
    message: str


def validate(cidr: object, gateway: object) -> Verdict:
    """Check a Network spec; the reason names the first problem found."""
    try:
        net = ipaddress.ip_network(str(cidr), strict=True)
    except ValueError as exc:
        return Verdict(False, "InvalidCIDR", f"spec.cidr {cidr!r} is not a network: {exc}")
    try:
        gw = ipaddress.ip_address(str(gateway))
    except ValueError:
        return Verdict(False, "InvalidGateway", f"spec.gateway {gateway!r} is not an IP address")
    if gw.version != net.version or gw not in net:
        return Verdict(False, "GatewayOutsideCIDR", f"gateway {gw} is not inside {net}")
    if net.num_addresses > 2:
        if gw == net.network_address:
            return Verdict(
                False, "GatewayOutsideCIDR", f"gateway {gw} is the network address of {net}"
            )
        if net.version == 4 and gw == net.broadcast_address:
            return Verdict(
                False, "GatewayOutsideCIDR", f"gateway {gw} is the broadcast address of {net}"
            )
    return Verdict(True, "Valid", f"gateway {gw} is a host address of {net}")


class NetworkReconciler:
    def __init__(self, *, client: Client, cache: Cache, clock: Clock, recorder: EventRecorder
                 ) -> None:
        self.client = client
        self.cache = cache
        self.clock = clock
        self.recorder = recorder

    async def reconcile(self, req: Request) -> Result:
        net = self.cache.get(NETWORK, req.name, req.namespace)
        if net is None:
            log.info("network gone", network=req.key)
            return Result()
        spec = net.get("spec") or {}
        generation = net["metadata"].get("generation", 0)
        verdict = validate(spec.get("cidr"), spec.get("gateway"))
        status = dict(net.get("status") or {})
        ready = condition(
            "Ready", verdict.valid, reason=verdict.reason, message=verdict.message,
            generation=generation, now=format_time(self.clock.now()),
        )
        status["conditions"] = set_condition(status.get("conditions"), ready)
        status["observedGeneration"] = generation
        if await write_status(self.client, NETWORK, net, status) is not None:
            log.info("network validated", network=req.key, valid=verdict.valid,
                     reason=verdict.reason)
            if not verdict.valid:
                self.recorder.event(net, "Warning", verdict.reason, verdict.message)
        return Result()


def _key(obj: RawObject) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _log_add(obj: RawObject) -> bool:
    log.info("network added", network=_key(obj), spec=obj.get("spec"))
    return True


def _log_update(old: RawObject, new: RawObject) -> bool:
    log.info("network updated", network=_key(new), spec=new.get("spec"))
    return True


def _log_delete(obj: RawObject) -> bool:
    log.info("network deleted", network=_key(obj))
    return True


#: Logs each event the way the Go original's handlers do; always lets it through.
log_events = Predicate("log_events", _log_add, _log_update, _log_delete)


def network_controller(mgr: Manager, *, workers: int = DEFAULT_WORKERS) -> Controller:
    """The `network` controller (resync updates with an unchanged resourceVersion skipped)."""
    r = NetworkReconciler(
        client=mgr.client, cache=mgr.cache, clock=mgr.clock,
        recorder=mgr.recorder("network-controller"),
    )
    watch = for_(NETWORK, resource_version_changed, log_events)
    return Controller("network", r, watches=[watch], workers=workers, rbac=RBAC_RULES)
