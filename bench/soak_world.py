"""The soak's facts and invariants: what the server committed, and what must hold of it.

Concept: the soak (`bench/soak.py`, `bench/soak_chaos.py`) never trusts an operator's word.
`Ledger` follows the embedded API server's own in-process event stream (it survives watch
cuts, 410s and restarts with state; after a restart without state the soak subscribes it to
the new store) and records, per owner *uid*, every child ever created. `Snapshot` is the
server's store read in-process (no HTTP, so checks are unaffected by injected faults).
`Overlaps` wraps every replica's reconcilers and records a key reconciled by two live
replicas at the same moment.

The checkers are pure functions of those facts, so a unit test can feed them a doctored
world and see them fail:

- `problems(snapshot)`: per object, how its state differs from what its latest spec implies
  (empty = converged). A poison At (unparsable schedule) converges to PENDING with a message
  and an `InvalidSchedule` Event.
- `ledger_violations(ledger)`: at most one pod ever per At uid, and none before its schedule;
  Jinghzhu workers never above the largest desired value nor created beyond the scale-ups.
- `child_violations(snapshot, ledger)`: at the end, every due At uid ran exactly once, and
  every owner has exactly its expected children (no duplicate, no foreign or orphaned child).
- `growth_violations(samples)`: RSS and task count of the last third of the run stay within
  a bound of the middle third's.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asyncop.controllers.at import parse_schedule

NS = "default"
EXPECT_READY = "soak.asyncop.io/expect-ready"
CHOICE_PORT = {"mysql": 3306, "tomcat": 8080}
CUSTOM = ("ats", "foos", "crdplural", "jinghzhus", "networks")
CHILDREN = ("pods", "deployments", "services")

Obj = dict[str, Any]


def schedule_of(at: Obj) -> datetime | None:
    """The At's schedule, or None if it cannot be parsed (a poison At)."""
    try:
        return parse_schedule(str((at.get("spec") or {}).get("schedule", "")))
    except ValueError:
        return None


def controller_uid(obj: Obj) -> str | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None


@dataclass
class Ledger:
    """What the server committed, from its event stream, keyed by uid (survives a wipe)."""

    now: Any = None  # () -> datetime, the world's clock
    kinds: dict[str, tuple[str, str]] = field(default_factory=dict)  # uid -> (plural, name)
    schedules: dict[str, datetime | None] = field(default_factory=dict)  # At uid -> schedule
    at_pods: Counter[str] = field(default_factory=Counter)  # At uid -> pods created
    early: list[str] = field(default_factory=list)  # pods created before their schedule
    done: set[str] = field(default_factory=set)  # At uids seen DONE
    desired: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    worker_creates: Counter[str] = field(default_factory=Counter)  # Jinghzhu uid
    live_workers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    max_live: Counter[str] = field(default_factory=Counter)
    created: Counter[str] = field(default_factory=Counter)  # plural -> creations
    events: int = 0

    def record(self, type_: str, group: str, plural: str, obj: Obj) -> None:
        self.events += 1
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid", ""))
        if type_ == "ADDED":
            self.created[plural] += 1
        if plural in CUSTOM and group != "":
            self.kinds[uid] = (plural, str(meta.get("name", "")))
            if plural == "ats":
                self.schedules[uid] = schedule_of(obj)
                if (obj.get("status") or {}).get("phase") == "DONE":
                    self.done.add(uid)
            if plural == "jinghzhus":
                want = int((obj.get("spec") or {}).get("desired", 0))
                hist = self.desired[uid]
                if not hist or hist[-1] != want:
                    hist.append(want)
            return
        if group != "" or plural != "pods":
            return
        owner = controller_uid(obj)
        if owner is None:
            return
        kind = self.kinds.get(owner, ("", ""))[0]
        if kind == "ats" and type_ == "ADDED":
            self.at_pods[owner] += 1
            when = self.schedules.get(owner)
            if when is not None and self.now is not None and self.now() < when:
                self.early.append(f"{meta.get('name')} created before {when.isoformat()}")
        if kind != "jinghzhus":
            return
        name = str(meta.get("name", ""))
        if type_ == "ADDED":
            self.worker_creates[owner] += 1
        phase = (obj.get("status") or {}).get("phase")
        if type_ == "DELETED" or meta.get("deletionTimestamp") or phase in (
                "Failed", "Succeeded"):
            self.live_workers[owner].discard(name)
        else:
            self.live_workers[owner].add(name)
            self.max_live[owner] = max(self.max_live[owner], len(self.live_workers[owner]))


def ledger_violations(ledger: Ledger) -> list[str]:
    """What must hold at every moment (checked continuously)."""
    out = [f"at {ledger.kinds.get(uid, ('', uid))[1]} ({uid}): {n} pods created"
           for uid, n in ledger.at_pods.items() if n > 1]
    out += ledger.early
    for uid, history in ledger.desired.items():
        name = ledger.kinds.get(uid, ("", uid))[1]
        ups = sum(max(0, b - a) for a, b in zip([0, *history], history, strict=False))
        if ledger.worker_creates[uid] > ups:
            out.append(f"jinghzhu {name}: {ledger.worker_creates[uid]} workers created, "
                       f"scale-ups only ask for {ups}")
        if ledger.max_live[uid] > max(history):
            out.append(f"jinghzhu {name}: {ledger.max_live[uid]} live workers at once, "
                       f"desired never above {max(history)}")
    return out


