"""The soak: an operator's replicas under a seeded workload and fault schedule, checked.

Concept: `soak(scenario, config)` starts the embedded API server (simulators on, on a
`PacedClock`), installs the operator's CRDs, follows the server's event stream into a
`History`, starts `config.replicas` replicas of the operator (leader election, or sharding
over `config.shards` shards; drawn from the seed when `sharded` is None), lets the workload
populate the world, then for `config.seconds` of virtual time applies the workload and the
seeded fault schedule while the invariants are checked (every event, every virtual second).
Then the faults stop, the replicas are topped up, and the world must converge within
`config.converge_within`; the end-of-run invariants and the built-in ones follow, and the
result is a `Report`. `run_soak` is the short variant for a pytest test.

Reproducible from the seed: every random choice comes from `random.Random` seeded with it,
one stream per concern (`"<seed>/faults"`, `"<seed>/workload"`, `"<seed>/victims"`,
`"<seed>/mode"`), so the fault schedule, the workload's sequence of ops and the choice of
victims repeat; the interleaving of the event loop with the sockets does not.

Invariants: every replica, task and connection the soak started is stopped before it
returns, whatever happened; user code (workload, checks) that raises is a violation, never
a crash of the soak; all output is the Report (logs are counted and dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from asyncop.api import AlreadyExists, Kind, kind_of
from asyncop.api.kinds import CRD, EVENT
from asyncop.apiserver import ApiServer
from asyncop.operator.inspect import Inspection, inspect
from asyncop.testing.chaos.checks import Checker
from asyncop.testing.chaos.clock import PacedClock, Pacer
from asyncop.testing.chaos.config import SoakConfig
from asyncop.testing.chaos.facts import EVENT_GR, GR, Change, History, Obj
from asyncop.testing.chaos.faults import FAULT_KINDS, Chaos, schedule
from asyncop.testing.chaos.health import (
    Sample,
    captured_logs,
    growth_violations,
    percentile,
    rss_mb,
    thirds,
)
from asyncop.testing.chaos.invariants import (
    BOUNDED_GROWTH,
    ERRORS_HAVE_A_CAUSE,
    NO_TASK_LEFT,
    ONE_REPLICA_PER_KEY,
    SOAK,
    Converges,
)
from asyncop.testing.chaos.replicas import Overlaps, Replica, ReplicaSpec
from asyncop.testing.chaos.report import SHOWN, Report
from asyncop.testing.chaos.scenario import Scenario
from asyncop.testing.chaos.world import World

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def followed_kinds(found: Inspection, scenario: Scenario) -> dict[GR, Kind]:
    """What the snapshots read: everything the controllers watch, the operator's resources,
    the scenario's kinds, the Converges invariants' kinds, and Events."""
    kinds: list[Kind] = []
    for c in found.controllers:
        kinds += [c.primary] if c.primary is not None else []
        kinds += [w.kind for w in c.watches]
    kinds += [kind_of(r) for r in found.resources]
    kinds += [kind_of(k) for k in scenario.kinds]
    kinds += [kind_of(i.kind) for i in scenario.invariants if isinstance(i, Converges)]
    kinds.append(EVENT)
    out: dict[GR, Kind] = {}
    for kind in kinds:
        out.setdefault((kind.group, kind.plural), kind)
    return out


async def install_crds(server: ApiServer, crds: list[Obj], pacer: Pacer) -> None:
    """The operator's CRDs, in-process; returns once every served version is served."""
    store = server.store
    rt = store.registry.resolve(CRD.group, CRD.version, CRD.plural)
    assert rt is not None
    for crd in crds:
        with contextlib.suppress(AlreadyExists):
            await store.create(rt, dict(crd))
    wanted = [(c["spec"]["group"], v["name"], c["spec"]["names"]["plural"])
              for c in crds for v in c["spec"]["versions"] if v.get("served", True)]
    for _ in range(300):
        if all(server.store.registry.resolve(*w) is not None for w in wanted):
            return
        await pacer.sleep(0.1)
    raise RuntimeError(f"the operator's CRDs were never served: {wanted}")


class _Follower:
    """The server's event stream -> History and the trackers (resubscribed after a wipe)."""

    def __init__(self, server: ApiServer, clock: PacedClock, history: History,
                 checker: Checker) -> None:
        self.server, self.clock, self.history, self.checker = server, clock, history, checker
        self._task: asyncio.Task[None] | None = None
        self._kinds: dict[tuple[str, str, str], Kind] = {}

    async def follow(self) -> None:
        await self.stop()
        store = self.server.store

        async def run() -> None:
            async for type_, rt, obj in store.subscribe():
                key = (rt.group, rt.version, rt.plural)
                kind = self._kinds.get(key)
                if kind is None:
                    kind = self._kinds[key] = Kind(rt.group, rt.version, rt.plural, rt.kind,
                                                   rt.namespaced)
                change = Change(type_, kind, obj, self.clock.now())
                self.history.record(change)
                self.checker.observe(change, self.history)
        self._task = asyncio.create_task(run(), name="soak-history")
        for _ in range(3):  # the subscription starts at the generator's first step
            await asyncio.sleep(0)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


