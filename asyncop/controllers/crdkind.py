"""crdkind: a CrdKind runs mysql or tomcat as a Deployment behind a NodePort Service.

For CrdKind `<name>` with `spec.choice` c the controller keeps a Deployment `<name>-<c>`
(image by choice, configurable; `spec.replicas` replicas) and a NodePort Service `<name>-<c>`
(mysql 3306, tomcat 8080) selecting exactly those pods, both controlled by the CrdKind.
Invariants:

- Child names are deterministic, so re-running a reconcile creates nothing twice.
- Changing `choice` replaces both children: the new pair is created, then every Deployment
  and Service this CrdKind controls under another name is deleted.
- Replica drift is fixed; status reports `deployment`, `service`, `nodePort`,
  `readyReplicas`, a `Ready` condition and `observedGeneration`.
- A Deployment or Service of a child's name that this CrdKind does not control is never
  touched: status and a Warning Event `ErrResourceExists`; children are mapped back to
  their CrdKind by owner and by name, so that such an object going away wakes it up.
- A missing choice (the schema's enum and anchored pattern reject anything else) is
  reported in status and a Warning Event, and not retried until the spec changes.

The child steps (build the owned Deployment, ensure an owned child, fix replica drift, delete
renamed ones) are `controllers.common.children`, shared with foo.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

import structlog
from pydantic import Field

from asyncop.api import RawObject, Request, controller_of, deep_copy, owner_reference
from asyncop.api.kinds import DEPLOYMENT, SERVICE, Kind
from asyncop.client import Client
from asyncop.clock import Clock, format_time
from asyncop.controllers.common import (
    EVENTS_RULES,
    PolicyRule,
    condition,
    delete_renamed,
    ensure_child,
    ensure_replicas,
    owned_deployment,
    set_condition,
    write_status,
)
from asyncop.crd import Conditions, CustomResource, Int64, Model, PrinterColumn
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import DEFAULT_WORKERS, Controller
from asyncop.runtime.handlers import for_, watches
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result
from asyncop.runtime.recorder import EventRecorder

log = structlog.get_logger("asyncop.controllers.crdkind")


class CrdKindSpec(Model):
    """Which server to run, and how many replicas."""

    choice: Annotated[
        Literal["mysql", "tomcat"] | None, Field(json_schema_extra={"pattern": "^(mysql|tomcat)$"})
    ] = None
    """mysql or tomcat."""
    replicas: Annotated[int, Field(ge=1, le=10)] = 1
    """Replicas of the Deployment."""


class CrdKindStatus(Model):
    """The Deployment and Service of the current choice."""

    deployment: str | None = None
    """The Deployment's name."""
    service: str | None = None
    """The NodePort Service's name."""
    node_port: int | None = None
    """The node port the Service got."""
    ready_replicas: int | None = None
    """The Deployment's ready replicas."""
    message: str | None = None
    """What is wrong, when something is."""
    observed_generation: Int64 | None = None
    """The metadata.generation this status was computed from."""
    conditions: Conditions | None = None
    """Ready, with the reason when it is not."""


class CrdKind(
    CustomResource,
    group="iksoon.test.com",
    version="v1",
    plural="crdplural",
    singular="crdsingular",
    short_names=("crdshort", "iksoontest"),
    printer_columns=(
        PrinterColumn("DBorWAS", ".spec.choice", description="mysql or tomcat"),
        PrinterColumn("replicas", ".spec.replicas", type="integer", priority=1,
                      description="Number of replicas of the Deployment"),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ),
):
    """CrdKind runs mysql or tomcat behind a NodePort Service."""

    spec: CrdKindSpec | None = None
    status: CrdKindStatus | None = None


CRDKIND = CrdKind.KIND


PORTS = {"mysql": 3306, "tomcat": 8080}
DEFAULT_IMAGES = {"mysql": "mysql:8.4", "tomcat": "tomcat:10"}

