"""Helpers for the reliability tests: a world of the six bundled operators under trouble.

`World` is an embedded ApiServer (simulators on, FakeClock) with every bundled CRD, a Client,
and a `Ledger` that follows the server's own event stream (the in-process subscription, which
survives watch cuts, 410s and restarts with state kept) from before the first object exists:
it counts every creation by name, so "nothing was created twice" is checked on what the
server committed, not on what an operator says it did.

End state is read from the server's store in-process (no HTTP), so checks are unaffected by
injected faults. `problems()` computes, for every custom object, what its LATEST spec
implies and lists each mismatch (empty = converged). Networks carry the verdict they expect
in the annotation `EXPECT_READY`, so a spec update states its own expected outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from asyncop.api import Kind, RawObject
from asyncop.api.kinds import CRD, DEPLOYMENT, POD, SERVICE
from asyncop.apiserver import ApiServer
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.client import Client, ClientConfig
from asyncop.controllers.at import parse_schedule
from asyncop.controllers.crds import load_crds
from asyncop.controllers.kinds import AT, CRDKIND, FOO, JINGHZHU, NETWORK
from asyncop.controllers.registry import CONTROLLERS
from asyncop.runtime.controller import Controller
from asyncop.runtime.leader import LeaderElectionConfig
from asyncop.runtime.manager import Manager
from asyncop.testing import FakeClock, eventually
from asyncop.testing.chaos.bundled.invariants import worker_problems

NS = "default"
ROOT = Path(__file__).resolve().parents[2]
EXPECT_READY = "reliability.asyncop.io/expect-ready"
KINDS = {k.kind: k for k in (AT, FOO, NETWORK, CRDKIND, JINGHZHU)}
CHOICE_PORT = {"mysql": 3306, "tomcat": 8080}


@dataclass
class Ledger:
    """What the server committed, from its event stream: creations and live worker pods."""

    created: Counter[tuple[str, str]] = field(default_factory=Counter)  # (plural, name)
    live: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # crd label
    max_live: Counter[str] = field(default_factory=Counter)
    worker_creates: Counter[str] = field(default_factory=Counter)

    def record(self, type_: str, rt: ResourceType, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        name = meta.get("name", "")
        if type_ == "ADDED":
            self.created[(rt.plural, name)] += 1
        if rt.group != "" or rt.plural != "pods":
            return
        owner = (meta.get("labels") or {}).get("crd")
        if owner is None:
            return
        if type_ == "ADDED":
            self.worker_creates[owner] += 1
        phase = (obj.get("status") or {}).get("phase")
        if type_ == "DELETED" or meta.get("deletionTimestamp") or phase in (
                "Failed", "Succeeded"):
            self.live[owner].discard(name)
        else:
            self.live[owner].add(name)
            self.max_live[owner] = max(self.max_live[owner], len(self.live[owner]))


@dataclass
class World:
    server: ApiServer
    client: Client
    clock: FakeClock
    ledger: Ledger
    #: the controllers of the Manager made last by `new_manager`, by name
    controllers: dict[str, Controller] = field(default_factory=dict)

    def rt(self, kind: Kind) -> ResourceType:
        rt = self.server.store.registry.resolve(kind.group, kind.version, kind.plural)
        assert rt is not None, kind
        return rt

    def get(self, kind: Kind, name: str) -> RawObject | None:
        obj: RawObject | None = self.server.store.get(self.rt(kind), NS, name)  # type: ignore[assignment]
        return obj

    def items(self, kind: Kind) -> list[RawObject]:
        return list(self.server.store.list(self.rt(kind), NS))  # type: ignore[arg-type]

    async def create(self, obj: RawObject) -> None:
        await self.server.store.create(self.rt(KINDS[obj["kind"]]), dict(obj), namespace=NS)

    async def set_spec(self, kind: Kind, name: str, *, annotations: dict[str, str] | None = None,
                       **spec: Any) -> None:
        """Change spec fields in the store (the same code path as an HTTP update)."""
        found = self.server.store.get(self.rt(kind), NS, name)
        assert found is not None, name
        found["spec"].update(spec)
        if annotations is not None:
            found["metadata"]["annotations"] = dict(annotations)
        await self.server.store.update(self.rt(kind), found)

    async def drive(self, check: Callable[[], list[str]], *, step: float = 0.5,
                    limit: float = 240.0, settle: float = 0.15) -> None:
        """Alternate virtual time and real I/O until `check()` reports no problem."""
        moved = 0.0
        while True:
            try:
                await eventually(lambda: not check(), timeout=settle, interval=0.01)
                return
            except AssertionError:
                if moved >= limit:
                    raise AssertionError(
                        f"not converged after {moved}s virtual: {check()}") from None
            await self.clock.advance(step)
            moved += step


def samples() -> list[RawObject]:
    docs: list[RawObject] = []
    for path in sorted(ROOT.glob("samples/*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    for doc in docs:
        if doc["kind"] == "Network":
            ready = "False" if doc["metadata"]["name"].endswith("invalid") else "True"
            doc["metadata"]["annotations"] = {EXPECT_READY: ready}
    return docs


def obj(kind: Kind, name: str, spec: dict[str, Any], **annotations: str) -> RawObject:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        meta["annotations"] = dict(annotations)
    out: RawObject = {"apiVersion": kind.api_version, "kind": kind.kind, "spec": spec}
    out["metadata"] = meta  # type: ignore[typeddict-item]
    return out


def network(name: str, cidr: str, gateway: str, ready: bool) -> RawObject:
    return obj(NETWORK, name, {"cidr": cidr, "gateway": gateway},
               **{EXPECT_READY: "True" if ready else "False"})


async def _established(client: Client, name: str) -> bool:
    crd = await client.get(CRD, name)
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions", []))


@contextlib.asynccontextmanager
async def start_world(clock: FakeClock) -> AsyncIterator[World]:
    sims = SimulatorConfig(pod_run_duration=1.0, resync_period=3600.0)
    async with ApiServer(clock=clock, simulators=sims) as server:
        ledger = Ledger()

        async def follow() -> None:
            async for type_, rt, item in server.store.subscribe():
                ledger.record(type_, rt, item)

        follower = asyncio.ensure_future(follow())
        try:
            async with Client(ClientConfig(host=server.url), clock=clock) as client:
                for crd in load_crds():
                    await client.create(CRD, crd)
                names = [crd["metadata"]["name"] for crd in load_crds()]

                async def established() -> bool:
                    return all([await _established(client, n) for n in names])
                ok: bool = await eventually(established, timeout=10, message="CRDs established")
                assert ok
                yield World(server, client, clock, ledger)
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower


def new_manager(world: World, *, identity: str | None = None,
                release_on_cancel: bool = False) -> Manager:
    """A Manager running all six bundled controllers (with leader election if `identity`;
    by default a stopped leader keeps its lease, as if its process died)."""
    election = None
    if identity is not None:
        election = LeaderElectionConfig(name="asyncop-reliability", namespace=NS,
                                        identity=identity,
                                        release_on_cancel=release_on_cancel)
    mgr = Manager(client=world.client, clock=world.clock, leader_election=election)
    world.controllers = {}
    for name, factory in CONTROLLERS.items():
        world.controllers[name] = factory(mgr, workers=2)
        mgr.add(world.controllers[name])
    return mgr


async def stop_manager(world: World, mgr: Manager) -> None:
    """Stop, moving the clock meanwhile: a worker may sleep on virtual time (a backoff)."""
    stopping = asyncio.ensure_future(mgr.stop())
    while not (await asyncio.wait({stopping}, timeout=0.2))[0]:
        await world.clock.advance(1.0)
    await stopping


def errors(mgr: Manager, controller: str) -> float:
    """controller_runtime_reconcile_errors_total of one controller, from the Manager."""
    value = mgr.metrics.registry.get_sample_value(
        "controller_runtime_reconcile_errors_total", {"controller": controller})
    return float(value or 0.0)


@contextlib.asynccontextmanager
async def running(world: World) -> AsyncIterator[Manager]:
    mgr = new_manager(world)
    await mgr.start()
    try:
        yield mgr
    finally:
        await stop_manager(world, mgr)


# --- what the latest specs imply -----------------------------------------------------------


def _owned_by(child: RawObject | None, owner: RawObject) -> bool:
    if child is None or child["metadata"].get("deletionTimestamp"):
        return False
    return any(r.get("uid") == owner["metadata"]["uid"] and r.get("controller")
               for r in child["metadata"].get("ownerReferences") or [])


def _observed(o: RawObject) -> bool:
    return (o.get("status") or {}).get("observedGeneration") == o["metadata"].get("generation")


def live_workers(world: World, jh: RawObject) -> list[RawObject]:
    return [p for p in world.items(POD)
            if (p["metadata"].get("labels") or {}).get("crd") == jh["metadata"]["name"]
            and _owned_by(p, jh)
            and (p.get("status") or {}).get("phase") not in ("Failed", "Succeeded")]


def problems(world: World, *, skip: Iterable[str] = ()) -> list[str]:
    """Every way the server's state differs from what the latest specs imply."""
    skipped = set(skip)
    out: list[str] = []
    for foo in world.items(FOO):
        name, spec = foo["metadata"]["name"], foo["spec"]
        if name in skipped:
            continue
        dep = world.get(DEPLOYMENT, spec["deploymentName"])
        want = spec["replicas"]
        if not _owned_by(dep, foo) or dep is None:
            out.append(f"foo {name}: no deployment")
        elif dep["spec"]["replicas"] != want:
            out.append(f"foo {name}: deployment replicas {dep['spec']['replicas']} != {want}")
        elif (foo.get("status") or {}).get("availableReplicas") != want or not _observed(foo):
            out.append(f"foo {name}: status {foo.get('status')}")
    for ck in world.items(CRDKIND):
        name, spec = ck["metadata"]["name"], ck["spec"]
        child = f"{name}-{spec['choice']}"
        dep, svc = world.get(DEPLOYMENT, child), world.get(SERVICE, child)
        status = ck.get("status") or {}
        stale = [f"{name}-{c}" for c in CHOICE_PORT if c != spec["choice"]]
        if not _owned_by(dep, ck) or dep is None or dep["spec"]["replicas"] != spec["replicas"]:
            out.append(f"crdkind {name}: deployment {child} {dep and dep['spec']}")
        elif not _owned_by(svc, ck) or svc is None or svc["spec"]["ports"][0]["port"] != (
                CHOICE_PORT[spec["choice"]]):
            out.append(f"crdkind {name}: service {child}")
        elif any(world.get(k, s) is not None for s in stale for k in (DEPLOYMENT, SERVICE)):
            out.append(f"crdkind {name}: old children {stale} still there")
        elif (status.get("deployment") != child or status.get("readyReplicas")
              != spec["replicas"] or not _observed(ck)):
            out.append(f"crdkind {name}: status {status}")
    for jh in world.items(JINGHZHU):
        name, want = jh["metadata"]["name"], jh["spec"]["desired"]
        workers = live_workers(world, jh)
        status = jh.get("status") or {}
        running = all((p.get("status") or {}).get("phase") == "Running" for p in workers)
        if len(workers) != want or not running:
            out.append(f"jinghzhu {name}: {len(workers)} workers (running={running}) != {want}")
        elif (status.get("current") != want or status.get("state") != "Running"
              or sorted(status.get("podList") or []) != sorted(
                  p["metadata"]["name"] for p in workers) or not _observed(jh)):
            out.append(f"jinghzhu {name}: status {status}")
    for net in world.items(NETWORK):
        name = net["metadata"]["name"]
        want = net["metadata"]["annotations"][EXPECT_READY]
        conds = [c for c in (net.get("status") or {}).get("conditions") or []
                 if c.get("type") == "Ready"]
        if not conds or conds[0].get("status") != want or not _observed(net):
            out.append(f"network {name}: {net.get('status')} (want Ready={want})")
    for at in world.items(AT):
        name, status = at["metadata"]["name"], at.get("status") or {}
        if name in skipped:
            continue
        if parse_schedule(at["spec"]["schedule"]) > world.clock.now():
            if status.get("phase") != "PENDING" or not _observed(at):
                out.append(f"at {name}: {status} (not due yet)")
        elif status.get("phase") != "DONE" or status.get("result") != "Succeeded":
            out.append(f"at {name}: {status}")
    return out


def at_most_once(world: World, *, desired_history: dict[str, list[int]]) -> list[str]:
    """Nothing created twice: one pod per At, one creation per deterministic name, and
    Jinghzhu workers never above the largest desired nor created beyond the scale-ups."""
    ledger = world.ledger
    out: list[str] = []
    for at in world.items(AT):
        pod = f"{at['metadata']['name']}-pod"
        if parse_schedule(at["spec"]["schedule"]) > world.clock.now():
            if ledger.created[("pods", pod)]:
                out.append(f"{pod} created before its schedule")
        elif ledger.created[("pods", pod)] != 1:
            out.append(f"{pod} created {ledger.created[('pods', pod)]} times")
    for (plural, name), n in ledger.created.items():
        # Events and Leases are recreated by design; every namespace gets its own
        # ServiceAccount `default` from the cluster (names are counted across namespaces).
        if n > 1 and plural not in ("events", "leases", "serviceaccounts"):
            out.append(f"{plural}/{name} created {n} times")
    for name, history in desired_history.items():
        out += worker_problems(name, created=ledger.worker_creates[name],
                               max_live=ledger.max_live[name], desired=history)
    return out
