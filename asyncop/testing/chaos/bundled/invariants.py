"""The bundled six operators' invariants, declared with the public API (a worked example).

Converges (every virtual second, and all within the bound after the last fault): a Foo has
its Deployment with its replicas and status; a CrdKind exactly its current choice's
Deployment and Service (the old choice's gone) and status; a Jinghzhu that many Running
workers and status; a Network Ready as its annotation expects; an At PENDING if not due,
DONE/Succeeded if due, and the poison At PENDING with a message and an `InvalidSchedule`
Event.

Tracked (every committed event): at most one pod ever per At (by uid), and none before its
schedule; Jinghzhu workers never more live than the largest `desired` seen, never more
created than the scale-ups asked for. At the end: every due At and every At seen DONE ran
exactly once; every owner has exactly its expected children (no duplicate, no foreign or
orphaned child).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from asyncop.api.kinds import DEPLOYMENT, POD, SERVICE
from asyncop.controllers.at import parse_schedule
from asyncop.controllers.kinds import AT, CRDKIND, FOO, JINGHZHU, NETWORK
from asyncop.testing.chaos.bundled.workload import EXPECT_READY
from asyncop.testing.chaos.facts import Change, History, KindLike, Obj, Snapshot
from asyncop.testing.chaos.invariants import AtEnd, Converges, Invariant, Tracked, Tracker
from asyncop.testing.chaos.rules import created_at_most, expected_children

CHOICE_PORT = {"mysql": 3306, "tomcat": 8080}
CHILD_KINDS = (POD, DEPLOYMENT, SERVICE)


def schedule_of(at: Obj) -> datetime | None:
    """The At's schedule, or None if it cannot be parsed (a poison At)."""
    try:
        return parse_schedule(str((at.get("spec") or {}).get("schedule", "")))
    except ValueError:
        return None


def _observed(o: Obj) -> bool:
    return bool((o.get("status") or {}).get("observedGeneration")
                == o["metadata"].get("generation"))


def _named(objs: list[Obj]) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in objs}


def _running_workers(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if (p.get("status") or {}).get("phase") not in ("Failed", "Succeeded")]


# -- Converges -------------------------------------------------------------------------------------
def foo_converged(foo: Obj, snap: Snapshot) -> str | None:
    spec = foo["spec"]
    dep = _named(snap.children(foo, DEPLOYMENT)).get(spec["deploymentName"])
    if dep is None:
        return "no deployment"
    if dep["spec"]["replicas"] != spec["replicas"]:
        return f"deployment replicas {dep['spec']['replicas']}"
    if (foo.get("status") or {}).get("availableReplicas") != spec["replicas"] or (
            not _observed(foo)):
        return f"status {foo.get('status')}"
    return None


def crdkind_converged(ck: Obj, snap: Snapshot) -> str | None:
    spec, name = ck["spec"], ck["metadata"]["name"]
    child = f"{name}-{spec['choice']}"
    deps, svcs = _named(snap.children(ck, DEPLOYMENT)), _named(snap.children(ck, SERVICE))
    status = ck.get("status") or {}
    dep, svc = deps.get(child), svcs.get(child)
    if dep is None or dep["spec"]["replicas"] != spec["replicas"]:
        return f"deployment {child}"
    if svc is None or svc["spec"]["ports"][0]["port"] != CHOICE_PORT[spec["choice"]]:
        return f"service {child}"
    if set(deps) != {child} or set(svcs) != {child}:
        return f"old children {sorted(set(deps) | set(svcs))}"
    if (status.get("deployment") != child or status.get("readyReplicas") != spec["replicas"]
            or not _observed(ck)):
        return f"status {status}"
    return None


def jinghzhu_converged(jh: Obj, snap: Snapshot) -> str | None:
    want = jh["spec"]["desired"]
    workers = _running_workers(snap.children(jh, POD))
    status = jh.get("status") or {}
    running = all((p.get("status") or {}).get("phase") == "Running" for p in workers)
    if len(workers) != want or not running:
        return f"{len(workers)} workers (running={running}) != {want}"
    if (status.get("current") != want or status.get("state") != "Running"
            or sorted(status.get("podList") or []) != sorted(
                p["metadata"]["name"] for p in workers) or not _observed(jh)):
        return f"status {status}"
    return None


