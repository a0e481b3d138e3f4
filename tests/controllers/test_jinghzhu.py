"""jinghzhu controller (ReplicaSet-like, with expectations), end to end."""

from __future__ import annotations

import contextlib
from typing import Any

from asyncop.api import Conflict, Kind, RawObject, Request
from asyncop.api.kinds import POD
from asyncop.controllers.jinghzhu import JinghzhuReconciler, jinghzhu_controller
from asyncop.controllers.kinds import JINGHZHU
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, owns
from asyncop.runtime.manager import Manager
from asyncop.testing import eventually
from tests.controllers.ctlenv import NS, Cluster

NAME = "jinghzhu-example"


def _jh(desired: int, name: str = NAME) -> RawObject:
    return {"apiVersion": JINGHZHU.api_version, "kind": JINGHZHU.kind,
            "metadata": {"name": name, "namespace": NS}, "spec": {"desired": desired}}


async def _live(cluster: Cluster) -> list[RawObject]:
    return [p for p in await cluster.items(POD)
            if not p["metadata"].get("deletionTimestamp")
            and p.get("status", {}).get("phase") not in ("Failed", "Succeeded")]


async def _count(cluster: Cluster, n: int) -> list[RawObject]:
    async def probe() -> tuple[list[RawObject]] | None:
        pods = await _live(cluster)
        return (pods,) if len(pods) == n else None

    found = await eventually(probe, timeout=10, message=f"{n} live pods")
    return found[0]


def _status(**expected: Any) -> Any:
    return lambda o: all((o.get("status") or {}).get(k) == v for k, v in expected.items())


async def test_keeps_desired_workers_and_reports_status(cluster: Cluster) -> None:
    async with cluster.manager(jinghzhu_controller):
        jh = await cluster.client.create(JINGHZHU, _jh(2))
        pods = await _count(cluster, 2)
        for pod in pods:
            assert pod["metadata"]["name"].startswith(f"{NAME}-worker-")
            assert pod["metadata"]["labels"] == {"crd": NAME}
            (ref,) = pod["metadata"]["ownerReferences"]
            assert ref["uid"] == jh["metadata"]["uid"] and ref["controller"]
            assert ref["blockOwnerDeletion"]
        names = sorted(p["metadata"]["name"] for p in pods)
        done = await cluster.wait(JINGHZHU, NAME, _status(state="Running", current=2))
        assert done["status"]["podList"] == names
        assert done["status"]["message"] == "Start to run replica set"
        assert done["status"]["observedGeneration"] == 1
        await cluster.idle("jinghzhu")
        assert len(await cluster.items(POD)) == 2


async def test_scale_out_then_in_deletes_newest_first(cluster: Cluster) -> None:
    async with cluster.manager(jinghzhu_controller):
        await cluster.client.create(JINGHZHU, _jh(1))
        (first,) = await _count(cluster, 1)
        await cluster.clock.advance(5)  # later pods get later creationTimestamps
        await cluster.client.patch(JINGHZHU, NAME, {"spec": {"desired": 4}}, namespace=NS)
        await _count(cluster, 4)
        await cluster.wait(JINGHZHU, NAME, _status(current=4, state="Running"))
        await cluster.client.patch(JINGHZHU, NAME, {"spec": {"desired": 1}}, namespace=NS)
        (kept,) = await _count(cluster, 1)
        assert kept["metadata"]["uid"] == first["metadata"]["uid"]
        jh = await cluster.wait(JINGHZHU, NAME, _status(current=1, state="Running"))
        assert jh["status"]["podList"] == [first["metadata"]["name"]]
        assert await eventually(lambda: cluster.events(NAME, "ScalingIn"), timeout=10)
        await cluster.client.patch(JINGHZHU, NAME, {"spec": {"desired": 0}}, namespace=NS)
        await _count(cluster, 0)
        await cluster.wait(JINGHZHU, NAME, _status(current=0, podList=[]))


