"""The fault kinds, the seeded fault schedule, and `Chaos`, which applies faults to a run.

Concept: `schedule(rng, seconds, every=..., kinds=...)` draws the whole fault schedule from
the seed before the run — on average one fault every `every` virtual seconds, the first
len(kinds) cycling through every enabled kind in a seeded order, then by weight — so the
same seed gives the same faults with the same parameters. `Chaos.apply(fault)` does one:

- `sigkill`: the replica that owns work (the leader, or a random shard owner) has its link
  cut; a new replica joins 1-6 s later.
- `sigterm`: the same replica stops gracefully; a new one joins 1-6 s later.
- `restart`: the API server restarts keeping its objects: every connection and watch breaks.
- `wipe`: the server restarts without state: the CRDs and the workload's objects are applied
  again, and the replicas are replaced (as after an etcd restore).
- `wipe_hot`: the same, the replicas kept running on their stale caches (weight 0: off by
  default).
- `cut`: every watch stream is closed.
- `storm410`: 2-4 rounds of history expiry + watch cuts: every resume gets 410 Expired.
- `throttle429`: 5-25 requests (one verb or any) answered 429 with Retry-After 1-3.
- `burst5xx`: 5-25 requests answered 500/502/503/504.
- `conflict409`: 3-15 status updates answered 409 Conflict.
- `slow`: 10-60 requests delayed 0.2-1.5 s (on the clock).
- `jump`: virtual time runs 5-40 s ahead at once.
- `wall_step`: the wall clock steps 10-90 s forward, the monotonic clock does not.

Invariants: a schedule is a pure function of its arguments; every fault of a schedule is
applied before the chaos phase ends; `injected` counts what was applied, by kind.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from asyncop.apiserver import ApiServer
from asyncop.testing.chaos.clock import PacedClock, Pacer
from asyncop.testing.chaos.replicas import Overlaps, Replica

log = structlog.get_logger(__name__)

FAULT_KINDS: Mapping[str, float] = {  # kind -> default weight in the schedule
    "sigkill": 2, "sigterm": 2, "restart": 1.5, "wipe": 0.5, "cut": 2, "storm410": 1.5,
    "throttle429": 1.5, "burst5xx": 1.5, "conflict409": 1.5, "slow": 1, "jump": 1,
    "wall_step": 0.5,
    # Off by default (weight 0): a wipe with the replicas kept running on their stale
    # caches, which Kubernetes does not support either (docs/soak.md, "Found and left").
    "wipe_hot": 0,
}
"""Every fault kind and its default weight (0: off unless weighed in)."""


@dataclass(frozen=True)
class Fault:
    at: float
    """Virtual seconds after the chaos phase starts."""
    kind: str
    params: dict[str, Any] = field(default_factory=dict)


def schedule(rng: random.Random, seconds: float, *, every: float,
             kinds: Mapping[str, float] = FAULT_KINDS) -> list[Fault]:
    """Faults at jittered intervals over `seconds` of virtual time; every kind at least once
    when there is room (the first len(kinds) faults cycle through them in a seeded order)."""
    names = [n for n, w in kinds.items() if w > 0]
    if not names:
        return []
    order = rng.sample(names, len(names))
    out: list[Fault] = []
    t = every * rng.uniform(0.3, 1.0)
    while t < seconds:
        kind = order[len(out)] if len(out) < len(order) else rng.choices(
            names, weights=[kinds[n] for n in names])[0]
        drawn: dict[str, dict[str, Any]] = {
            "sigkill": {"respawn": rng.uniform(1, 6)},
            "sigterm": {"respawn": rng.uniform(1, 6)},
            "throttle429": {"verb": rng.choice(["update", "create", "get", "list", None]),
                            "count": rng.randint(5, 25), "retry_after": rng.randint(1, 3)},
            "burst5xx": {"verb": rng.choice(["update", "create", "get", "patch", None]),
                         "status": rng.choice([500, 502, 503, 504]),
                         "count": rng.randint(5, 25)},
            "conflict409": {"count": rng.randint(3, 15)},
            "slow": {"seconds": rng.uniform(0.2, 1.5), "count": rng.randint(10, 60)},
            "jump": {"seconds": rng.uniform(5, 40)},
            "wall_step": {"seconds": rng.uniform(10, 90)},
            "storm410": {"rounds": rng.randint(2, 4)},
        }
        out.append(Fault(round(t, 3), kind, drawn.get(kind, {})))
        t += every * rng.uniform(0.5, 1.5)
    return out


class Chaos:
    """Applies faults to the world: the server's `Faults`, its restarts, the replicas.

    `spawn()` starts a fresh replica (a new identity); `wiped()` is called after a restart
    without state (CRDs and the desired objects go back). `remains` are the stopping
    remains of replicas taken away, `background` the pending respawns; `last` is the virtual
    monotonic time of the last disturbance (a fault applied, or a replica it replaced
    joining)."""

    def __init__(self, *, rng: random.Random, server: ApiServer, clock: PacedClock,
                 pacer: Pacer, overlaps: Overlaps, replicas: list[Replica],
                 spawn: Callable[[], Awaitable[Replica]],
                 wiped: Callable[[], Awaitable[None]]) -> None:
        self.rng, self.server, self.clock, self.pacer = rng, server, clock, pacer
        self.overlaps, self.replicas, self.spawn, self.wiped = (
            overlaps, replicas, spawn, wiped)
        self.injected: Counter[str] = Counter()
        self.remains: list[asyncio.Task[None]] = []
        self.background: list[asyncio.Task[None]] = []
        self.last = clock.monotonic()

    def _victim(self) -> Replica | None:
        owners = [r for r in self.replicas if r.owns_work]
        pool = owners or self.replicas
        return self.rng.choice(pool) if pool else None

    def _respawn_later(self, seconds: float) -> None:
        async def later() -> None:
            await self.pacer.sleep(seconds)
            self.replicas.append(await self.spawn())
            self.last = self.clock.monotonic()
        self.background.append(asyncio.create_task(later(), name="soak-respawn"))

    async def apply(self, fault: Fault) -> None:
        self.injected[fault.kind] += 1
        log.warning("soak fault", kind=fault.kind, **fault.params)
        try:
            await self._apply(fault)
        finally:
            self.last = self.clock.monotonic()

    async def _apply(self, fault: Fault) -> None:
        faults, p = self.server.faults, fault.params
        if fault.kind in ("sigkill", "sigterm"):
            victim = self._victim()
            if victim is None:
                return
            self.replicas.remove(victim)
            if fault.kind == "sigkill":
                self.remains.append(victim.kill(self.overlaps))
            else:
                self.remains.append(asyncio.create_task(victim.stop(), name="soak-sigterm"))
            self._respawn_later(p["respawn"])
        elif fault.kind == "restart":
            await self.server.restart(keep_state=True)
        elif fault.kind == "wipe":
            # A restart without state, as after an etcd restore: Kubernetes asks for every
            # controller to be restarted too, so the replicas go and fresh ones come.
            victims = list(self.replicas)
            self.replicas.clear()
            self.remains += [v.kill(self.overlaps) for v in victims]
            await self.server.restart(keep_state=False)
            await self.wiped()
            for _ in victims:
                self.replicas.append(await self.spawn())
        elif fault.kind == "wipe_hot":
            await self.server.restart(keep_state=False)
            await self.wiped()
        elif fault.kind == "cut":
            faults.cut_watches()
        elif fault.kind == "storm410":
            for _ in range(p["rounds"]):
                faults.expire_history()
                faults.cut_watches()
                await self.pacer.sleep(0.5)
        elif fault.kind == "throttle429":
            faults.fail(verb=p["verb"], status=429, retry_after=p["retry_after"],
                        count=p["count"])
        elif fault.kind == "burst5xx":
            faults.fail(verb=p["verb"], status=p["status"], count=p["count"])
        elif fault.kind == "conflict409":
            faults.fail(verb="update", path="/status", status=409, count=p["count"])
        elif fault.kind == "slow":
            faults.delay(seconds=p["seconds"], count=p["count"])
        elif fault.kind == "jump":
            self.pacer.jump(p["seconds"])
        elif fault.kind == "wall_step":
            self.clock.step_wall(p["seconds"])
        else:
            raise ValueError(f"unknown fault kind {fault.kind!r}")