@dataclass
class Snapshot:
    """The objects of the soak's namespace by plural (`events` included), and the time."""

    objects: dict[str, list[Obj]]
    now: datetime

    def of(self, plural: str) -> list[Obj]:
        return self.objects.get(plural, [])

    def live(self, plural: str) -> list[Obj]:
        return [o for o in self.of(plural) if not o["metadata"].get("deletionTimestamp")]


def _observed(o: Obj) -> bool:
    return (o.get("status") or {}).get("observedGeneration") == o["metadata"].get("generation")


def _children(snap: Snapshot) -> dict[str, dict[str, list[Obj]]]:
    """owner uid -> child plural -> live children controlled by it."""
    out: dict[str, dict[str, list[Obj]]] = defaultdict(lambda: defaultdict(list))
    for plural in CHILDREN:
        for child in snap.live(plural):
            owner = controller_uid(child)
            if owner is not None:
                out[owner][plural].append(child)
    return out


def _running_workers(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if (p.get("status") or {}).get("phase") not in ("Failed", "Succeeded")]


def problems(snap: Snapshot) -> dict[str, str]:
    """`plural/name` -> how it differs from what its latest spec implies (empty: converged)."""
    kids = _children(snap)
    out: dict[str, str] = {}
    warned = {((e.get("involvedObject") or e.get("regarding") or {}).get("uid"), e.get("reason"))
              for e in snap.of("events")}
    for foo in snap.live("foos"):
        name, spec, uid = foo["metadata"]["name"], foo["spec"], foo["metadata"]["uid"]
        deps = {d["metadata"]["name"]: d for d in kids[uid]["deployments"]}
        dep = deps.get(spec["deploymentName"])
        if dep is None:
            out[f"foos/{name}"] = "no deployment"
        elif dep["spec"]["replicas"] != spec["replicas"]:
            out[f"foos/{name}"] = f"deployment replicas {dep['spec']['replicas']}"
        elif (foo.get("status") or {}).get("availableReplicas") != spec["replicas"] or (
                not _observed(foo)):
            out[f"foos/{name}"] = f"status {foo.get('status')}"
    for ck in snap.live("crdplural"):
        name, spec, uid = ck["metadata"]["name"], ck["spec"], ck["metadata"]["uid"]
        child = f"{name}-{spec['choice']}"
        deps = {d["metadata"]["name"]: d for d in kids[uid]["deployments"]}
        svcs = {s["metadata"]["name"]: s for s in kids[uid]["services"]}
        status = ck.get("status") or {}
        dep, svc = deps.get(child), svcs.get(child)
        if dep is None or dep["spec"]["replicas"] != spec["replicas"]:
            out[f"crdplural/{name}"] = f"deployment {child}"
        elif svc is None or svc["spec"]["ports"][0]["port"] != CHOICE_PORT[spec["choice"]]:
            out[f"crdplural/{name}"] = f"service {child}"
        elif set(deps) != {child} or set(svcs) != {child}:
            out[f"crdplural/{name}"] = f"old children {sorted(set(deps) | set(svcs))}"
        elif (status.get("deployment") != child or status.get("readyReplicas")
              != spec["replicas"] or not _observed(ck)):
            out[f"crdplural/{name}"] = f"status {status}"
    for jh in snap.live("jinghzhus"):
        name, want, uid = jh["metadata"]["name"], jh["spec"]["desired"], jh["metadata"]["uid"]
        workers = _running_workers(kids[uid]["pods"])
        status = jh.get("status") or {}
        running = all((p.get("status") or {}).get("phase") == "Running" for p in workers)
        if len(workers) != want or not running:
            out[f"jinghzhus/{name}"] = f"{len(workers)} workers (running={running}) != {want}"
        elif (status.get("current") != want or status.get("state") != "Running"
              or sorted(status.get("podList") or []) != sorted(
                  p["metadata"]["name"] for p in workers) or not _observed(jh)):
            out[f"jinghzhus/{name}"] = f"status {status}"
    for net in snap.live("networks"):
        name = net["metadata"]["name"]
        want = (net["metadata"].get("annotations") or {}).get(EXPECT_READY)
        conds = [c for c in (net.get("status") or {}).get("conditions") or []
                 if c.get("type") == "Ready"]
        if not conds or conds[0].get("status") != want or not _observed(net):
            out[f"networks/{name}"] = f"{net.get('status')} (want Ready={want})"
    for at in snap.live("ats"):
        name, status, uid = at["metadata"]["name"], at.get("status") or {}, at["metadata"]["uid"]
        when = schedule_of(at)
        if when is None:  # the poison: a message and a Warning Event, nothing else
            if (status.get("phase") != "PENDING" or "schedule" not in str(status.get("message"))
                    or not _observed(at) or (uid, "InvalidSchedule") not in warned):
                out[f"ats/{name}"] = f"poison: {status}"
        elif when > snap.now:
            if status.get("phase") != "PENDING" or not _observed(at):
                out[f"ats/{name}"] = f"{status} (not due yet)"
        elif status.get("phase") != "DONE" or status.get("result") != "Succeeded":
            out[f"ats/{name}"] = f"{status}"
    return out