async def test_deleted_and_failed_workers_are_replaced(cluster: Cluster) -> None:
    async with cluster.manager(jinghzhu_controller):
        await cluster.client.create(JINGHZHU, _jh(2))
        victim, other = await _count(cluster, 2)
        await cluster.wait(JINGHZHU, NAME, _status(current=2, state="Running"))
        await cluster.idle("jinghzhu")
        await cluster.client.delete(POD, victim["metadata"]["name"], namespace=NS,
                                    grace_period_seconds=0)
        pods = await eventually(lambda: _replaced(cluster, victim), timeout=10)
        assert other["metadata"]["name"] in {p["metadata"]["name"] for p in pods}

        # A worker fails (as a kubelet would report it): it is deleted and replaced.
        await cluster.wait(JINGHZHU, NAME, _status(current=2, state="Running"))
        await cluster.idle("jinghzhu")
        failing = pods[0]
        await eventually(lambda: _mark_failed(cluster, failing["metadata"]["name"]), timeout=10)
        await eventually(lambda: _replaced(cluster, failing), timeout=10)
        await eventually(lambda: _absent(cluster, POD, failing["metadata"]["name"]), timeout=10)
        await cluster.idle("jinghzhu")
        assert len(await cluster.items(POD)) == 2


async def _replaced(cluster: Cluster, gone: RawObject) -> list[RawObject] | None:
    pods = await _live(cluster)
    names = {p["metadata"]["name"] for p in pods}
    return pods if len(pods) == 2 and gone["metadata"]["name"] not in names else None


async def _mark_failed(cluster: Cluster, name: str) -> bool:
    """Set the pod's phase to Failed on its latest version (the pod simulator writes too)."""
    pod = await cluster.get(POD, name)
    assert pod is not None
    pod["status"] = dict(pod.get("status") or {}, phase="Failed")
    try:
        await cluster.client.update_status(POD, pod)
    except Conflict:
        return False
    return True


async def _absent(cluster: Cluster, kind: Kind, name: str) -> bool:
    return await cluster.get(kind, name) is None


async def test_deleting_the_jinghzhu_collects_its_workers(cluster: Cluster) -> None:
    async with cluster.manager(jinghzhu_controller):
        await cluster.client.create(JINGHZHU, _jh(3))
        await _count(cluster, 3)
        await cluster.client.delete(JINGHZHU, NAME, namespace=NS)
        await eventually(lambda: _none_left(cluster), timeout=10)


async def _none_left(cluster: Cluster) -> bool:
    return await cluster.items(POD) == []


class FrozenPods:
    """A Cache view whose pods are frozen at a snapshot: a maximally slow pod informer."""

    def __init__(self, cache: Cache, pods: list[RawObject]) -> None:
        self.cache = cache
        self.pods = pods

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None:
        if kind == POD:
            return next((p for p in self.pods if p["metadata"]["name"] == name), None)
        return self.cache.get(kind, name, namespace)

    def by_index(self, kind: Kind, index: str, value: str) -> list[RawObject]:
        if kind == POD:
            return [p for p in self.pods
                    if any(r["uid"] == value for r in p["metadata"]["ownerReferences"])]
        return self.cache.by_index(kind, index, value)


