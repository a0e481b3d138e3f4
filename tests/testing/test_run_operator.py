"""run_operator: a typed operator against the embedded API server, the way authors test theirs.

The operator here is the tutorial's shape: a Widget asks for a Deployment with spec.size
replicas; the status lists the pod names. `run_operator` installs the generated CRD, runs the
controller, and the test checks end state in the server (simulators on, so the Deployment
gets pods).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated

from pydantic import Field

from asyncop.api import Request, is_controlled_by, owner_reference
from asyncop.api.kinds import CONFIGMAP, DEPLOYMENT, POD
from asyncop.apiserver import ApiServer
from asyncop.crd import CustomResource, Int64, Model, ObjectMeta
from asyncop.operator import Operator
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, owns
from asyncop.runtime.manager import Manager
from asyncop.runtime.rbac import PolicyRule
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.testing import FakeClock, eventually, idle, run_operator


class WidgetSpec(Model):
    size: Annotated[int, Field(ge=0, le=5)] = 1


class WidgetStatus(Model):
    pod_names: list[str] = []
    observed_generation: Int64 | None = None


class Widget(CustomResource, group="widgets.example.com", version="v1"):
    spec: WidgetSpec
    status: WidgetStatus | None = None


class WidgetReconciler:
    def __init__(self, mgr: Manager) -> None:
        self.mgr = mgr

    async def reconcile(self, req: Request) -> Result:
        widget = Widget.from_cache(self.mgr.cache, req)
        if widget is None:
            return Result()
        dep = self.mgr.cache.get(DEPLOYMENT, req.name, req.namespace)
        if dep is None:
            labels = {"app": req.name}
            await self.mgr.client.create(DEPLOYMENT, {
                "metadata": {"name": req.name, "namespace": req.namespace, "labels": labels,
                             "ownerReferences": [owner_reference(widget.raw)]},
                "spec": {"replicas": widget.spec.size, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": {
                             "containers": [{"name": "c", "image": "busybox"}]}}}})
            return Result()
        if dep["spec"]["replicas"] != widget.spec.size:
            await self.mgr.client.patch(DEPLOYMENT, req.name,
                                        {"spec": {"replicas": widget.spec.size}},
                                        namespace=req.namespace)
        pods = sorted(p["metadata"]["name"] for p in
                      self.mgr.cache.list(POD, namespace=req.namespace, labels={"app": req.name})
                      if not p["metadata"].get("deletionTimestamp"))
        await widget.write_status(self.mgr.client, WidgetStatus(
            pod_names=pods, observed_generation=widget.metadata.generation))
        return Result()


def widgets(mgr: Manager) -> Controller:
    return Controller("widgets", WidgetReconciler(mgr),
                      watches=[for_(Widget), owns(DEPLOYMENT)],
                      rbac=[PolicyRule.for_(DEPLOYMENT, "create", "patch"),
                            PolicyRule.for_(Widget, "update", subresource="status")])


OPERATOR = Operator(name="widgets", controllers={"widgets": widgets})


async def test_a_typed_operator_converges_in_the_embedded_server(apiserver: ApiServer) -> None:
    async with run_operator(OPERATOR, apiserver) as mgr:
        mgr.cache.informer(POD)  # the reconciler reads pods from the cache
        new = Widget(metadata=ObjectMeta(name="w", namespace="default"),
                     spec=WidgetSpec(size=2))
        await mgr.client.create(Widget.KIND, new.to_raw())

        async def status_lists(n: int) -> bool:
            raw = await mgr.client.get(Widget.KIND, "w", namespace="default")
            w = Widget.parse(raw)
            return w.status is not None and len(w.status.pod_names) == n

        await eventually(lambda: status_lists(2), timeout=30)
        dep = await mgr.client.get(DEPLOYMENT, "w", namespace="default")
        widget = await mgr.client.get(Widget.KIND, "w", namespace="default")
        assert dep["spec"]["replicas"] == 2 and is_controlled_by(dep, widget)
        await mgr.client.patch(Widget.KIND, "w", {"spec": {"size": 3}}, namespace="default")
        await eventually(lambda: status_lists(3), timeout=30)
    assert mgr.running_controllers == []


def gated(release: asyncio.Event, seen: list[str]) -> Callable[[Manager], Controller]:
    """A controller whose reconciles wait for `release` (real time) and then, if `sleep`,
    sleep an hour on the Manager's clock."""
    def factory(mgr: Manager) -> Controller:
        async def reconcile(req: Request) -> Result:
            seen.append(req.name)
            await release.wait()
            if req.name == "sleep":
                await mgr.clock.sleep(3600)
            return Result()

        return Controller("gated", reconciler(reconcile), watches=[for_(CONFIGMAP)])
    return factory


async def test_idle_is_true_only_with_nothing_queued_or_in_a_reconcile(
        fake_clock: FakeClock) -> None:
    release, seen = asyncio.Event(), []
    operator = Operator(name="gated", controllers={"gated": gated(release, seen)})
    async with ApiServer(clock=fake_clock) as server, run_operator(
            operator, server, clock=fake_clock) as mgr:
        await eventually(lambda: idle(mgr), timeout=10, message="idle once synced")
        await mgr.client.create(CONFIGMAP, {"metadata": {"name": "a", "namespace": "default"}})
        await eventually(lambda: seen == ["a"], timeout=10, message="reconcile started")
        assert not idle(mgr)  # a reconcile in progress
        release.set()
        await eventually(lambda: idle(mgr), timeout=10, message="idle after the reconcile")


async def test_on_a_fake_clock_exit_does_not_wait_for_virtual_time(fake_clock: FakeClock) -> None:
    """A reconcile sleeping an hour on the FakeClock would hold the Manager's stop (its grace
    period is on that clock); run_operator moves the clock until the Manager has stopped."""
    release, seen = asyncio.Event(), []
    release.set()
    operator = Operator(name="gated", controllers={"gated": gated(release, seen)})
    async with ApiServer(clock=fake_clock) as server:
        async with asyncio.timeout(30):
            async with run_operator(operator, server, clock=fake_clock) as mgr:
                await mgr.client.create(CONFIGMAP,
                                        {"metadata": {"name": "sleep", "namespace": "default"}})
                await eventually(lambda: seen == ["sleep"], timeout=10, message="sleeping")
            assert mgr.running_controllers == []
    assert fake_clock.monotonic() < 3600  # stopped after the grace period, not the sleep
