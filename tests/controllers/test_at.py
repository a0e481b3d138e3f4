"""at controller, end to end on the embedded API server with a FakeClock."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from asyncop.api import Kind, RawObject, Request
from asyncop.api.kinds import EVENT, POD
from asyncop.clock import format_time
from asyncop.controllers.at import FINALIZER, POD_MATTERS, AtReconciler, at_controller
from asyncop.controllers.kinds import AT
from asyncop.runtime.cache import Cache
from asyncop.runtime.leader import LeaderElectionConfig
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result
from asyncop.testing import FakeClock, eventually
from tests.controllers.ctlenv import NS, Cluster, start_cluster


def _at(name: str, schedule: str, command: str = "echo YAY") -> RawObject:
    return {
        "apiVersion": AT.api_version, "kind": AT.kind,
        "metadata": {"name": name, "namespace": NS},
        "spec": {"schedule": schedule, "command": command},
    }


def _phase(phase: str) -> Any:
    return lambda obj: (obj.get("status") or {}).get("phase") == phase


async def test_example_at_runs_its_pod_once_and_is_done(cluster: Cluster) -> None:
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("example-at", "2019-04-12T10:12:00Z"))
        at = await cluster.wait(AT, "example-at", _phase("RUNNING"))
        assert at["status"]["startedAt"] == format_time(cluster.clock.now())
        assert at["status"]["podName"] == "example-at-pod"
        pod = await cluster.wait(POD, "example-at-pod", lambda p: True)
        assert pod["metadata"]["finalizers"] == [FINALIZER]
        assert pod["metadata"]["labels"] == {"app": "example-at"}
        (ref,) = pod["metadata"]["ownerReferences"]
        assert ref["uid"] == at["metadata"]["uid"] and ref["controller"]
        assert ref["blockOwnerDeletion"]
        (container,) = pod["spec"]["containers"]
        assert container["command"] == ["/bin/sh", "-c", "echo YAY"]
        assert container["image"] == "busybox"
        assert pod["spec"]["restartPolicy"] == "OnFailure"

        await cluster.clock.advance(1)  # the pod simulator completes the pod
        done = await cluster.wait(AT, "example-at", _phase("DONE"))
        assert done["status"]["result"] == "Succeeded"
        assert done["status"]["finishedAt"]
        assert done["status"]["observedGeneration"] == done["metadata"]["generation"]
        pods = await cluster.items(POD)
        assert [p["metadata"]["name"] for p in pods] == ["example-at-pod"]
        await cluster.wait(POD, "example-at-pod", lambda p: not p["metadata"].get("finalizers"))
        assert await cluster.events("example-at", "Done")


async def test_at_fires_exactly_at_its_schedule_not_before(cluster: Cluster) -> None:
    clock = cluster.clock
    when = clock.now() + timedelta(hours=1)
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("later", format_time(when)))
        at = await cluster.wait(AT, "later", _phase("PENDING"))
        assert "waiting until" in at["status"]["message"]
        await clock.advance(3599)
        await cluster.idle("at")
        at = await cluster.wait(AT, "later", _phase("PENDING"))
        assert await cluster.get(POD, "later-pod") is None
        await clock.advance(1)
        at = await cluster.wait(AT, "later", _phase("RUNNING"))
        assert at["status"]["startedAt"] == format_time(when)
        await cluster.wait(POD, "later-pod", lambda p: True)


async def test_schedule_change_while_pending_reschedules(cluster: Cluster) -> None:
    clock = cluster.clock
    async with cluster.manager(at_controller):
        created = await cluster.client.create(
            AT, _at("moving", format_time(clock.now() + timedelta(hours=2))))
        await cluster.wait(AT, "moving", _phase("PENDING"))
        # Earlier: fires at the new time.
        body = dict(created, spec={"schedule": format_time(clock.now() + timedelta(minutes=10)),
                                   "command": "echo YAY"})
        body["metadata"] = dict(created["metadata"])
        body["metadata"].pop("resourceVersion")
        await cluster.client.patch(AT, "moving", {"spec": body["spec"]}, namespace=NS)
        await cluster.wait(AT, "moving", lambda o: o["status"].get("observedGeneration") == 2)
        await clock.advance(600)
        await cluster.wait(AT, "moving", _phase("RUNNING"))

        # Later: the old timer fires but finds the At not due.
        await cluster.client.create(
            AT, _at("postponed", format_time(clock.now() + timedelta(minutes=5))))
        await cluster.wait(AT, "postponed", _phase("PENDING"))
        await cluster.client.patch(
            AT, "postponed",
            {"spec": {"schedule": format_time(clock.now() + timedelta(minutes=30))}},
            namespace=NS,
        )
        await cluster.wait(AT, "postponed", lambda o: o["status"].get("observedGeneration") == 2)
        await clock.advance(300)
        await cluster.idle("at")
        await cluster.wait(AT, "postponed", _phase("PENDING"))
        assert await cluster.get(POD, "postponed-pod") is None
        await clock.advance(1500)
        await cluster.wait(AT, "postponed", _phase("RUNNING"))


async def test_invalid_schedule_is_reported_once_and_not_retried(cluster: Cluster) -> None:
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("bad", "next tuesday"))
        at = await cluster.wait(AT, "bad", lambda o: "schedule" in o.get("status", {}).get(
            "message", ""))
        assert at["status"]["phase"] == "PENDING"
        assert "spec.schedule" in at["status"]["message"]
        await cluster.wait(AT, "bad", lambda o: True)
        events = await _eventually_events(cluster, "bad", "InvalidSchedule")
        assert events[0]["type"] == "Warning"
        await cluster.clock.advance(600)
        await cluster.idle("at")
        queue = cluster.controllers["at"].queue
        assert queue is not None and not queue.delayed
        assert queue.num_requeues(Request("bad", "default")) == 0
        assert (await cluster.events("bad", "InvalidSchedule"))[0].get("count", 1) == 1
        assert await cluster.get(POD, "bad-pod") is None

        await cluster.client.patch(AT, "bad", {"spec": {"schedule": "2019-04-12T10:12:00Z"}},
                                   namespace=NS)
        await cluster.wait(AT, "bad", _phase("RUNNING"))


async def _eventually_events(cluster: Cluster, name: str, reason: str) -> list[RawObject]:
    events: list[RawObject] = await eventually(lambda: cluster.events(name, reason), timeout=10)
    return events


async def test_restart_while_running_never_creates_the_pod_again(cluster: Cluster) -> None:
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("once", "2019-04-12T10:12:00Z"))
        pod = await cluster.wait(POD, "once-pod", lambda p: True)
    # The operator is gone; a new one starts while the At is RUNNING and its pod runs.
    async with cluster.manager(at_controller):
        await cluster.idle("at")
        pods = await cluster.items(POD)
        assert [p["metadata"]["uid"] for p in pods] == [pod["metadata"]["uid"]]
        await cluster.clock.advance(1)
        done = await cluster.wait(AT, "once", _phase("DONE"))
        assert done["status"]["result"] == "Succeeded"
        assert len(await cluster.items(POD)) == 1


async def test_crash_between_running_and_pod_create_creates_one_pod(cluster: Cluster) -> None:
    at = await cluster.client.create(AT, _at("crashed", "2019-04-12T10:12:00Z"))
    at["status"] = {"phase": "RUNNING", "startedAt": "2019-04-12T10:12:00Z"}
    await cluster.client.update_status(AT, at)  # what a crashed operator left behind
    async with cluster.manager(at_controller):
        await cluster.wait(POD, "crashed-pod", lambda p: True)
        await cluster.idle("at")
        assert len(await cluster.items(POD)) == 1
        await cluster.clock.advance(1)
        await cluster.wait(AT, "crashed", _phase("DONE"))


async def test_vanished_pod_is_never_recreated(clock: FakeClock) -> None:
    async with start_cluster(clock, pod_run_duration=3600) as cluster:
        await _vanish(cluster)


async def _vanish(cluster: Cluster) -> None:
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("vanish", "2019-04-12T10:12:00Z"))
        await cluster.wait(POD, "vanish-pod", lambda p: True)
    # Deleted while no operator runs: the finalizer keeps it as the record of the run.
    await cluster.client.delete(POD, "vanish-pod", namespace=NS, grace_period_seconds=0)
    await cluster.wait(POD, "vanish-pod", lambda p: p["metadata"].get("deletionTimestamp"))
    async with cluster.manager(at_controller):
        done = await cluster.wait(AT, "vanish", _phase("DONE"))
        assert done["status"]["result"] == "Failed"
        assert "not run again" in done["status"]["message"]
        await eventually(lambda: _absent(cluster, POD, "vanish-pod"), timeout=10)
        await cluster.idle("at")
        assert await cluster.items(POD) == []


async def test_two_operators_racing_create_one_pod(cluster: Cluster) -> None:
    async with cluster.manager(at_controller), cluster.manager(at_controller):
        for i in range(5):
            await cluster.client.create(AT, _at(f"race-{i}", "2019-04-12T10:12:00Z"))
        for i in range(5):
            await cluster.wait(POD, f"race-{i}-pod", lambda p: True)
        await cluster.clock.advance(1)
        for i in range(5):
            await cluster.wait(AT, f"race-{i}", _phase("DONE"))
        pods = await cluster.items(POD)
        assert sorted(p["metadata"]["name"] for p in pods) == [f"race-{i}-pod" for i in range(5)]
        starts = [e for e in await cluster.items(EVENT) if e.get("reason") == "PodCreated"]
        assert sum(e.get("count", 1) for e in starts) == 5


async def test_deleting_an_at_garbage_collects_its_pod(cluster: Cluster) -> None:
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("gone", "2019-04-12T10:12:00Z"))
        await cluster.wait(POD, "gone-pod", lambda p: True)
        await cluster.client.delete(AT, "gone", namespace=NS)
        await eventually(lambda: _absent(cluster, POD, "gone-pod"), timeout=10)


async def _absent(cluster: Cluster, kind: Kind, name: str) -> bool:
    return await cluster.get(kind, name) is None


async def test_a_pod_the_server_rejects_ends_the_at_as_failed(cluster: Cluster) -> None:
    name = "a" * 70  # a valid At name, but too long for the pod's app=<name> label
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at(name, "2019-04-12T10:12:00Z"))
        done = await cluster.wait(AT, name, _phase("DONE"))
        assert done["status"]["result"] == "Failed"
        assert "rejected" in done["status"]["message"]
        events = await eventually(lambda: cluster.events(name, "FailedCreate"), timeout=10)
        assert events[0]["type"] == "Warning"
        await cluster.idle("at")
        assert await cluster.items(POD) == []


async def test_leader_change_hands_over_without_a_second_run(cluster: Cluster) -> None:
    def elected(identity: str) -> Manager:
        cfg = LeaderElectionConfig(name="asyncop-at", namespace=NS, identity=identity,
                                   release_on_cancel=False)  # as if the process died
        mgr = Manager(client=cluster.client, clock=cluster.clock, leader_election=cfg)
        mgr.add(at_controller(mgr))
        return mgr

    clock = cluster.clock
    first, second = elected("first"), elected("second")
    await first.start()
    await eventually(lambda: first.is_leader, timeout=10)
    await second.start()
    try:
        # Virtual time stands still while the leader works, so its lease stays valid.
        await cluster.client.create(AT, _at("handover", format_time(clock.now())))
        await cluster.wait(POD, "handover-pod", lambda p: True)
        assert not second.is_leader
        await first.stop()  # the leader dies with the At RUNNING and its pod running
        for _ in range(15):  # the lease expires; the standby takes over
            await clock.advance(2)
            try:
                await eventually(lambda: second.is_leader, timeout=0.2)
                break
            except AssertionError:
                continue
        assert second.is_leader
        await clock.advance(1)
        done = await cluster.wait(AT, "handover", _phase("DONE"))
        assert done["status"]["result"] == "Succeeded"
        pods = await cluster.items(POD)
        assert [p["metadata"]["name"] for p in pods] == ["handover-pod"]
        created = [e for e in await cluster.items(EVENT) if e.get("reason") == "PodCreated"]
        assert sum(e.get("count", 1) for e in created) == 1
    finally:
        await second.stop()
        await first.stop()


async def test_a_foreign_pod_with_the_name_is_not_taken_over(cluster: Cluster) -> None:
    foreign: RawObject = {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "mine-pod", "namespace": NS},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    created = await cluster.client.create(POD, foreign)
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("mine", "2019-04-12T10:12:00Z"))
        done = await cluster.wait(AT, "mine", _phase("DONE"))
        assert done["status"]["result"] == "Failed"
        assert "not owned" in done["status"]["message"]
        assert await eventually(lambda: cluster.events("mine", "ErrResourceExists"), timeout=10)
        pod = await cluster.get(POD, "mine-pod")
        assert pod is not None and pod["metadata"]["uid"] == created["metadata"]["uid"]
        assert not pod["metadata"].get("ownerReferences")


async def test_at_survives_api_errors_and_cut_watches_with_one_run(cluster: Cluster) -> None:
    faults = cluster.server.faults
    faults.fail(verb="create", path="/api/v1/namespaces/default/pods$", status=500, count=2)
    faults.fail(verb="update", path="/ats/flaky/status", status=503, count=1)
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("flaky", "2019-04-12T10:12:00Z"))
        # Client retries and the work queue's backoff run on the clock: drive it.
        await cluster.drive(lambda: cluster.get(POD, "flaky-pod"))
        assert faults.injected == 3
        faults.cut_watches()
        faults.expire_history()
        done = await cluster.drive(lambda: _done(cluster, "flaky"))
        assert done["status"]["result"] == "Succeeded"
        assert [p["metadata"]["name"] for p in await cluster.items(POD)] == ["flaky-pod"]
        created = await eventually(lambda: cluster.events("flaky", "PodCreated"), timeout=10)
        assert sum(e.get("count", 1) for e in created) == 1


async def _done(cluster: Cluster, name: str) -> RawObject | None:
    at = await cluster.get(AT, name)
    return at if at is not None and _phase("DONE")(at) else None


class _PodBlind:
    """A Cache view that never shows a pod: an informer that lags behind every create."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None:
        return None if kind == POD else self.cache.get(kind, name, namespace)