def network_converged(net: Obj, _: Snapshot) -> str | None:
    want = (net["metadata"].get("annotations") or {}).get(EXPECT_READY)
    conds = [c for c in (net.get("status") or {}).get("conditions") or []
             if c.get("type") == "Ready"]
    if not conds or conds[0].get("status") != want or not _observed(net):
        return f"{net.get('status')} (want Ready={want})"
    return None


def at_converged(at: Obj, snap: Snapshot) -> str | None:
    status = at.get("status") or {}
    when = schedule_of(at)
    if when is None:  # the poison: a message and a Warning Event, nothing else
        if (status.get("phase") != "PENDING" or "schedule" not in str(status.get("message"))
                or not _observed(at) or not snap.events_about(at, reason="InvalidSchedule")):
            return f"poison: {status}"
    elif when > snap.now:
        if status.get("phase") != "PENDING" or not _observed(at):
            return f"{status} (not due yet)"
    elif status.get("phase") != "DONE" or status.get("result") != "Succeeded":
        return f"{status}"
    return None


# -- Tracked ---------------------------------------------------------------------------------------
class AtNeverEarly(Tracker):
    """No pod of an At is created before the At's schedule."""

    def __init__(self) -> None:
        self.schedules: dict[str, datetime | None] = {}

    def observe(self, change: Change, history: History) -> Iterable[str]:
        if change.is_(AT):
            self.schedules[change.uid] = schedule_of(change.obj)
        elif change.is_(POD) and change.type == "ADDED" and change.owner_uid is not None:
            when = self.schedules.get(change.owner_uid)
            if when is not None and change.now < when:
                return [f"{change.ref.name} created before {when.isoformat()}"]
        return ()


class JinghzhuWorkers(Tracker):
    """Never more live workers than the largest desired seen, nor more created than the
    scale-ups asked for."""

    def __init__(self) -> None:
        self.desired: dict[str, list[int]] = defaultdict(list)
        self.created: dict[str, int] = defaultdict(int)
        self.live: dict[str, set[str]] = defaultdict(set)
        self.max_live: dict[str, int] = defaultdict(int)

    def observe(self, change: Change, history: History) -> Iterable[str]:
        if change.is_(JINGHZHU):
            want = (change.obj.get("spec") or {}).get("desired", 0)
            hist = self.desired[change.uid]
            if isinstance(want, int) and (not hist or hist[-1] != want):
                hist.append(want)
            return ()
        owner = change.owner_uid
        ref = history.ref(owner) if change.is_(POD) and owner is not None else None
        if owner is None or ref is None or not ref.is_(JINGHZHU):
            return ()
        if change.type == "ADDED":
            self.created[owner] += 1
        phase = (change.obj.get("status") or {}).get("phase")
        if change.type == "DELETED" or change.obj["metadata"].get("deletionTimestamp") or (
                phase in ("Failed", "Succeeded")):
            self.live[owner].discard(change.ref.name)
        else:
            self.live[owner].add(change.ref.name)
            self.max_live[owner] = max(self.max_live[owner], len(self.live[owner]))
        return worker_problems(ref.name, created=self.created[owner],
                               max_live=self.max_live[owner], desired=self.desired[owner])


def worker_problems(name: str, *, created: int, max_live: int, desired: list[int]) -> list[str]:
    """A jinghzhu's workers against the `desired` counts it asked for, in order: never more
    created than its scale-ups ask for, never more alive at once than it ever desired."""
    history = desired or [0]
    ups = sum(max(0, b - a) for a, b in zip([0, *history], history, strict=False))
    out = []
    if created > ups:
        out.append(f"jinghzhu {name}: {created} workers created, scale-ups only ask for {ups}")
    if max_live > max(history):
        out.append(f"jinghzhu {name}: {max_live} live workers at once, "
                   f"desired never above {max(history)}")
    return out


