"""foo: the kubernetes/sample-controller contract — a Foo owns an nginx Deployment.

A Foo asks for a Deployment named `spec.deploymentName` with `spec.replicas` replicas
(labels `app=nginx`, `controller=<foo>`), owned by the Foo (controller reference, so the
garbage collector deletes it with the Foo). Invariants:

- A Deployment of that name that this Foo does not control is never touched: the Foo gets
  a Warning Event `ErrResourceExists` and a status message, and is reconciled again when
  that Deployment changes or goes away (Deployments are mapped to the Foos naming them).
- Drift in replicas is fixed; `status.availableReplicas` mirrors the Deployment's.
- A Deployment this Foo controls under another name (deploymentName was changed) is deleted.
- A missing `spec.deploymentName` is reported (status message + Warning Event, once per
  generation) and not retried until the spec changes.
- Success: a Normal Event `Synced` "Foo synced successfully" when something changed.

The child steps (build, ensure and scale the owned Deployment, delete renamed ones) are
`controllers.common.children`, shared with crdkind.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

import structlog
from pydantic import Field

from asyncop.api import RawObject, Request, controller_of
from asyncop.api.kinds import DEPLOYMENT
from asyncop.client import Client
from asyncop.controllers.common import (
    EVENTS_RULES,
    PolicyRule,
    delete_renamed,
    ensure_child,
    ensure_replicas,
    owned_deployment,
    write_status,
)
from asyncop.crd import CustomResource, Int64, Model, PrinterColumn
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import DEFAULT_WORKERS, Controller
from asyncop.runtime.handlers import Mapper, for_, watches
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result
from asyncop.runtime.recorder import EventRecorder

log = structlog.get_logger("asyncop.controllers.foo")


class FooSpec(Model):
    """The Deployment a Foo asks for."""

    deployment_name: str | None = None
    """Name of the Deployment to manage. A missing name is reported in status.message and a
    Warning Event."""
    replicas: Annotated[int, Field(ge=1, le=10)] = 1
    """How many nginx pods the Deployment runs."""


class FooStatus(Model):
    """What the Foo's Deployment reports."""

    available_replicas: int | None = None
    """The Deployment's available replicas."""
    message: str | None = None
    """Why the Foo is not synced, when it is not."""
    observed_generation: Int64 | None = None
    """The metadata.generation this status was computed from."""


class Foo(
    CustomResource,
    group="samplecontroller.k8s.io",
    version="v1alpha1",
    printer_columns=(
        PrinterColumn("Deployment", ".spec.deploymentName"),
        PrinterColumn("Replicas", ".spec.replicas", type="integer"),
        PrinterColumn("Available", ".status.availableReplicas", type="integer"),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ),
):
    """Foo asks for an nginx Deployment named spec.deploymentName."""

    spec: FooSpec | None = None
    status: FooStatus | None = None


FOO = Foo.KIND


SUCCESS_SYNCED = "Synced"
ERR_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_SYNCED = "Foo synced successfully"

RBAC_RULES: tuple[PolicyRule, ...] = (
    PolicyRule((FOO.group,), (FOO.plural,), ("get", "list", "watch")),
    PolicyRule((FOO.group,), (f"{FOO.plural}/status",), ("update",)),
    PolicyRule(
        ("apps",), ("deployments",),
        ("get", "list", "watch", "create", "update", "delete"),
    ),
    *EVENTS_RULES,
)