RBAC_RULES: tuple[PolicyRule, ...] = (
    PolicyRule((CRDKIND.group,), (CRDKIND.plural,), ("get", "list", "watch")),
    PolicyRule((CRDKIND.group,), (f"{CRDKIND.plural}/status",), ("update",)),
    PolicyRule(
        ("apps",), ("deployments",),
        ("get", "list", "watch", "create", "update", "delete"),
    ),
    PolicyRule(("",), ("services",), ("get", "list", "watch", "create", "update", "delete")),
    *EVENTS_RULES,
)


class CrdKindReconciler:
    def __init__(
        self,
        *,
        client: Client,
        cache: Cache,
        clock: Clock,
        recorder: EventRecorder,
        images: dict[str, str] | None = None,
    ) -> None:
        self.client = client
        self.cache = cache
        self.clock = clock
        self.recorder = recorder
        self.images = {**DEFAULT_IMAGES, **(images or {})}

    async def reconcile(self, req: Request) -> Result:
        ck = self.cache.get(CRDKIND, req.name, req.namespace)
        if ck is None or ck["metadata"].get("deletionTimestamp"):
            return Result()
        spec = ck.get("spec") or {}
        generation = ck["metadata"].get("generation", 0)
        status: dict[str, Any] = dict(ck.get("status") or {})
        choice = spec.get("choice")
        if choice not in PORTS:
            message = f"spec.choice must be one of {sorted(PORTS)}, got {choice!r}"
            status.update(message=message, observedGeneration=generation)
            status["conditions"] = self._ready(status, False, "InvalidSpec", message, generation)
            if await write_status(self.client, CRDKIND, ck, status) is not None:
                self.recorder.event(ck, "Warning", "InvalidSpec", message)
            return Result()
        replicas = int(spec.get("replicas") or 1)
        name = f"{req.name}-{choice}"
        labels = {"app": name, "crdkind": req.name, "choice": choice}

        dep = await self._ensure_deployment(ck, name, labels, replicas, choice)
        svc = await self._ensure_service(ck, name, labels, choice)
        if dep is None or svc is None:
            return Result()  # reported: a foreign object holds the name
        removed = await delete_renamed(self.client, self.cache, (DEPLOYMENT, SERVICE), owner=ck,
                                       keep=name)
        if removed:
            self.recorder.event(ck, "Normal", "Replaced", f"Now running {choice} as {name}")

        ready_replicas = int((dep.get("status") or {}).get("readyReplicas") or 0)
        ports = (svc.get("spec") or {}).get("ports") or [{}]
        node_port = ports[0].get("nodePort")
        ready = ready_replicas >= replicas
        status = {
            "deployment": name,
            "service": name,
            "readyReplicas": ready_replicas,
            "observedGeneration": generation,
            "conditions": self._ready(
                status, ready, "Available" if ready else "Progressing",
                f"{ready_replicas}/{replicas} replicas of {name} ready", generation,
            ),
        }
        if node_port is not None:
            status["nodePort"] = int(node_port)
        if await write_status(self.client, CRDKIND, ck, status) is not None:
            log.info("crdkind synced", crdkind=req.key, deployment=name, ready=ready_replicas)
        return Result()

    def _ready(
        self, status: dict[str, Any], ok: bool, reason: str, message: str, generation: int
    ) -> list[dict[str, Any]]:
        cond = condition("Ready", ok, reason=reason, message=message, generation=generation,
                         now=format_time(self.clock.now()))
        return set_condition(status.get("conditions"), cond)

    async def _ensure_deployment(
        self, ck: RawObject, name: str, labels: dict[str, str], replicas: int, choice: str
    ) -> RawObject | None:
        container = {"name": choice, "image": self.images[choice],
                     "ports": [{"containerPort": PORTS[choice]}]}
        desired = owned_deployment(ck, name, labels=labels, replicas=replicas,
                                   container=container)
        dep = await self._get_or_create(ck, DEPLOYMENT, desired)
        if dep is not None:
            scaled = await ensure_replicas(self.client, DEPLOYMENT, dep, replicas)
            if scaled is not None:
                dep = scaled
                self.recorder.event(ck, "Normal", "Scaled", f"Scaled {name} to {replicas}")
        return dep

    async def _ensure_service(
        self, ck: RawObject, name: str, labels: dict[str, str], choice: str
    ) -> RawObject | None:
        ns = ck["metadata"]["namespace"]
        port = PORTS[choice]
        desired: RawObject = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "labels": dict(labels),
                         "ownerReferences": [owner_reference(ck)]},
            "spec": {
                "type": "NodePort",
                "selector": dict(labels),
                "ports": [{"name": choice, "port": port, "targetPort": port,
                           "protocol": "TCP"}],
            },
        }
        svc = await self._get_or_create(ck, SERVICE, desired)
        if svc is None:
            return None
        spec = svc.get("spec") or {}
        ports = spec.get("ports") or []
        if (spec.get("type") != "NodePort" or spec.get("selector") != labels
                or [p.get("port") for p in ports] != [port]):
            body = deep_copy(svc)
            body["spec"]["type"] = "NodePort"
            body["spec"]["selector"] = dict(labels)
            node_port = ports[0].get("nodePort") if len(ports) == 1 else None
            new_port: dict[str, Any] = {"name": choice, "port": port, "targetPort": port,
                                        "protocol": "TCP"}
            if node_port:
                new_port["nodePort"] = node_port
            body["spec"]["ports"] = [new_port]
            svc = await self.client.update(SERVICE, body)
        return svc

    async def _get_or_create(self, ck: RawObject, kind: Kind, desired: RawObject
                             ) -> RawObject | None:
        """The controlled object of that name (created if missing), or None if foreign."""
        name = desired["metadata"]["name"]
        child = await ensure_child(self.client, self.cache, kind, desired, owner=ck)
        if child.created:
            self.recorder.event(ck, "Normal", "Created", f"Created {kind.kind} {name}")
            log.info("child created", crdkind=name, kind=kind.kind)
        if child.controlled:
            return child.obj
        message = f'{kind.kind} "{name}" already exists and is not managed by this CrdKind'
        generation = ck["metadata"].get("generation", 0)
        status = dict(ck.get("status") or {}, message=message, observedGeneration=generation)
        status["conditions"] = self._ready(status, False, "ErrResourceExists", message,
                                           generation)
        if await write_status(self.client, CRDKIND, ck, status) is not None:
            self.recorder.event(ck, "Warning", "ErrResourceExists", message)
        return None


