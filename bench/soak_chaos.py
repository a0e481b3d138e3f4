"""The soak's machinery: a paced fake clock, replicas behind cuttable links, and faults.

Concept: ONE process, one event loop. The embedded `ApiServer` (simulators on) serves real
HTTP on 127.0.0.1; each operator replica is a `Manager` running all six bundled controllers
with its own `Client`, whose every connection goes through its own `Link` (a TCP relay).
`Link.cut()` aborts every connection and refuses new ones, so a "SIGKILLed" replica is, to
the server, exactly a dead process: it can neither renew a Lease nor write anything; its
in-process remains are then stopped in the background and ignored. A "SIGTERMed" replica
stops gracefully (drains, releases its Lease or hands its shards over). Both are replaced by
a fresh replica with a new identity a few seconds later, as a Deployment would.

Time is a `PacedClock` (a FakeClock) advanced by one `Pacer` task at a fixed rate of virtual
seconds per real second: the operators, the server's simulators and its delay faults all run
on it, which makes clock jumps possible (`jump`: virtual time races ahead, firing every timer
on the way; `step_wall`: the wall clock steps forward while the monotonic clock does not).

`Chaos.schedule(rng, ...)` draws the whole fault schedule from the seed before the run; the
same seed gives the same schedule, workload and choices (timing of the event loop aside).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import structlog
from soak_world import NS, Overlaps

from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.controllers.registry import CONTROLLERS
from asyncop.runtime.leader import LeaderElectionConfig
from asyncop.runtime.manager import Manager
from asyncop.runtime.sharding import ShardingConfig
from asyncop.testing import FakeClock

log = structlog.get_logger()
GROUP = "asyncop-soak"


class PacedClock(FakeClock):
    """A FakeClock whose wall clock can also step on its own (NTP-style)."""

    def step_wall(self, seconds: float) -> None:
        self._wall0 += timedelta(seconds=seconds)


class Pacer:
    """The only task that moves the clock: `rate` virtual seconds per real second."""

    def __init__(self, clock: PacedClock, *, rate: float, tick: float = 0.05) -> None:
        self.clock, self.rate, self.tick = clock, rate, tick
        self._jump = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="soak-pacer")

    def jump(self, seconds: float) -> None:
        self._jump += seconds

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            step, self._jump = self.tick * self.rate + self._jump, 0.0
            await self.clock.advance(step)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def sleep(self, virtual: float) -> None:
        """Wait until `virtual` seconds have passed on the clock (the pacer moves it)."""
        await self.clock.sleep(virtual)


class Link:
    """A TCP relay from a replica to the API server; `cut()` is the replica's death."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.cut_off = False
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut_off:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self._writers -= {writer, up_writer}

    def cut(self) -> None:
        self.cut_off = True
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            await self._server.wait_closed()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()


class _Traced:
    """A reconciler wrapper reporting each reconcile's key and replica to `Overlaps`."""

    def __init__(self, inner: Any, overlaps: Overlaps, replica: str, controller: str) -> None:
        self.inner, self.overlaps, self.replica, self.controller = (
            inner, overlaps, replica, controller)

    async def reconcile(self, request: Any) -> Any:
        key = f"{self.controller}/{request.namespace}/{request.name}"
        self.overlaps.enter(key, self.replica)
        try:
            return await self.inner.reconcile(request)
        finally:
            self.overlaps.leave(key, self.replica)


