"""jinghzhu: a ReplicaSet-like resource that keeps `spec.desired` worker pods alive.

Worker pods are created with generateName `<name>-worker-`, labels `crd=<name>`, and a
controller reference to the Jinghzhu. Each reconcile counts the live workers (controlled,
not terminating, not Failed/Succeeded), deletes dead ones, creates the missing ones, and
deletes extras newest first. Status: `current`, `podList`, `state`, `message`,
`observedGeneration`.

Invariants:
- Expectations (`common.expectations`): after creating or deleting a pod the controller does
  nothing more for that Jinghzhu until its cache shows the effect, so a slow cache never
  makes it create or delete twice. The pods' own events re-enqueue the Jinghzhu.
- At most `burst` pods are created or deleted per reconcile; the rest follow on requeue.
- state: `Running` when the live workers match `desired` and all are Running; `Pending`
  while scaling or while workers start; `Failed` when the API server rejects the worker pod
  (reported, not retried until the spec changes). `Succeeded` is kept from the Go original's enum.
  message: "Scaling Out" / "Scaling In" for a reconcile that created / deleted workers,
  "Start to run replica set" otherwise; "Created but not processed yet" while a brand-new
  object waits for its first pods to appear in the cache.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import structlog
from pydantic import Field

from asyncop.api import (
    Forbidden,
    Invalid,
    NotFound,
    RawObject,
    Request,
    is_controlled_by,
    owner_reference,
)
from asyncop.api.kinds import POD
from asyncop.client import Client
from asyncop.clock import Clock
from asyncop.controllers.common import EVENTS_RULES, PolicyRule, write_status
from asyncop.controllers.common.expectations import Expectations
from asyncop.crd import CustomResource, Int64, Model, PrinterColumn
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import DEFAULT_WORKERS, Controller
from asyncop.runtime.handlers import for_, owns
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result
from asyncop.runtime.recorder import EventRecorder

log = structlog.get_logger("asyncop.controllers.jinghzhu")


class JinghzhuSpec(Model):
    """How many worker pods to keep alive, and what they run."""

    desired: Annotated[int, Field(ge=0)]
    """The number of worker pods to keep alive."""
    image: Annotated[str, Field(min_length=1)] | None = None
    """Worker image (default busybox running sleep forever)."""


class JinghzhuStatus(Model):
    """The worker pods as the controller last saw them."""

    current: int | None = None
    """Live worker pods."""
    pod_list: list[str] | None = None
    """Names of the live worker pods."""
    state: Literal["Pending", "Running", "Succeeded", "Failed"] | None = None
    """Pending, Running, Succeeded or Failed, as in the Go original."""
    message: str | None = None
    """What the controller is doing (Scaling Out, Scaling In, ...)."""
    observed_generation: Int64 | None = None
    """The metadata.generation this status was computed from."""


class Jinghzhu(
    CustomResource,
    group="jinghzhu.com",
    version="v1",
    short_names=("jh",),
    printer_columns=(
        PrinterColumn("Desired", ".spec.desired", type="integer"),
        PrinterColumn("Current", ".status.current", type="integer"),
        PrinterColumn("State", ".status.state"),
        PrinterColumn("Message", ".status.message", priority=1),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ),
):
    """Jinghzhu keeps spec.desired worker pods running."""

    spec: JinghzhuSpec | None = None
    status: JinghzhuStatus | None = None


JINGHZHU = Jinghzhu.KIND


BURST = 100
MSG_NEW = "Created but not processed yet"
MSG_STEADY = "Start to run replica set"
MSG_OUT = "Scaling Out"
MSG_IN = "Scaling In"

RBAC_RULES: tuple[PolicyRule, ...] = (
    PolicyRule((JINGHZHU.group,), (JINGHZHU.plural,), ("get", "list", "watch")),
    PolicyRule((JINGHZHU.group,), (f"{JINGHZHU.plural}/status",), ("update",)),
    PolicyRule(("",), ("pods",), ("get", "list", "watch", "create", "delete")),
    *EVENTS_RULES,
)


def _age_key(pod: RawObject) -> tuple[str, str]:
    """Creation time, then name: a total order (timestamps have one-second resolution)."""
    meta = pod["metadata"]
    return (meta.get("creationTimestamp") or "", meta["name"])


class JinghzhuReconciler:
    def __init__(
        self,
        *,
        client: Client,
        cache: Cache,
        clock: Clock,
        recorder: EventRecorder,
        image: str = "busybox",
        burst: int = BURST,
    ) -> None:
        self.client = client
        self.cache = cache
        self.recorder = recorder
        self.image = image
        self.burst = burst
        self.expectations = Expectations(clock=clock)

    async def reconcile(self, req: Request) -> Result:
        jh = self.cache.get(JINGHZHU, req.name, req.namespace)
        if jh is None:
            self.expectations.forget(req.key)
            return Result()
        if jh["metadata"].get("deletionTimestamp"):
            return Result()
        ns = req.namespace

        def lookup(name: str) -> RawObject | None:
            return self.cache.get(POD, name, ns)

        for name in self.expectations.unobserved_creates(req.key, lookup):
            try:  # created, then deleted before the cache saw it? Ask the server.
                await self.client.get(POD, name, namespace=ns)
            except NotFound:
                self.expectations.observe_gone(req.key, name)
        if not self.expectations.satisfied(req.key, lookup):
            log.debug("waiting for cache", jinghzhu=req.key)
            if not jh.get("status"):
                await self._status(jh, {"current": 0, "podList": [], "state": "Pending",
                                        "message": MSG_NEW})
            return Result()  # the awaited pod events enqueue us again

        desired = int((jh.get("spec") or {}).get("desired") or 0)
        owned = [p for p in self.cache.by_index(POD, "owner_uid", jh["metadata"]["uid"])
                 if is_controlled_by(p, jh) and not p["metadata"].get("deletionTimestamp")]
        live = [p for p in owned if _phase(p) not in ("Failed", "Succeeded")]
        dead = [p for p in owned if _phase(p) in ("Failed", "Succeeded")]
        names = {p["metadata"]["name"] for p in live}
        message = MSG_STEADY
        budget = self.burst

        for pod in dead[:budget]:  # replaced below by the create loop
            await self._delete(req, pod, "dead")
            budget -= 1
        if len(live) < desired:
            message = MSG_OUT
            for _ in range(min(desired - len(live), budget)):
                try:
                    created = await self.client.create(POD, self._pod(jh), namespace=ns)
                except (Invalid, Forbidden) as exc:
                    text = f"worker pod rejected: {exc.message}"
                    self.recorder.event(jh, "Warning", "FailedCreate", text)
                    await self._status(jh, self._summary(names, "Failed", text))
                    return Result()  # wait for the spec (or quota) to change
                name = created["metadata"]["name"]
                self.expectations.expect_create(req.key, name)
                names.add(name)
                budget -= 1
            self.recorder.event(jh, "Normal", "ScalingOut", f"{len(names)}/{desired} workers")
        elif len(live) > desired:
            message = MSG_IN
            extras = sorted(live, key=_age_key, reverse=True)[: len(live) - desired]
            for pod in extras[:budget]:
                await self._delete(req, pod, "extra")
                names.discard(pod["metadata"]["name"])
                budget -= 1
            self.recorder.event(jh, "Normal", "ScalingIn", f"{len(names)}/{desired} workers")

        running = all(_phase(p) == "Running" for p in live if p["metadata"]["name"] in names)
        settled = message == MSG_STEADY and len(names) == desired and running
        await self._status(jh, self._summary(names, "Running" if settled else "Pending",
                                             message))
        return Result(requeue_after=0.0) if len(names) != desired and budget <= 0 else Result()

    async def _delete(self, req: Request, pod: RawObject, why: str) -> None:
        name = pod["metadata"]["name"]
        try:
            await self.client.delete(POD, name, namespace=req.namespace)
        except NotFound:
            return
        self.expectations.expect_delete(req.key, name)
        log.info("worker deleted", jinghzhu=req.key, pod=name, why=why)

    def _summary(self, names: set[str], state: str, message: str) -> dict[str, Any]:
        return {"current": len(names), "podList": sorted(names), "state": state,
                "message": message}

    async def _status(self, jh: RawObject, status: dict[str, Any]) -> None:
        status["observedGeneration"] = jh["metadata"].get("generation", 0)
        await write_status(self.client, JINGHZHU, jh, status)

    def _pod(self, jh: RawObject) -> RawObject:
        name = jh["metadata"]["name"]
        image = (jh.get("spec") or {}).get("image")
        container: dict[str, Any] = {"name": "worker", "image": image or self.image}
        if not image:
            container["command"] = ["sleep", "2147483647"]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": f"{name}-worker-",
                "namespace": jh["metadata"]["namespace"],
                "labels": {"crd": name},
                "ownerReferences": [owner_reference(jh)],
            },
            "spec": {"restartPolicy": "Always", "containers": [container]},
        }


def _phase(pod: RawObject) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def jinghzhu_controller(
    mgr: Manager, *, workers: int = DEFAULT_WORKERS, image: str = "busybox"
) -> Controller:
    """The `jinghzhu` controller: Jinghzhus and their worker pods."""
    r = JinghzhuReconciler(client=mgr.client, cache=mgr.cache, clock=mgr.clock,
                           recorder=mgr.recorder("jinghzhu-controller"), image=image)
    return Controller("jinghzhu", r, watches=[for_(Jinghzhu), owns(POD)], workers=workers,
                      rbac=RBAC_RULES)