def children_to_crdkind(obj: RawObject) -> Iterable[Request]:
    """Map a Deployment or Service to its controlling CrdKind, and to the CrdKind whose
    child name (`<name>-<choice>`) it has: a foreign object blocking that name going away
    must wake the CrdKind up."""
    meta = obj["metadata"]
    ns = meta.get("namespace") or ""
    out: set[Request] = set()
    ref = controller_of(obj)
    if ref is not None and ref.get("kind") == CRDKIND.kind:
        out.add(Request(ref["name"], ns))
    owner, _, choice = meta["name"].rpartition("-")
    if owner and choice in PORTS:
        out.add(Request(owner, ns))
    return out


def crdkind_controller(
    mgr: Manager, *, workers: int = DEFAULT_WORKERS, images: dict[str, str] | None = None
) -> Controller:
    """The `crdkind` controller: CrdKinds and the Deployments and Services they own."""
    r = CrdKindReconciler(client=mgr.client, cache=mgr.cache, clock=mgr.clock,
                          recorder=mgr.recorder("crdkind-controller"), images=images)
    return Controller(
        "crdkind", r,
        watches=[
            for_(CrdKind),
            watches(DEPLOYMENT, children_to_crdkind),
            watches(SERVICE, children_to_crdkind),
        ],
        workers=workers, rbac=RBAC_RULES,
    )