@dataclass
class Replica:
    name: str
    link: Link
    client: Client
    mgr: Manager

    @classmethod
    async def start(cls, name: str, server: ApiServer, clock: PacedClock, *, sharded: bool,
                    overlaps: Overlaps, workers: int) -> Replica:
        link = Link(server.port)
        await link.start()
        client = Client(ClientConfig(host=f"http://127.0.0.1:{link.port}"), clock=clock)
        election = sharding = None
        if sharded:
            sharding = ShardingConfig(name=GROUP, namespace=NS, shards=16, identity=name)
        else:
            election = LeaderElectionConfig(name=GROUP, namespace=NS, identity=name,
                                            release_on_cancel=True)
        mgr = Manager(client=client, clock=clock, leader_election=election, sharding=sharding,
                      graceful_shutdown_timeout=5.0)
        for cname, factory in CONTROLLERS.items():
            controller = factory(mgr, workers=workers)
            controller.reconciler = _Traced(controller.reconciler, overlaps, name, cname)
            mgr.add(controller)
        await mgr.start()
        return cls(name, link, client, mgr)

    async def stop(self) -> None:
        """Graceful (SIGTERM): drain, release the Lease / hand the shards over."""
        try:
            await self.mgr.stop()
        finally:
            await self.client.close()
            await self.link.close()

    def kill(self, overlaps: Overlaps) -> asyncio.Task[None]:
        """SIGKILL: cut off from the server at once; the remains stop in the background."""
        overlaps.dead.add(self.name)
        self.link.cut()  # it can release nothing: every request it makes now fails
        return asyncio.create_task(self.stop(), name=f"remains-{self.name}")

    @property
    def owns_work(self) -> bool:
        if self.mgr.shards is not None:
            return True
        return self.mgr.is_leader


FAULT_KINDS: dict[str, float] = {  # kind -> weight in the schedule
    "sigkill": 2, "sigterm": 2, "restart": 1.5, "wipe": 0.5, "cut": 2, "storm410": 1.5,
    "throttle429": 1.5, "burst5xx": 1.5, "conflict409": 1.5, "slow": 1, "jump": 1,
    "wall_step": 0.5,
    # Off by default (weight 0): a wipe with the replicas kept running on their stale
    # caches, which Kubernetes does not support either (docs/soak.md, "Found and left").
    "wipe_hot": 0,
}


@dataclass(frozen=True)
class Fault:
    at: float  # virtual seconds after the chaos phase starts
    kind: str
    params: dict[str, Any] = field(default_factory=dict)


def schedule(rng: random.Random, seconds: float, *, every: float,
             kinds: dict[str, float] = FAULT_KINDS) -> list[Fault]:
    """Faults at jittered intervals over `seconds` of virtual time; every kind at least once
    when there is room (the first len(kinds) faults cycle through them in a seeded order)."""
    names = [n for n, w in kinds.items() if w > 0]
    order = rng.sample(names, len(names))
    out: list[Fault] = []
    t = every * rng.uniform(0.3, 1.0)
    while t < seconds:
        kind = order[len(out)] if len(out) < len(order) else rng.choices(
            names, weights=[kinds[n] for n in names])[0]
        params: dict[str, Any] = {
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
        }.get(kind, {})
        out.append(Fault(round(t, 3), kind, params))
        t += every * rng.uniform(0.5, 1.5)
    return out


class Chaos:
    """Applies faults to the world: the server's `Faults`, its restarts, the replicas."""

    def __init__(self, *, rng: random.Random, server: ApiServer, clock: PacedClock,
                 pacer: Pacer, overlaps: Overlaps, replicas: list[Replica],
                 spawn: Callable[[], Awaitable[Replica]],
                 wiped: Callable[[], Awaitable[None]]) -> None:
        self.rng, self.server, self.clock, self.pacer = rng, server, clock, pacer
        self.overlaps, self.replicas, self.spawn, self.wiped = (
            overlaps, replicas, spawn, wiped)
        self.injected: Counter[str] = Counter()
        self.remains: list[asyncio.Task[None]] = []
        self.background: list[asyncio.Task[Any]] = []

    def _victim(self) -> Replica | None:
        owners = [r for r in self.replicas if r.owns_work]
        pool = owners or self.replicas
        return self.rng.choice(pool) if pool else None

    def _respawn_later(self, seconds: float) -> None:
        async def later() -> None:
            await self.pacer.sleep(seconds)
            self.replicas.append(await self.spawn())
        self.background.append(asyncio.create_task(later()))

    async def apply(self, fault: Fault) -> None:
        faults, p = self.server.faults, fault.params
        self.injected[fault.kind] += 1
        log.warning("soak fault", kind=fault.kind, **p)
        if fault.kind in ("sigkill", "sigterm"):
            victim = self._victim()
            if victim is None:
                return
            self.replicas.remove(victim)
            if fault.kind == "sigkill":
                self.remains.append(victim.kill(self.overlaps))
            else:
                self.remains.append(asyncio.create_task(victim.stop()))
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
            raise ValueError(fault.kind)