def child_violations(snap: Snapshot, ledger: Ledger) -> list[str]:
    """At the end (converged): exactly-once Ats, and each owner's children exactly as
    expected — a second child, a child of an owner that is gone, or one owned by the wrong
    kind is a violation."""
    out: list[str] = []
    owners = {o["metadata"]["uid"]: (plural, o) for plural in CUSTOM for o in snap.live(plural)}
    expected: dict[str, set[tuple[str, str]]] = {}
    for uid, (plural, o) in owners.items():
        name, spec = o["metadata"]["name"], o.get("spec") or {}
        if plural == "foos":
            expected[uid] = {("deployments", spec["deploymentName"])}
        elif plural == "crdplural":
            child = f"{name}-{spec['choice']}"
            expected[uid] = {("deployments", child), ("services", child)}
        elif plural == "ats":
            when = schedule_of(o)
            expected[uid] = {("pods", f"{name}-pod")} if when and when <= snap.now else set()
            if when is not None and when <= snap.now and ledger.at_pods[uid] != 1:
                out.append(f"at {name}: {ledger.at_pods[uid]} pods created, want exactly 1")
        else:
            expected[uid] = set()
    for uid in ledger.done:
        if ledger.at_pods[uid] != 1:
            name = ledger.kinds.get(uid, ("", uid))[1]
            out.append(f"at {name} ({uid}) DONE with {ledger.at_pods[uid]} pods created")
    for uid, by_plural in _children(snap).items():
        if uid not in owners:
            if ledger.kinds.get(uid, ("", ""))[0] in CUSTOM:  # owned by one of ours, now gone
                names = [c["metadata"]["name"] for cs in by_plural.values() for c in cs]
                out.append(f"orphaned children of {ledger.kinds[uid][1]}: {sorted(names)}")
            continue  # a ReplicaSet's pods, say: not the operators' children
        plural, owner = owners[uid]
        oname = owner["metadata"]["name"]
        if plural == "jinghzhus":
            workers = by_plural.get("pods", [])
            if len(_running_workers(workers)) > owner["spec"]["desired"]:
                out.append(f"jinghzhu {oname}: {len(workers)} workers, "
                           f"desired {owner['spec']['desired']}")
            others = [p for p in by_plural if p != "pods" and by_plural[p]]
            if others:
                out.append(f"jinghzhu {oname}: foreign children {others}")
            continue
        have = Counter((p, c["metadata"]["name"]) for p, cs in by_plural.items() for c in cs)
        for (p, n), count in have.items():
            if (p, n) not in expected[uid]:
                out.append(f"{plural} {oname}: foreign child {p}/{n}")
            elif count > 1:
                out.append(f"{plural} {oname}: {count} children {p}/{n}")
    return out


@dataclass
class Overlaps:
    """Reconciles in flight per key and replica; a key in two live replicas at once is a
    violation. A killed replica (partitioned from the server: it can write nothing) is
    ignored from the moment of its death."""

    active: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    dead: set[str] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)
    reconciles: Counter[str] = field(default_factory=Counter)  # per replica

    def enter(self, key: str, replica: str) -> None:
        self.reconciles[replica] += 1
        others = [r for r, n in self.active[key].items()
                  if n and r != replica and r not in self.dead]
        if others and replica not in self.dead:
            self.violations.append(f"{key} reconciled by {replica} while in {others}")
        self.active[key][replica] += 1

    def leave(self, key: str, replica: str) -> None:
        self.active[key][replica] -= 1
        if not +self.active[key]:
            del self.active[key]


@dataclass(frozen=True)
class Sample:
    t: float  # seconds since the start, real time
    rss_mb: float
    tasks: int


def growth_violations(samples: list[Sample], *, rss_slack_mb: float = 48.0,
                      task_slack: int = 64) -> list[str]:
    """The last third within 1.25x (+ slack) of the middle third: growth that goes on with
    the run (a leak) fails; a plateau passes. RSS compares peaks (it rarely shrinks); tasks
    compare medians, because a replica handover briefly runs the leaving and the joining
    replica's tasks together — a peak that is not growth (it failed a short run)."""
    if len(samples) < 6:
        return []
    third = len(samples) // 3
    mid, last = samples[third:2 * third], samples[2 * third:]
    out = []
    rss_mid, rss_last = max(s.rss_mb for s in mid), max(s.rss_mb for s in last)
    if rss_last > rss_mid * 1.25 + rss_slack_mb:
        out.append(f"RSS grew {rss_mid:.0f} -> {rss_last:.0f} MB")
    t_mid = statistics.median_low(s.tasks for s in mid)
    t_last = statistics.median_low(s.tasks for s in last)
    if t_last > t_mid * 1.25 + task_slack:
        out.append(f"tasks grew {t_mid} -> {t_last}")
    return out


def percentile(values: Iterable[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