class FooReconciler:
    def __init__(
        self, *, client: Client, cache: Cache, recorder: EventRecorder, image: str = "nginx:latest"
    ) -> None:
        self.client = client
        self.cache = cache
        self.recorder = recorder
        self.image = image

    async def reconcile(self, req: Request) -> Result:
        foo = self.cache.get(FOO, req.name, req.namespace)
        if foo is None or foo["metadata"].get("deletionTimestamp"):
            return Result()
        spec = foo.get("spec") or {}
        generation = foo["metadata"].get("generation", 0)
        old_status: dict[str, Any] = foo.get("status") or {}
        name = spec.get("deploymentName")
        if not name or not isinstance(name, str):
            message = "spec.deploymentName must be set to the name of the Deployment to manage"
            new = {"availableReplicas": 0, "message": message, "observedGeneration": generation}
            if await write_status(self.client, FOO, foo, new) is not None:
                self.recorder.event(foo, "Warning", "InvalidSpec", message)
            return Result()
        replicas = int(spec.get("replicas") or 1)
        changed = await delete_renamed(self.client, self.cache, (DEPLOYMENT,), owner=foo,
                                       keep=name)
        child = await ensure_child(self.client, self.cache, DEPLOYMENT,
                                   self._deployment(foo, name, replicas), owner=foo)
        dep = child.obj
        if child.created:
            log.info("deployment created", foo=req.key, deployment=name)
            changed = True
        if not child.controlled:
            message = f'Resource "{name}" already exists and is not managed by Foo'
            new = dict(old_status, message=message, observedGeneration=generation)
            if await write_status(self.client, FOO, foo, new) is not None:
                self.recorder.event(foo, "Warning", ERR_RESOURCE_EXISTS, message)
            log.info("deployment not ours", foo=req.key, deployment=name)
            return Result()  # the Deployment mapper enqueues us when it changes or goes
        scaled = await ensure_replicas(self.client, DEPLOYMENT, dep, replicas)
        if scaled is not None:
            dep = scaled
            log.info("deployment scaled", foo=req.key, deployment=name, replicas=replicas)
            changed = True
        available = int((dep.get("status") or {}).get("availableReplicas") or 0)
        new = {"availableReplicas": available, "observedGeneration": generation}
        if await write_status(self.client, FOO, foo, new) is not None:
            changed = True
        if changed:
            self.recorder.event(foo, "Normal", SUCCESS_SYNCED, MESSAGE_SYNCED)
        return Result()

    def _deployment(self, foo: RawObject, name: str, replicas: int) -> RawObject:
        labels = {"app": "nginx", "controller": foo["metadata"]["name"]}
        return owned_deployment(foo, name, labels=labels, replicas=replicas,
                                container={"name": "nginx", "image": self.image})


#: Index of Foos by the Deployment they name: `<namespace>/<spec.deploymentName>`.
BY_DEPLOYMENT = "foo_deployment_name"


def _index_by_deployment(foo: RawObject) -> list[str]:
    name = (foo.get("spec") or {}).get("deploymentName")
    ns = foo.get("metadata", {}).get("namespace") or ""
    return [f"{ns}/{name}"] if isinstance(name, str) and name else []


def deployment_to_foos(cache: Cache) -> Mapper:
    """Map a Deployment to its controlling Foo and to every Foo that names it (indexed)."""
    store = cache.informer(FOO).store
    if BY_DEPLOYMENT not in store.index_names():
        store.add_indexer(BY_DEPLOYMENT, _index_by_deployment)

    def mapper(dep: RawObject) -> Iterable[Request]:
        meta = dep["metadata"]
        ns = meta.get("namespace") or ""
        out = {Request(f["metadata"]["name"], ns)
               for f in cache.by_index(FOO, BY_DEPLOYMENT, f"{ns}/{meta['name']}")}
        ref = controller_of(dep)
        if ref is not None and ref.get("kind") == FOO.kind:
            out.add(Request(ref["name"], ns))
        return out

    return mapper


def foo_controller(
    mgr: Manager, *, workers: int = DEFAULT_WORKERS, image: str = "nginx:latest"
) -> Controller:
    """The `foo` controller: Foo objects and the Deployments they name."""
    r = FooReconciler(
        client=mgr.client, cache=mgr.cache, recorder=mgr.recorder("foo-controller"), image=image
    )
    return Controller(
        "foo", r, watches=[for_(Foo), watches(DEPLOYMENT, deployment_to_foos(mgr.cache))],
        workers=workers, rbac=RBAC_RULES,
    )
