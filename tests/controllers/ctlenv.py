"""Helpers for the controller tests: an embedded API server with the CRDs, on a FakeClock.

`cluster` is a running ApiServer (simulators on, pods finish 1 virtual second after they
start) with every bundled CRD installed, a Client, and helpers to run controllers in a
Manager and to wait on the server's state. Time only moves when a test advances the clock;
real I/O is awaited with `eventually`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from asyncop.api import Kind, NotFound, RawObject
from asyncop.api.kinds import CRD, EVENT
from asyncop.apiserver import ApiServer
from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.client import Client, ClientConfig
from asyncop.controllers.crds import load_crds
from asyncop.runtime.controller import Controller
from asyncop.runtime.manager import Manager
from asyncop.testing import FakeClock, eventually

ROOT = Path(__file__).resolve().parents[2]
NS = "default"


@dataclass
class Cluster:
    server: ApiServer
    client: Client
    clock: FakeClock
    controllers: dict[str, Controller] = field(default_factory=dict)

    async def get(self, kind: Kind, name: str, namespace: str = NS) -> RawObject | None:
        try:
            return await self.client.get(kind, name, namespace=namespace)
        except NotFound:
            return None

    async def items(self, kind: Kind, namespace: str = NS, **kw: Any) -> list[RawObject]:
        items: list[RawObject] = (await self.client.list(kind, namespace=namespace, **kw))[
            "items"
        ]
        return items

    async def wait(
        self, kind: Kind, name: str, check: Callable[[RawObject], Any], *,
        namespace: str = NS, timeout: float = 10.0,
    ) -> RawObject:
        """Poll the server until `check(obj)` is truthy; return the object."""
        async def probe() -> RawObject | None:
            obj = await self.get(kind, name, namespace)
            return obj if obj is not None and check(obj) else None

        found: RawObject = await eventually(probe, timeout=timeout,
                                            message=f"{kind.kind} {name} condition")
        return found

    async def events(self, name: str, reason: str | None = None) -> list[RawObject]:
        return [
            e for e in await self.items(EVENT)
            if e.get("involvedObject", {}).get("name") == name
            and (reason is None or e.get("reason") == reason)
        ]

    async def idle(self, name: str) -> None:
        """Wait until controller `name` has no key queued or in a worker (delayed is fine)."""
        await self.clock.settle()

        def quiet() -> bool:
            q = self.controllers[name].queue
            return q is not None and len(q) == 0 and q.processing == 0

        await eventually(quiet, timeout=10, message=f"{name} idle")
        await self.clock.settle()
        await eventually(quiet, timeout=10, message=f"{name} idle")

    async def drive(self, check: Callable[[], Awaitable[Any]], *, step: float = 0.5,
                    limit: float = 60.0) -> Any:
        """Alternate virtual time (`step` seconds) and real I/O until `check()` is truthy.

        For flows that wait on both: client retries and backoffs sleep on the clock, while
        the API server's answers need real time.
        """
        moved = 0.0
        while True:
            try:
                return await eventually(check, timeout=0.2, message="drive")
            except AssertionError:
                if moved >= limit:
                    raise
            await self.clock.advance(step)
            moved += step

    @asynccontextmanager
    async def manager(self, *factories: Callable[[Manager], Controller]
                      ) -> AsyncIterator[Manager]:
        mgr = Manager(client=self.client, clock=self.clock)
        names = []
        for factory in factories:
            ctrl = factory(mgr)
            self.controllers[ctrl.name] = ctrl
            names.append(ctrl.name)
            mgr.add(ctrl)
        await mgr.start()
        try:
            ctrls = [self.controllers[n] for n in names]
            await eventually(
                lambda: all(c.queue is not None for c in ctrls)
                and bool(mgr.cache.informers()) and mgr.cache.has_synced,
                timeout=10, message="controllers started and caches synced",
            )
            yield mgr
        finally:
            # A worker may sleep on virtual time (a client retry, a backoff): keep the clock
            # moving until the Manager has drained, or stop() would wait for it forever.
            stopping = asyncio.ensure_future(mgr.stop())
            while not (await asyncio.wait({stopping}, timeout=0.5))[0]:
                await self.clock.advance(1.0)
            await stopping




async def _established(client: Client, name: str) -> bool:
    crd = await client.get(CRD, name)
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions", []))


@asynccontextmanager
async def start_cluster(clock: FakeClock, *, pod_run_duration: float = 1.0
                        ) -> AsyncIterator[Cluster]:
    """An ApiServer with the simulators and every bundled CRD, and a Client to it."""
    sims = SimulatorConfig(pod_run_duration=pod_run_duration, resync_period=3600.0)
    async with ApiServer(clock=clock, simulators=sims) as server:
        async with Client(ClientConfig(host=server.url), clock=clock) as client:
            for crd in load_crds():
                await client.create(CRD, crd)
            for crd in load_crds():
                await eventually(lambda name=crd["metadata"]["name"]: _established(client, name),
                                 timeout=10, message="CRD established")
            yield Cluster(server, client, clock)


def samples() -> list[RawObject]:
    """Every object in the repository's samples/*.yaml."""
    docs: list[RawObject] = []
    for path in sorted(ROOT.glob("samples/*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def phase(obj: RawObject) -> Any:
    return (obj.get("status") or {}).get("phase")