class _Events:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def event(self, obj: RawObject, type: str, reason: str, message: str) -> None:
        self.reasons.append(reason)


async def test_a_lagging_cache_costs_a_create_attempt_and_never_a_second_pod(
    clock: FakeClock,
) -> None:
    """No live GET on the common path: the create's AlreadyExists is what tells a lagging
    cache apart, and only then is the pod read and judged (ours running, ours finished, or
    someone else's)."""
    async with start_cluster(clock, pod_run_duration=3600) as cluster:
        cache = Cache(cluster.client, clock=cluster.clock)
        cache.informer(AT)
        await cache.start()
        try:
            events = _Events()
            r = AtReconciler(client=cluster.client, cache=_PodBlind(cache),  # type: ignore[arg-type]
                             clock=cluster.clock, recorder=events)  # type: ignore[arg-type]
            await cluster.client.create(AT, _at("lag", "2019-04-12T10:12:00Z"))
            await eventually(lambda: cache.get(AT, "lag", NS), timeout=10)
            await r.reconcile(Request("lag", NS))  # RUNNING, then the pod
            (pod,) = await cluster.items(POD)
            assert events.reasons == ["PodCreated"]
            running = await eventually(lambda: _cached_phase(cache, "lag", "RUNNING"), timeout=10)
            assert running
            for _ in range(3):  # the cache never shows the pod: AlreadyExists, ours, running
                assert await r.reconcile(Request("lag", NS)) == Result()
            assert [p["metadata"]["uid"] for p in await cluster.items(POD)] == \
                [pod["metadata"]["uid"]]
            assert events.reasons == ["PodCreated"]
            # finished while the cache still lags: judged from the live read, DONE once
            pod["status"] = {"phase": "Succeeded"}
            await cluster.client.update_status(POD, pod)
            await r.reconcile(Request("lag", NS))
            done = await cluster.get(AT, "lag")
            assert done is not None and done["status"]["phase"] == "DONE"
            assert done["status"]["result"] == "Succeeded"
            left = await cluster.get(POD, "lag-pod")
            assert left is None or FINALIZER not in (left["metadata"].get("finalizers") or [])

            # someone else's pod under the name, never cached: judged foreign, not run
            foreign: RawObject = {"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": "other-pod", "namespace": NS},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
            await cluster.client.create(POD, foreign)
            await cluster.client.create(AT, _at("other", "2019-04-12T10:12:00Z"))
            await eventually(lambda: cache.get(AT, "other", NS), timeout=10)
            await r.reconcile(Request("other", NS))
            other = await cluster.get(AT, "other")
            assert other is not None and other["status"]["phase"] == "DONE"
            assert "not owned" in other["status"]["message"]
            assert events.reasons[-2:] == ["ErrResourceExists", "Done"]
            kept = await cluster.get(POD, "other-pod")
            assert kept is not None and not kept["metadata"].get("ownerReferences")
        finally:
            await cache.stop()