async def test_a_slow_cache_never_creates_or_deletes_twice(cluster: Cluster) -> None:
    cache = Cache(cluster.client, clock=cluster.clock)
    cache.informer(JINGHZHU)
    await cache.start()
    try:
        await cluster.client.create(JINGHZHU, _jh(3))
        await eventually(lambda: cache.get(JINGHZHU, NAME, NS), timeout=10)
        view = FrozenPods(cache, [])
        r = JinghzhuReconciler(client=cluster.client, cache=view,  # type: ignore[arg-type]
                               clock=cluster.clock, recorder=_NullRecorder())  # type: ignore[arg-type]
        req = Request(NAME, NS)
        for _ in range(5):  # the cache never shows the new pods
            await _reconcile_once(r, req)
        pods = await cluster.items(POD)
        assert len(pods) == 3

        view.pods = pods  # the cache catches up: nothing more to do
        await _reconcile_once(r, req)
        assert len(await cluster.items(POD)) == 3

        await cluster.client.patch(JINGHZHU, NAME, {"spec": {"desired": 1}}, namespace=NS)
        await eventually(lambda: _desired(cache, 1), timeout=10)
        for _ in range(5):  # the cache keeps showing the deleted pods as alive
            await _reconcile_once(r, req)
        assert len(await cluster.items(POD)) == 1

        # A pod created and deleted before the cache ever saw it does not block forever.
        view.pods = await cluster.items(POD)
        await _reconcile_once(r, req)
        await cluster.client.patch(JINGHZHU, NAME, {"spec": {"desired": 2}}, namespace=NS)
        await eventually(lambda: _desired(cache, 2), timeout=10)
        await _reconcile_once(r, req)
        (new,) = [p for p in await cluster.items(POD) if p not in view.pods]
        await cluster.client.delete(POD, new["metadata"]["name"], namespace=NS)
        await _reconcile_once(r, req)  # live GET: gone, so the create is settled; replace it
        assert len(await cluster.items(POD)) == 2
        assert len(r.expectations) == 1
    finally:
        await cache.stop()


async def _reconcile_once(r: JinghzhuReconciler, req: Request) -> None:
    """One reconcile as the Controller runs it: a stale status write (Conflict, the cache
    view lags our own writes here on purpose) ends it and is retried by the next call."""
    with contextlib.suppress(Conflict):
        await r.reconcile(req)


def _desired(cache: Cache, n: int) -> bool:
    jh = cache.get(JINGHZHU, NAME, NS)
    return jh is not None and jh["spec"]["desired"] == n


class _NullRecorder:
    def event(self, obj: RawObject, type: str, reason: str, message: str) -> None:
        pass


async def test_rejected_worker_pods_fail_the_jinghzhu_without_retries(
    cluster: Cluster,
) -> None:
    name = "j" * 70  # a valid name, but too long for the workers' crd=<name> label
    async with cluster.manager(jinghzhu_controller):
        await cluster.client.create(JINGHZHU, _jh(2, name=name))
        jh = await cluster.wait(JINGHZHU, name, _status(state="Failed"))
        assert jh["status"]["message"].startswith("worker pod rejected")
        assert jh["status"]["current"] == 0
        events = await eventually(lambda: cluster.events(name, "FailedCreate"), timeout=10)
        assert events[0]["type"] == "Warning"
        await cluster.clock.advance(60)
        await cluster.idle("jinghzhu")
        queue = cluster.controllers["jinghzhu"].queue
        assert queue is not None and queue.num_requeues(f"{NS}/{name}") == 0
        assert not queue.delayed
        assert await cluster.items(POD) == []


async def test_large_changes_go_in_bursts(cluster: Cluster) -> None:
    def small_bursts(mgr: Manager) -> Controller:
        r = JinghzhuReconciler(client=mgr.client, cache=mgr.cache, clock=mgr.clock,
                               recorder=mgr.recorder("jinghzhu"), burst=3)
        return Controller("jinghzhu", r, watches=[for_(JINGHZHU), owns(POD)])

    async with cluster.manager(small_bursts):
        await cluster.client.create(JINGHZHU, _jh(8))
        await _count(cluster, 8)
        await cluster.wait(JINGHZHU, NAME, _status(current=8, state="Running"))
        await cluster.client.patch(JINGHZHU, NAME, {"spec": {"desired": 1}}, namespace=NS)
        await _count(cluster, 1)
        await cluster.wait(JINGHZHU, NAME, _status(current=1, state="Running"))
        await cluster.idle("jinghzhu")
        assert len(await cluster.items(POD)) == 1
