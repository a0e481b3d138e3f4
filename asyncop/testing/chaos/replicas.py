"""Replicas of the operator under test, each a Manager behind its own cuttable Link.

Concept: a `Replica` is one `Manager` running the operator's controllers (built by
`Operator.install`, as `asyncop run` builds them) with its own Client, whose every
connection goes through the replica's `Link`. The replicas coordinate as deployed replicas
do: leader election on one Lease, or sharding over virtual shards (both named after the
operator, in the scenario's namespace). `kill()` is SIGKILL (the link is cut first: the
replica can release nothing), `stop()` is SIGTERM (drain, release the Lease or hand the
shards over).

Every reconciler is wrapped so that `Overlaps` sees each reconcile enter and leave: a key
(controller/namespace/name) entering a reconcile while another live replica is inside a
reconcile of the same key is the built-in `one-replica-per-key` violation. A killed replica
is cut off from the server (it can write nothing), so it is ignored from its death on.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from asyncop.api import Request
from asyncop.client import Client, ClientConfig
from asyncop.operator import Operator
from asyncop.runtime.leader import LeaderElectionConfig
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Reconciler, Result
from asyncop.runtime.sharding import ShardingConfig
from asyncop.testing.chaos.clock import PacedClock
from asyncop.testing.chaos.links import Link


@dataclass
class Overlaps:
    """Reconciles in flight per key and replica; a key in two live replicas at once is a
    violation. A killed replica is ignored from the moment of its death."""

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


class Traced:
    """A reconciler wrapper reporting each reconcile's key and replica to `Overlaps`."""

    def __init__(self, inner: Reconciler, overlaps: Overlaps, replica: str,
                 controller: str) -> None:
        self.inner, self.overlaps, self.replica, self.controller = (
            inner, overlaps, replica, controller)

    async def reconcile(self, request: Request) -> Result:
        key = f"{self.controller}/{request.namespace}/{request.name}"
        self.overlaps.enter(key, self.replica)
        try:
            return await self.inner.reconcile(request)
        finally:
            self.overlaps.leave(key, self.replica)


@dataclass(frozen=True, kw_only=True)
class ReplicaSpec:
    """How every replica of one run is built."""

    operator: Operator
    namespace: str
    sharded: bool
    shards: int
    workers: int | None


@dataclass
class Replica:
    name: str
    link: Link
    client: Client
    mgr: Manager

    @classmethod
    async def start(cls, name: str, spec: ReplicaSpec, *, port: int, clock: PacedClock,
                    overlaps: Overlaps) -> Replica:
        link = Link(port)
        await link.start()
        client = Client(ClientConfig(host=f"http://127.0.0.1:{link.port}"), clock=clock)
        election = sharding = None
        lease = spec.operator.lease_name
        if spec.sharded:
            sharding = ShardingConfig(name=lease, namespace=spec.namespace,
                                      shards=spec.shards, identity=name)
        else:
            election = LeaderElectionConfig(name=lease, namespace=spec.namespace,
                                            identity=name, release_on_cancel=True)
        mgr = Manager(client=client, clock=clock, leader_election=election, sharding=sharding,
                      graceful_shutdown_timeout=5.0)
        try:
            for controller in spec.operator.install(mgr, workers=spec.workers):
                controller.reconciler = Traced(controller.reconciler, overlaps, name,
                                               controller.name)
            await mgr.start()
        except BaseException:
            await client.close()
            await link.close()
            raise
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