def _cached_phase(cache: Cache, name: str, phase: str) -> bool:
    at = cache.get(AT, name, NS)
    return at is not None and (at.get("status") or {}).get("phase") == phase


def _requests(cluster: Cluster, resource: str) -> Counter[str]:
    """The server's count of requests to `resource` by verb (kube's apiserver_request_total)."""
    out: Counter[str] = Counter()
    for (verb, _, _, plural, sub, _, _), n in cluster.server.metrics.requests.items():
        if plural == resource:
            out[f"{verb} {plural}{'/' + sub if sub else ''}"] += n
    return out


async def test_an_at_costs_six_writes_no_pod_read_and_nothing_on_a_restart(
    cluster: Cluster,
) -> None:
    """The request budget of the issue: RUNNING and DONE status writes, the pod, its
    finalizer removal, two Events; no GET of the pod (the cache and AlreadyExists suffice);
    and a restarted operator that finds the At DONE writes nothing."""
    async with cluster.manager(at_controller):
        await cluster.client.create(AT, _at("budget", "2019-04-12T10:12:00Z"))
        await eventually(lambda: _stored_pod(cluster) is not None, timeout=10)  # no HTTP
        await cluster.clock.advance(1)
        await cluster.wait(AT, "budget", _phase("DONE"))
        await eventually(lambda: len(_released(cluster)) == 1, timeout=10)
        await eventually(lambda: _requests(cluster, "events")["POST events"] == 2, timeout=10)
        await cluster.idle("at")
    pods, ats = _requests(cluster, "pods"), _requests(cluster, "ats")
    assert pods["POST pods"] == 1 and pods["PUT pods"] == 1
    assert pods["GET pods"] == 0
    assert ats["PUT ats/status"] == 2
    before = {r: _requests(cluster, r) for r in ("pods", "ats", "events")}
    async with cluster.manager(at_controller):  # a restart: everything is reconciled again
        await cluster.idle("at")
    for resource, counts in before.items():
        writes = {v: n - counts[v] for v, n in _requests(cluster, resource).items()
                  if not v.startswith(("GET", "LIST", "WATCH")) and n != counts[v]}
        assert writes == {}, resource


