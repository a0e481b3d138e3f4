"""One soak run: the world, the seeded workload, the fault schedule, and the verdict.

Concept: `soak(config)` starts the embedded API server (simulators on, a `PacedClock`),
installs the bundled CRDs, follows the server's event stream into a `Ledger`, starts
`config.replicas` operator replicas (leader election, or sharding over 16 shards; which one
is drawn from the seed unless set), then for `config.seconds` of virtual time applies the
workload (Ats due and future, created and deleted when DONE; Foos scaled and churned;
Jinghzhus resized; CrdKinds switching choice; Networks flipping valid/invalid; one poison
At) and the seeded fault schedule (`soak_chaos.schedule`). Then the faults stop, the
replicas are topped up, and the world must converge within `config.converge_bound`.

Invariants (soak_world): checked every virtual second while running (at most one pod per
At, none early, Jinghzhu bounds, no key in two live replicas at once) and at the end
(convergence, exactly one pod per due At, exact children, RSS/task growth, no task left
after the replicas stop, no error log without a cause). The result is one dict (the JSON
line); `ok` is False if any invariant failed, and `violations` says which.

All randomness comes from `random.Random` seeded with the seed (one stream per concern:
faults, workload, victims), so a failing seed is rerun with the same schedule and workload.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from soak_chaos import FAULT_KINDS, Chaos, PacedClock, Pacer, Replica, schedule
from soak_world import (
    CHILDREN,
    CUSTOM,
    EXPECT_READY,
    NS,
    Ledger,
    Obj,
    Overlaps,
    Sample,
    Snapshot,
    child_violations,
    growth_violations,
    ledger_violations,
    percentile,
    problems,
    schedule_of,
)

from asyncop.api import Kind
from asyncop.api.kinds import CRD, DEPLOYMENT, EVENT, POD, SERVICE
from asyncop.apiserver import ApiServer
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.clock import format_time
from asyncop.controllers.crds import load_crds
from asyncop.controllers.kinds import AT, CRDKIND, CUSTOM_KINDS, FOO, JINGHZHU, NETWORK

KIND_BY_PLURAL: dict[str, Kind] = {k.plural: k for k in (*CUSTOM_KINDS, POD, DEPLOYMENT,
                                                         SERVICE, EVENT)}
POISON = "poison-at"
log = structlog.get_logger()


@dataclass
class SoakConfig:
    seed: int = 1
    seconds: float = 540.0  # virtual seconds of workload and faults
    rate: float = 1.0  # virtual seconds per real second
    replicas: int = 3
    sharded: bool | None = None  # None: drawn from the seed
    foos: int = 20
    crdkinds: int = 10
    jinghzhus: int = 8
    networks: int = 10
    live_ats: int = 150  # at most this many Ats at once; DONE ones are deleted
    ops_per_second: float = 8.0  # virtual
    fault_every: float = 15.0  # virtual seconds between faults, on average
    converge_bound: float = 150.0  # virtual seconds after the last fault
    workers: int = 4
    kinds: dict[str, float] = field(default_factory=lambda: dict(FAULT_KINDS))


class ErrorLog:
    """A structlog processor: counts warnings and errors, keeps errors without a cause
    (no `error`, `exc_info`, `reason` or `cause`), and drops every event."""

    def __init__(self) -> None:
        self.errors: Counter[str] = Counter()
        self.warnings: Counter[str] = Counter()
        self.uncaused: list[str] = []

    def __call__(self, _: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
        name = str(event.get("event"))
        if method in ("error", "critical", "exception", "fatal"):
            self.errors[name] += 1
            if not any(event.get(k) for k in ("error", "exc_info", "reason", "cause")):
                self.uncaused.append(f"{name}: {sorted(event)}")
        elif method in ("warning", "warn"):
            self.warnings[name] += 1
        raise structlog.DropEvent


@contextlib.contextmanager
def captured_logs() -> Iterator[ErrorLog]:
    saved = structlog.get_config()
    errors = ErrorLog()
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, errors],
                        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
                        cache_logger_on_first_use=False)
    try:
        yield errors
    finally:
        structlog.configure(**saved)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class World:
    """The server's store, read and written in-process (the workload's and checks' path)."""

    def __init__(self, server: ApiServer, clock: PacedClock, ledger: Ledger) -> None:
        self.server, self.clock, self.ledger = server, clock, ledger
        self._follower: asyncio.Task[None] | None = None

    def rt(self, plural: str) -> ResourceType | None:
        kind = KIND_BY_PLURAL[plural]
        found: ResourceType | None = self.server.store.registry.resolve(
            kind.group, kind.version, kind.plural)
        return found

    async def follow(self) -> None:
        """(Re)subscribe the ledger to the current store's event stream, before returning
        (the subscription starts at the generator's first step)."""
        if self._follower is not None:
            self._follower.cancel()
        store = self.server.store

        async def run() -> None:
            async for type_, rt, item in store.subscribe():
                self.ledger.record(type_, rt.group, rt.plural, item)
        self._follower = asyncio.create_task(run(), name="soak-ledger")
        for _ in range(3):
            await asyncio.sleep(0)

    async def unfollow(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower

    async def install_crds(self, pacer: Pacer) -> None:
        rt = self.server.store.registry.resolve(CRD.group, CRD.version, CRD.plural)
        assert rt is not None
        for crd in load_crds():
            await self.server.store.create(rt, dict(crd))
        for _ in range(200):
            if all(self.rt(k.plural) is not None for k in CUSTOM_KINDS):
                return
            await pacer.sleep(0.1)
        raise RuntimeError("the bundled CRDs were never served")

    def items(self, plural: str) -> list[Obj]:
        rt = self.rt(plural)
        return [] if rt is None else list(self.server.store.list(rt, NS))

    def snapshot(self) -> Snapshot:
        objects = {p: self.items(p) for p in (*CUSTOM, *CHILDREN, "events")}
        return Snapshot(objects, self.clock.now())

    async def create(self, body: Obj) -> None:
        rt = self.rt(KIND_BY_PLURAL_BY_KIND[body["kind"]])
        if rt is not None:
            await self.server.store.create(rt, _copy(body), namespace=NS)

    async def update(self, plural: str, name: str, spec: dict[str, Any],
                     annotations: dict[str, str] | None = None) -> bool:
        rt = self.rt(plural)
        for _ in range(10):  # the operators write too: retry a conflict on a fresh read
            found = None if rt is None else self.server.store.get(rt, NS, name)
            if rt is None or found is None:
                return False
            found = _copy(found)
            found["spec"].update(spec)
            if annotations is not None:
                found["metadata"]["annotations"] = dict(annotations)
            try:
                await self.server.store.update(rt, found)
                return True
            except Exception:  # a Conflict: read again
                await asyncio.sleep(0)
        return False

    async def delete(self, plural: str, name: str) -> None:
        rt = self.rt(plural)
        if rt is not None:
            with contextlib.suppress(Exception):
                await self.server.store.delete(rt, NS, name)


KIND_BY_PLURAL_BY_KIND = {k.kind: k.plural for k in CUSTOM_KINDS}


def _copy(obj: Obj) -> Obj:
    return copy.deepcopy(obj)


def body(kind: Kind, name: str, spec: dict[str, Any], **annotations: str) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta, "spec": spec}