async def soak(scenario: Scenario, config: SoakConfig | None = None, *,
               command: str | None = None) -> Report:
    """Run `scenario` under chaos as `config` says; `command` (how to rerun it) goes into
    the report."""
    cfg = config or SoakConfig()
    rng_faults = random.Random(f"{cfg.seed}/faults")
    rng_victims = random.Random(f"{cfg.seed}/victims")
    rng_work = random.Random(f"{cfg.seed}/workload")
    sharded = cfg.sharded if cfg.sharded is not None else random.Random(
        f"{cfg.seed}/mode").random() < 0.5
    plan = schedule(rng_faults, cfg.seconds, every=cfg.fault_every, kinds=cfg.faults)
    found = inspect(scenario.operator)
    crds: list[Obj] = [dict(c) for c in found.crds()]
    clock = PacedClock(EPOCH)
    history = History()
    overlaps = Overlaps()
    samples: list[Sample] = []
    t0 = time.perf_counter()
    spec = ReplicaSpec(operator=scenario.operator, namespace=scenario.namespace,
                       sharded=sharded, shards=cfg.shards, workers=cfg.workers)
    with captured_logs() as errors:
        async with ApiServer(clock=clock, simulators=scenario.simulators) as server:
            pacer = Pacer(clock, rate=cfg.rate)
            world = World(server, clock, rng=rng_work, namespace=scenario.namespace)
            world.kinds.update(followed_kinds(found, scenario))
            checker = Checker(scenario.invariants, elapsed=world.elapsed,
                              monotonic=clock.monotonic)
            follower = _Follower(server, clock, history, checker)
            replicas: list[Replica] = []
            chaos: Chaos | None = None
            pacer.start()
            try:
                await follower.follow()
                await install_crds(server, crds, pacer)
                await pacer.sleep(1.0)
                tasks_before = len(asyncio.all_tasks())
                serial = 0

                async def spawn() -> Replica:
                    nonlocal serial
                    serial += 1
                    return await Replica.start(f"replica-{serial}", spec, port=server.port,
                                               clock=clock, overlaps=overlaps)

                replicas += [await spawn() for _ in range(cfg.replicas)]

                async def wiped() -> None:
                    await follower.follow()
                    await install_crds(server, crds, pacer)
                    await world.reapply()

                chaos = Chaos(rng=rng_victims, server=server, clock=clock, pacer=pacer,
                              overlaps=overlaps, replicas=replicas, spawn=spawn, wiped=wiped)
                if scenario.workload.populate is not None:
                    try:
                        await scenario.workload.populate(world)
                    except Exception as exc:
                        checker.add(SOAK, f"the workload's populate raised {exc!r}")
                world.start = clock.monotonic()
                checker.continuous = True
                pending = list(plan)
                reported = 0

                def continuous(last_fault: float) -> dict[Any, str]:
                    nonlocal reported
                    list(world.fall_due())
                    problems = checker.tick(world.snapshot(), changed=world.changed,
                                            last_fault=last_fault)
                    for v in overlaps.violations[reported:]:
                        checker.add(ONE_REPLICA_PER_KEY, v)
                    reported = len(overlaps.violations)
                    return problems

                last_sample = 0.0
                while world.elapsed() < cfg.seconds:
                    while pending and pending[0].at <= world.elapsed():
                        fault = pending.pop(0)
                        try:
                            await chaos.apply(fault)
                        except Exception as exc:  # the soak's own trouble
                            checker.add(SOAK, f"fault {fault.kind} failed to apply: {exc!r}")
                    await _step(scenario, world, checker)
                    continuous(chaos.last)
                    if time.perf_counter() - last_sample >= 1.0:
                        last_sample = time.perf_counter()
                        samples.append(Sample(last_sample - t0, rss_mb(),
                                              len(asyncio.all_tasks())))
                    await pacer.sleep(1.0)
                # The last fault is over: faults cleared, replicas back, then convergence.
                server.faults.clear()
                await asyncio.gather(*chaos.background, return_exceptions=True)
                while len(replicas) < cfg.replicas:
                    replicas.append(await spawn())
                last_fault = clock.monotonic()
                converged_after: float | None = None
                problems: dict[Any, str] = {}
                while clock.monotonic() - last_fault <= cfg.converge_within:
                    problems = continuous(last_fault)
                    if not problems:
                        converged_after = round(clock.monotonic() - last_fault, 1)
                        break
                    await pacer.sleep(1.0)
                checker.continuous = False
                if converged_after is None:
                    checker.not_converged(problems, cfg.converge_within)
                snap = world.snapshot()
                checker.at_end(snap, history)
                for message in growth_violations(samples):
                    checker.add(BOUNDED_GROWTH, message)
                reconciles = overlaps.reconciles.total()
                summary: dict[str, Any] = {}
                if scenario.summary is not None:
                    try:
                        summary = dict(scenario.summary(snap, history))
                    except Exception as exc:
                        checker.add(SOAK, f"the scenario's summary raised {exc!r}")
                for replica in list(replicas):
                    replicas.remove(replica)
                    await replica.stop()
                await asyncio.gather(*chaos.remains, return_exceptions=True)
                await follower.stop()
                await pacer.stop()
                for _ in range(50):  # connections closing, the server's handlers finishing
                    if len(asyncio.all_tasks()) <= tasks_before:
                        break
                    await asyncio.sleep(0.1)
                tasks_after = len(asyncio.all_tasks())
                if tasks_after > tasks_before + 2:
                    names = Counter(t.get_name().rstrip("0123456789")
                                    for t in asyncio.all_tasks())
                    checker.add(NO_TASK_LEFT, f"{tasks_after - tasks_before} tasks left after "
                                f"every replica stopped: {names.most_common(5)}")
                injected_http = server.faults.injected
            finally:
                await _cleanup(replicas, chaos, follower, pacer)
        for message in errors.uncaused[:10]:
            checker.add(ERRORS_HAVE_A_CAUSE, f"error logged without a cause: {message}")
    violations = tuple(checker.violations)
    kinds = {key: k for key, k in world.kinds.items() if key != EVENT_GR}
    label = _labels(world.kinds)
    data: dict[str, Any] = {
        "soak": scenario.name, "seed": cfg.seed,
        "mode": "sharding" if sharded else "leader-election",
        "replicas": cfg.replicas, "virtual_s": round(clock.monotonic(), 1),
        "real_s": round(time.perf_counter() - t0, 1),
        "faults": dict(sorted(chaos.injected.items())), "faults_total": chaos.injected.total(),
        "http_faults_injected": injected_http,
        "objects_created": {label[key]: history.creations[key] for key in kinds},
        "objects_at_end": {label[key]: len(snap.objects.get(key, [])) for key in world.kinds},
        "changes": world.ops.total(), "refused": dict(sorted(world.refused.items())),
        "reconciles": reconciles, **summary,
        "convergence_s": {"p50": round(percentile(checker.latencies, 0.5), 1),
                          "p99": round(percentile(checker.latencies, 0.99), 1),
                          "max": round(max(checker.latencies, default=0.0), 1),
                          "changes_measured": len(checker.latencies),
                          "after_last_fault": converged_after},
        **_resources(samples, tasks_before, tasks_after),
        "errors_logged": errors.errors.total(), "warnings_logged": errors.warnings.total(),
        "errors_by_event": dict(errors.errors.most_common(5)),
        "warnings_by_event": dict(errors.warnings.most_common(5)),
        "violations": [str(v) for v in violations[:SHOWN]],
        "violation_count": len(violations),
        "violated": sorted({v.invariant for v in violations}),
        "ok": not violations,
    }
    if command:
        data["reproduce"] = command
    return Report(data, violations)