class AtsRunExactlyOnce(Tracker):
    """At the end: every due At, and every At ever seen DONE, has exactly one pod created."""

    def __init__(self) -> None:
        self.done: set[str] = set()

    def observe(self, change: Change, history: History) -> Iterable[str]:
        if change.is_(AT) and (change.obj.get("status") or {}).get("phase") == "DONE":
            self.done.add(change.uid)
        return ()

    def at_end(self, snap: Snapshot, history: History) -> Iterable[str]:
        for at in snap.live(AT):
            when, uid = schedule_of(at), at["metadata"]["uid"]
            pods = history.children_created(uid, POD)
            if when is not None and when <= snap.now and pods != 1:
                yield f"at {at['metadata']['name']}: {pods} pods created, want exactly 1"
        for uid in sorted(self.done):
            pods = history.children_created(uid, POD)
            if pods != 1:
                ref = history.ref(uid)
                yield f"at {ref.name if ref else uid} ({uid}) DONE with {pods} pods created"


# -- AtEnd -----------------------------------------------------------------------------------------
def jinghzhu_children(snap: Snapshot, history: History) -> Iterable[str]:
    """Workers only (pods), never more running than desired; none left by a Jinghzhu gone."""
    live = {j["metadata"]["uid"]: j for j in snap.live(JINGHZHU)}
    for uid, by_kind in snap.owned().items():
        ref = history.ref(uid)
        if ref is None or not ref.is_(JINGHZHU):
            continue
        pods = by_kind.get(("", "pods"), [])
        others = sorted(f"{p}" for (_, p), objs in by_kind.items() if p != "pods" and objs)
        jh = live.get(uid)
        if jh is None:
            if pods or others:
                yield f"orphaned children of {ref}: {sorted(p['metadata']['name'] for p in pods)}"
            continue
        desired = jh["spec"]["desired"]
        if len(_running_workers(pods)) > desired:
            yield f"jinghzhu {ref.name}: {len(pods)} workers, desired {desired}"
        if others:
            yield f"jinghzhu {ref.name}: foreign children {others}"


def _foo_children(foo: Obj, _: Snapshot) -> Mapping[KindLike, Iterable[str]]:
    return {DEPLOYMENT: [foo["spec"]["deploymentName"]]}


def _crdkind_children(ck: Obj, _: Snapshot) -> Mapping[KindLike, Iterable[str]]:
    child = f"{ck['metadata']['name']}-{ck['spec']['choice']}"
    return {DEPLOYMENT: [child], SERVICE: [child]}


def _at_children(at: Obj, snap: Snapshot) -> Mapping[KindLike, Iterable[str]]:
    when = schedule_of(at)
    return {POD: [f"{at['metadata']['name']}-pod"]} if when and when <= snap.now else {}


def invariants() -> list[Invariant]:
    return [
        Converges("foo-converges", FOO, foo_converged),
        Converges("crdkind-converges", CRDKIND, crdkind_converged),
        Converges("jinghzhu-converges", JINGHZHU, jinghzhu_converged),
        Converges("network-converges", NETWORK, network_converged),
        Converges("at-converges", AT, at_converged),
        created_at_most(AT, POD, 1, after_deletion=True, name="at-most-one-pod-per-at"),
        Tracked("no-pod-before-its-schedule", AtNeverEarly),
        Tracked("jinghzhu-workers-bounded", JinghzhuWorkers),
        Tracked("ats-run-exactly-once", AtsRunExactlyOnce),
        expected_children(FOO, _foo_children, kinds=CHILD_KINDS, name="foo-children"),
        expected_children(CRDKIND, _crdkind_children, kinds=CHILD_KINDS,
                          name="crdkind-children"),
        expected_children(AT, _at_children, kinds=CHILD_KINDS, name="at-children"),
        AtEnd("jinghzhu-children", jinghzhu_children),
    ]


def summary(snap: Snapshot, history: History) -> dict[str, Any]:
    """How many Ats ran, ran twice, or were due and never ran."""
    pods = {uid: n for (uid, (group, plural)), n in history.children.items()
            if (group, plural) == ("", "pods") and (r := history.ref(uid)) and r.is_(AT)}
    due = [a["metadata"]["uid"] for a in snap.live(AT)
           if (w := schedule_of(a)) is not None and w <= snap.now]
    return {"ats_run": sum(1 for n in pods.values() if n >= 1),
            "ats_run_twice": sum(1 for n in pods.values() if n > 1),
            "ats_due_not_run": sum(1 for uid in due if pods.get(uid, 0) == 0)}