def _stored_pod(cluster: Cluster) -> RawObject | None:
    store = cluster.server.store  # in-process: the test's own reads are not requests
    pod: RawObject | None = store.get(store.resolve("", "v1", "pods"), NS, "budget-pod")
    return pod


def _released(cluster: Cluster) -> list[str]:
    pod = _stored_pod(cluster)
    return [] if pod is None or FINALIZER in (pod["metadata"].get("finalizers") or []) \
        else ["released"]


def test_pod_updates_that_matter_to_the_at() -> None:
    pod: RawObject = {"metadata": {"name": "p", "finalizers": [FINALIZER],
                                   "ownerReferences": [{"uid": "u", "controller": True}]},
                      "status": {"phase": "Running"}}

    def changed(**kw: Any) -> RawObject:
        meta = {**pod["metadata"], **kw.pop("metadata", {})}
        return {**pod, "metadata": meta, **kw}

    update = POD_MATTERS.update
    assert not update(pod, changed(metadata={"finalizers": []}))  # the finalizer removal
    assert not update(pod, changed(metadata={"resourceVersion": "9"}))
    assert update(pod, changed(status={"phase": "Succeeded"}))
    assert update(pod, changed(metadata={"deletionTimestamp": "2019-04-12T10:12:00Z"}))
    assert update(pod, changed(metadata={"ownerReferences": []}))
    assert POD_MATTERS.create(pod) and POD_MATTERS.delete(pod)