async def _step(scenario: Scenario, world: World, checker: Checker) -> None:
    """One virtual second of the workload: its drawn ops, then its tidy step."""
    def failed(what: str, exc: Exception) -> None:
        checker.add(SOAK, f"the workload's {what} raised {exc!r}")

    await scenario.workload.step(world, 1.0, failed=failed)


async def _cleanup(replicas: list[Replica], chaos: Chaos | None, follower: _Follower,
                   pacer: Pacer) -> None:
    """Whatever happened: no replica, respawn, follower or pacer is left running."""
    if chaos is not None:
        for task in chaos.background:
            task.cancel()
        await asyncio.gather(*chaos.background, return_exceptions=True)
    for replica in replicas:
        with contextlib.suppress(Exception):
            await replica.stop()
    if chaos is not None:
        await asyncio.gather(*chaos.remains, return_exceptions=True)
    await follower.stop()
    await pacer.stop()


def _labels(kinds: Mapping[GR, Kind]) -> dict[GR, str]:
    """Report keys: the plural, or `plural.group` where two followed kinds share a plural."""
    plurals = Counter(k.plural for k in kinds.values())
    return {key: k.plural if plurals[k.plural] == 1 else k.resource for key, k in kinds.items()}


def _resources(samples: list[Sample], before: int, after: int) -> dict[str, Any]:
    out: dict[str, Any] = thirds(samples)
    out["tasks"] = {**out["tasks"], "before_replicas": before, "after_stop": after}
    return out


async def run_soak(scenario: Scenario, *, seed: int = 1, seconds: float = 60.0,
                   rate: float = 8.0, replicas: int = 3, sharded: bool | None = False,
                   faults: Mapping[str, float] | None = None, fault_every: float = 5.0,
                   converge_within: float = 60.0, workers: int | None = 2) -> Report:
    """The short variant, for a pytest test: `seconds` of virtual time at `rate` virtual
    seconds per real second (60 s at 8x: about 8 real seconds, less where clock jumps skip
    ahead, plus convergence), a fault every `fault_every` seconds on average (every fault
    kind about once in 60 s). Returns the Report; raises `SoakFailed` (an
    AssertionError naming every violation and the seed) if any invariant failed."""
    config = SoakConfig(seed=seed, seconds=seconds, rate=rate, replicas=replicas,
                        sharded=sharded,
                        faults=dict(faults) if faults is not None else dict(FAULT_KINDS),
                        fault_every=fault_every, converge_within=converge_within,
                        workers=workers)
    return (await soak(scenario, config)).check()