NETWORKS = [  # (cidr, gateway, ready)
    ("10.0.0.0/24", "10.0.0.1", True), ("10.0.0.0/24", "10.0.0.255", False),
    ("10.1.0.0/16", "10.1.3.1", True), ("10.2.0.0/24", "10.3.0.1", False),
]


class Workload:
    """The seeded stream of changes; `bodies` is the desired state (re-applied after a
    wipe), `dirty` the changes not yet seen converged (key -> virtual time of the change)."""

    def __init__(self, rng: random.Random, world: World, cfg: SoakConfig) -> None:
        self.rng, self.world, self.cfg = rng, world, cfg
        self.bodies: dict[str, Obj] = {}  # "plural/name" -> body
        self.dirty: dict[str, float] = {}
        self.due: list[tuple[float, str]] = []  # (virtual monotonic, key) of future Ats
        self.latencies: list[float] = []
        self.ops: Counter[str] = Counter()
        self.serial = 0

    def _now(self) -> float:
        return self.world.clock.monotonic()

    async def _create(self, plural: str, obj: Obj) -> None:
        key = f"{plural}/{obj['metadata']['name']}"
        self.bodies[key] = obj
        self.dirty[key] = self._now()
        self.ops[f"create {plural}"] += 1
        await self.world.create(obj)

    async def _update(self, plural: str, name: str, spec: dict[str, Any],
                      annotations: dict[str, str] | None = None) -> None:
        key = f"{plural}/{name}"
        self.bodies[key]["spec"].update(spec)
        if annotations is not None:
            self.bodies[key]["metadata"]["annotations"] = dict(annotations)
        self.dirty[key] = self._now()
        self.ops[f"update {plural}"] += 1
        await self.world.update(plural, name, spec, annotations)

    async def _delete(self, plural: str, name: str) -> None:
        key = f"{plural}/{name}"
        self.bodies.pop(key, None)
        self.dirty.pop(key, None)
        self.ops[f"delete {plural}"] += 1
        await self.world.delete(plural, name)

    def _names(self, plural: str) -> list[str]:
        return sorted(k.split("/", 1)[1] for k in self.bodies if k.startswith(plural + "/"))

    async def populate(self) -> None:
        cfg, rng = self.cfg, self.rng
        for i in range(cfg.foos):
            await self._create("foos", body(FOO, f"foo-{i}", {
                "deploymentName": f"web-{i}", "replicas": rng.randint(1, 4)}))
        for i in range(cfg.crdkinds):
            await self._create("crdplural", body(CRDKIND, f"ck-{i}", {
                "choice": rng.choice(["mysql", "tomcat"]), "replicas": rng.randint(1, 3)}))
        for i in range(cfg.jinghzhus):
            await self._create("jinghzhus", body(JINGHZHU, f"jh-{i}", {
                "desired": rng.randint(0, 4)}))
        for i in range(cfg.networks):
            cidr, gw, ready = rng.choice(NETWORKS)
            await self._create("networks", body(NETWORK, f"net-{i}", {
                "cidr": cidr, "gateway": gw}, **{EXPECT_READY: str(ready)}))
        await self._create("ats", body(AT, POISON, {"schedule": "not-a-time",
                                                    "command": "echo never"}))
        for _ in range(cfg.live_ats // 3):
            await self._new_at()

    async def _new_at(self) -> None:
        self.serial += 1
        offset = self.rng.uniform(-30, 45)
        when = self.world.clock.now() + timedelta(seconds=offset)
        name = f"at-{self.serial}"
        await self._create("ats", body(AT, name, {"schedule": format_time(when),
                                                  "command": f"echo {self.serial}"}))
        if offset > 0:
            self.due.append((self._now() + offset, f"ats/{name}"))

    async def step(self, seconds: float) -> None:
        """`seconds` of virtual time's worth of changes, then the DONE Ats deleted."""
        rng = self.rng
        n = int(self.cfg.ops_per_second * seconds + rng.random())
        live_ats = len(self._names("ats"))
        for _ in range(n):
            op = rng.choices(["at", "foo", "foo_churn", "ck", "jh", "net"],
                             weights=[6, 3, 1, 2, 2, 2])[0]
            if op == "at" and live_ats < self.cfg.live_ats:
                await self._new_at()
                live_ats += 1
            elif op == "foo":
                await self._update("foos", rng.choice(self._names("foos")),
                                   {"replicas": rng.randint(1, 4)})
            elif op == "foo_churn":
                gone = rng.choice(self._names("foos"))
                await self._delete("foos", gone)
                self.serial += 1
                await self._create("foos", body(FOO, f"foo-c{self.serial}", {
                    "deploymentName": f"web-c{self.serial}", "replicas": rng.randint(1, 4)}))
            elif op == "ck":
                name = rng.choice(self._names("crdplural"))
                if rng.random() < 0.6:
                    other = {"mysql": "tomcat", "tomcat": "mysql"}[
                        self.bodies[f"crdplural/{name}"]["spec"]["choice"]]
                    await self._update("crdplural", name, {"choice": other})
                else:
                    await self._update("crdplural", name, {"replicas": rng.randint(1, 3)})
            elif op == "jh":
                await self._update("jinghzhus", rng.choice(self._names("jinghzhus")),
                                   {"desired": rng.randint(0, 4)})
            elif op == "net":
                cidr, gw, ready = rng.choice(NETWORKS)
                await self._update("networks", rng.choice(self._names("networks")),
                                   {"cidr": cidr, "gateway": gw}, {EXPECT_READY: str(ready)})
        for at in self.world.items("ats"):
            name = at["metadata"]["name"]
            if (at.get("status") or {}).get("phase") == "DONE" and f"ats/{name}" not in self.dirty:
                await self._delete("ats", name)

    def observe(self, problems_now: dict[str, str]) -> None:
        """Changes whose object is now converged: their latency is recorded."""
        now = self._now()
        while self.due and self.due[0][0] <= now:
            _, key = self.due.pop(0)
            if key in self.bodies:
                self.dirty.setdefault(key, now)
        self.due.sort()
        for key, since in list(self.dirty.items()):
            if key not in problems_now:
                self.latencies.append(now - since)
                del self.dirty[key]

    async def reapply(self) -> None:
        """After a wipe: the desired state again (as from a GitOps repository)."""
        self.ops["reapply"] += 1
        for key, obj in list(self.bodies.items()):
            self.dirty.setdefault(key, self._now())
            await self.world.create(obj)


async def soak(cfg: SoakConfig) -> dict[str, Any]:
    rng_faults = random.Random(f"{cfg.seed}/faults")
    rng_victims = random.Random(f"{cfg.seed}/victims")
    rng_work = random.Random(f"{cfg.seed}/workload")
    sharded = cfg.sharded if cfg.sharded is not None else random.Random(
        f"{cfg.seed}/mode").random() < 0.5
    plan = schedule(rng_faults, cfg.seconds, every=cfg.fault_every, kinds=cfg.kinds)
    clock = PacedClock(datetime(2026, 1, 1, tzinfo=UTC))
    ledger = Ledger(now=clock.now)
    overlaps = Overlaps()
    violations: list[str] = []
    samples: list[Sample] = []
    t0 = time.perf_counter()
    sims = SimulatorConfig(pod_run_duration=1.0, resync_period=3600.0)
    with captured_logs() as errors:
        async with ApiServer(clock=clock, simulators=sims) as server:
            pacer = Pacer(clock, rate=cfg.rate)
            pacer.start()
            world = World(server, clock, ledger)
            await world.follow()
            await world.install_crds(pacer)
            await pacer.sleep(1.0)
            tasks_before = len(asyncio.all_tasks())
            serial = 0

            async def spawn() -> Replica:
                nonlocal serial
                serial += 1
                return await Replica.start(f"replica-{serial}", server, clock,
                                           sharded=sharded, overlaps=overlaps,
                                           workers=cfg.workers)

            replicas = [await spawn() for _ in range(cfg.replicas)]
            work = Workload(rng_work, world, cfg)

            async def wiped() -> None:
                await world.follow()
                await world.install_crds(pacer)
                await work.reapply()

            chaos = Chaos(rng=rng_victims, server=server, clock=clock, pacer=pacer,
                          overlaps=overlaps, replicas=replicas, spawn=spawn, wiped=wiped)
            await work.populate()
            start = clock.monotonic()
            pending = list(plan)
            seen: set[str] = set()

            def check_continuous() -> None:
                for v in [*ledger_violations(ledger), *overlaps.violations]:
                    if v not in seen:
                        seen.add(v)
                        violations.append(f"at {clock.monotonic() - start:.0f}s: {v}")

            last_sample = 0.0
            while clock.monotonic() - start < cfg.seconds:
                while pending and pending[0].at <= clock.monotonic() - start:
                    fault = pending.pop(0)
                    try:
                        await chaos.apply(fault)
                    except Exception as exc:  # the soak's own trouble
                        violations.append(f"fault {fault.kind} failed to apply: {exc!r}")
                await work.step(1.0)
                work.observe(problems(world.snapshot()))
                check_continuous()
                if time.perf_counter() - last_sample >= 1.0:
                    last_sample = time.perf_counter()
                    samples.append(Sample(last_sample - t0, rss_mb(), len(asyncio.all_tasks())))
                await pacer.sleep(1.0)
            # The last fault is over: faults cleared, replicas back, then convergence.
            server.faults.clear()
            last_fault = clock.monotonic()
            await asyncio.gather(*chaos.background, return_exceptions=True)
            while len(replicas) < cfg.replicas:
                replicas.append(await spawn())
            converged_after: float | None = None
            left: dict[str, str] = {}
            while clock.monotonic() - last_fault <= cfg.converge_bound:
                left = problems(world.snapshot())
                work.observe(left)
                check_continuous()
                if not left:
                    converged_after = clock.monotonic() - last_fault
                    break
                await pacer.sleep(1.0)
            if converged_after is None:
                violations.append(f"not converged {cfg.converge_bound:.0f}s after the last "
                                  f"fault: {len(left)} objects, e.g. {sorted(left.items())[:5]}")
            snap = world.snapshot()
            violations += child_violations(snap, ledger)
            violations += growth_violations(samples)
            reconciles = overlaps.reconciles.total()
            for replica in replicas:
                await replica.stop()
            await asyncio.gather(*chaos.remains, return_exceptions=True)
            await world.unfollow()
            await pacer.stop()
            for _ in range(50):  # connections closing, the server's handlers finishing
                if len(asyncio.all_tasks()) <= tasks_before:
                    break
                await asyncio.sleep(0.1)
            tasks_after = len(asyncio.all_tasks())
            if tasks_after > tasks_before + 2:
                names = Counter(t.get_name().rstrip("0123456789") for t in asyncio.all_tasks())
                violations.append(f"{tasks_after - tasks_before} tasks left after every "
                                  f"replica stopped: {names.most_common(5)}")
            injected_http = server.faults.injected
        violations += [f"error logged without a cause: {e}" for e in errors.uncaused[:10]]
    due_uids = [at["metadata"]["uid"] for at in snap.live("ats")
                if (w := schedule_of(at)) is not None and w <= snap.now]
    ran = sum(1 for n in ledger.at_pods.values() if n >= 1)
    third = max(1, len(samples) // 3)
    return {
        "bench": "soak", "seed": cfg.seed, "mode": "sharding" if sharded else "leader-election",
        "replicas": cfg.replicas, "virtual_s": round(clock.monotonic(), 1),
        "real_s": round(time.perf_counter() - t0, 1),
        "faults": dict(sorted(chaos.injected.items())), "faults_total": chaos.injected.total(),
        "http_faults_injected": injected_http,
        "objects_created": {p: ledger.created[p] for p in (*CUSTOM, *CHILDREN)},
        "objects_at_end": {p: len(snap.of(p)) for p in (*CUSTOM, *CHILDREN, "events")},
        "changes": work.ops.total(), "reconciles": reconciles,
        "ats_run": ran, "ats_run_twice": sum(1 for n in ledger.at_pods.values() if n > 1),
        "ats_due_not_run": sum(1 for u in due_uids if ledger.at_pods[u] == 0),
        "convergence_s": {"p50": round(percentile(work.latencies, 0.5), 1),
                          "p99": round(percentile(work.latencies, 0.99), 1),
                          "max": round(max(work.latencies, default=0.0), 1),
                          "changes_measured": len(work.latencies),
                          "after_last_fault": converged_after},
        "rss_mb": {"first_third_max": round(max(s.rss_mb for s in samples[:third]), 1),
                   "mid_third_max": round(max(s.rss_mb for s in samples[third:-third]
                                              or samples), 1),
                   "last_third_max": round(max(s.rss_mb for s in samples[-third:]), 1)}
        if samples else {},
        "tasks": {"first_third_max": max(s.tasks for s in samples[:third]),
                  "mid_third_max": max(s.tasks for s in samples[third:-third] or samples),
                  "last_third_max": max(s.tasks for s in samples[-third:]),
                  "mid_third_median": _median_low([s.tasks for s in
                                                   samples[third:-third] or samples]),
                  "last_third_median": _median_low([s.tasks for s in samples[-third:]]),
                  "before_replicas": tasks_before, "after_stop": tasks_after}
        if samples else {},
        "errors_logged": errors.errors.total(), "warnings_logged": errors.warnings.total(),
        "errors_by_event": dict(errors.errors.most_common(5)),
        "warnings_by_event": dict(errors.warnings.most_common(5)),
        "violations": violations[:30], "violation_count": len(violations),
        "ok": not violations,
    }


def _median_low(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2] if ordered else 0
