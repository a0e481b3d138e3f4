"""The bundled scenario's invariants fail when they must: each is fed a doctored world.

A checker that cannot fail is a defect, so for every invariant of the bundled six operators'
scenario (asyncop/testing/chaos/bundled/invariants.py) and for the built-in machinery
(one replica per key, growth, error logs) there is a world that breaks it here (a duplicated
or foreign child, a second pod for an At, a key in two replicas at once, growing RSS, an
error logged without a cause), next to a world that satisfies it. The facts go through the
same Checker the soak uses.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
import structlog

from asyncop.api import Kind
from asyncop.api.kinds import DEPLOYMENT, EVENT, POD
from asyncop.controllers.kinds import AT, FOO, JINGHZHU
from asyncop.testing.chaos import Change, History, Snapshot
from asyncop.testing.chaos.bundled.invariants import invariants
from asyncop.testing.chaos.checks import Checker
from asyncop.testing.chaos.health import ErrorLog, Sample, growth_violations, percentile
from asyncop.testing.chaos.replicas import Overlaps

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
DUE = "2026-01-01T11:00:00Z"
LATER = "2026-01-01T13:00:00Z"
KINDS = {k.plural: k for k in (AT, FOO, JINGHZHU, POD, DEPLOYMENT, EVENT)}


def meta(name: str, uid: str, *, owner: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "namespace": "default", "uid": uid,
                           "generation": 1, **extra}
    if owner is not None:
        out["ownerReferences"] = [{"uid": owner, "controller": True, "kind": "X", "name": "x"}]
    return out


def foo(name: str = "foo", uid: str = "foo-uid", replicas: int = 2) -> dict[str, Any]:
    return {"metadata": meta(name, uid),
            "spec": {"deploymentName": f"{name}-web", "replicas": replicas},
            "status": {"availableReplicas": replicas, "observedGeneration": 1}}


def deployment(name: str, owner: str, replicas: int = 2, uid: str = "") -> dict[str, Any]:
    return {"metadata": meta(name, uid or f"{name}-uid", owner=owner),
            "spec": {"replicas": replicas}}


def at(name: str, uid: str, schedule: str, **status: Any) -> dict[str, Any]:
    return {"metadata": meta(name, uid), "spec": {"schedule": schedule, "command": "true"},
            "status": status}


def pod(name: str, owner: str, uid: str = "") -> dict[str, Any]:
    return {"metadata": meta(name, uid or f"{name}-uid", owner=owner),
            "status": {"phase": "Succeeded"}}


def done(name: str, uid: str) -> dict[str, Any]:
    return at(name, uid, DUE, phase="DONE", result="Succeeded", observedGeneration=1)


def world(**objects: list[dict[str, Any]]) -> Snapshot:
    return Snapshot({(KINDS[p].group, p): objs for p, objs in objects.items()}, NOW)


def checked(snap: Snapshot, events: Sequence[tuple[str, Kind, dict[str, Any]]] = (),
            ) -> tuple[dict[str, str], list[str]]:
    """(problems by object, violations) of the bundled invariants over these facts."""
    checker = Checker(invariants(), elapsed=lambda: 0.0, monotonic=lambda: 0.0)
    history = History()
    for type_, kind, obj in events:
        change = Change(type_, kind, obj, NOW)
        history.record(change)
        checker.observe(change, history)
    problems = checker.tick(snap, changed={}, last_fault=0.0)
    checker.at_end(snap, history)
    return ({str(ref): p for (_, ref), p in problems.items()},
            [str(v) for v in checker.violations])


def test_a_converged_world_has_no_problem_and_no_violation() -> None:
    snap = world(foos=[foo()], deployments=[deployment("foo-web", "foo-uid")],
                 ats=[done("a", "a-uid")], pods=[pod("a-pod", "a-uid")])
    events = [("ADDED", FOO, foo()), ("ADDED", AT, done("a", "a-uid")),
              ("ADDED", POD, pod("a-pod", "a-uid"))]
    assert checked(snap, events) == ({}, [])


def test_a_duplicated_child_is_reported() -> None:
    twin = deployment("foo-web", "foo-uid", uid="twin-uid")
    snap = world(foos=[foo()], deployments=[deployment("foo-web", "foo-uid"), twin])
    assert checked(snap)[1] == ["foo-children: Foo default/foo: 2 children deployments/foo-web"]


def test_a_foreign_and_an_orphaned_child_are_reported() -> None:
    snap = world(foos=[foo()], deployments=[deployment("foo-web", "foo-uid"),
                                            deployment("stranger", "foo-uid"),
                                            deployment("left", "gone-uid")])
    _, violations = checked(snap, [("ADDED", FOO, foo("old", "gone-uid"))])
    assert violations == [
        "foo-children: Foo default/foo: foreign child deployments/stranger",
        "foo-children: orphaned children of Foo default/old: ['left']"]


def test_an_at_run_twice_or_never_is_reported() -> None:
    first, again = pod("a-pod", "a-uid", uid="p1"), pod("a-pod", "a-uid", uid="p2")
    events = [("ADDED", AT, done("a", "a-uid")), ("ADDED", POD, first),
              ("DELETED", POD, first), ("ADDED", POD, again),
              ("ADDED", AT, at("b", "b-uid", DUE))]
    snap = world(ats=[done("a", "a-uid"), at("b", "b-uid", DUE)], pods=[again])
    problems, violations = checked(snap, events)
    assert violations == [
        "at-most-one-pod-per-at: At default/a: 2 pods created (a-pod the last), at most 1",
        "ats-run-exactly-once: at a: 2 pods created, want exactly 1",
        "ats-run-exactly-once: at b: 0 pods created, want exactly 1",
        "ats-run-exactly-once: at a (a-uid) DONE with 2 pods created"]
    assert problems == {"At default/b": "{}"}


def test_a_pod_before_its_schedule_is_reported() -> None:
    events = [("ADDED", AT, at("c", "c-uid", LATER)), ("ADDED", POD, pod("c-pod", "c-uid"))]
    assert "no-pod-before-its-schedule: c-pod created before 2026-01-01T13:00:00+00:00" in (
        checked(world(), events)[1])


def test_jinghzhu_workers_beyond_the_desired_are_reported() -> None:
    jh = {"metadata": meta("jh", "jh-uid"), "spec": {"desired": 1}}
    w1, w2 = (dict(pod(n, "jh-uid"), status={"phase": "Running"}) for n in ("w1", "w2"))
    events = [("ADDED", JINGHZHU, jh), ("ADDED", POD, w1), ("ADDED", POD, w2)]
    snap = world(jinghzhus=[jh], pods=[w1, w2])
    problems, violations = checked(snap, events)
    assert violations == [
        "jinghzhu-workers-bounded: jinghzhu jh: 2 workers created, scale-ups only ask for 1",
        "jinghzhu-workers-bounded: jinghzhu jh: 2 live workers at once, desired never above 1",
        "jinghzhu-children: jinghzhu jh: 2 workers, desired 1"]
    assert problems == {"Jinghzhu default/jh": "2 workers (running=True) != 1"}


def test_the_poison_at_needs_its_message_and_its_event() -> None:
    status = {"phase": "PENDING", "observedGeneration": 1,
              "message": "schedule 'x' is not a time like 2019-04-12T10:12:00Z"}
    poison = at("poison", "p-uid", "x", **status)
    event = {"metadata": meta("e", "e-uid"), "involvedObject": {"uid": "p-uid"},
             "reason": "InvalidSchedule"}
    assert checked(world(ats=[poison], events=[event])) == ({}, [])
    assert list(checked(world(ats=[poison]))[0]) == ["At default/poison"]


def test_drift_from_the_latest_spec_is_a_problem() -> None:
    snap = world(foos=[foo(replicas=3)], deployments=[deployment("foo-web", "foo-uid")])
    assert checked(snap)[0] == {"Foo default/foo": "deployment replicas 2"}


def test_a_key_in_two_live_replicas_at_once_is_reported() -> None:
    overlaps = Overlaps()
    overlaps.enter("at/default/a", "r1")
    overlaps.enter("at/default/b", "r2")
    overlaps.leave("at/default/b", "r2")
    assert overlaps.violations == []
    overlaps.enter("at/default/a", "r2")
    assert overlaps.violations == ["at/default/a reconciled by r2 while in ['r1']"]


def test_a_dead_replica_no_longer_counts() -> None:
    overlaps = Overlaps()
    overlaps.enter("foo/default/x", "r1")
    overlaps.dead.add("r1")  # cut off from the server: it can write nothing any more
    overlaps.enter("foo/default/x", "r2")
    assert overlaps.violations == []


def test_growth_fails_and_a_plateau_passes() -> None:
    plateau = [Sample(t, 100 + (t % 3), 400) for t in range(30)]
    assert growth_violations(plateau) == []
    leak = [Sample(t, 100 + 20 * t, 400 + 50 * t) for t in range(30)]
    assert growth_violations(leak) == ["RSS grew 480 -> 680 MB", "tasks grew 1100 -> 1600"]
    # a handover: for a few samples the leaving and the joining replica both have tasks
    handover = [Sample(t, 100, 540 + (220 if 22 <= t <= 24 else 0)) for t in range(30)]
    assert growth_violations(handover) == []
    slow_leak = [Sample(t, 100, 400 + (300 if t >= 20 else 0)) for t in range(30)]
    assert growth_violations(slow_leak) == ["tasks grew 400 -> 700"]


def test_an_error_logged_without_a_cause_is_kept() -> None:
    errors = ErrorLog()
    for method, event in [("error", {"event": "reconcile failed", "error": "boom"}),
                          ("error", {"event": "mystery", "key": "k"}),
                          ("warning", {"event": "slow"})]:
        with pytest.raises(structlog.DropEvent):
            errors(None, method, copy.deepcopy(event))
    assert errors.uncaused == ["mystery: ['event', 'key']"]
    assert errors.errors.total() == 2 and errors.warnings.total() == 1


def test_percentile() -> None:
    assert percentile(range(1, 101), 0.99) == 99
    assert percentile([], 0.5) == 0.0
