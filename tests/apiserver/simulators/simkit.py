"""Helpers for the simulator tests: a store with the simulators running, `quiesce`, and
`cancel_all` (cancel tasks and wait until they are gone)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from asyncop.apiserver.simulators import SimulatorConfig, start_simulators
from asyncop.apiserver.storage.store import Store
from asyncop.clock import Clock


@dataclass
class Sim:
    store: Store
    clock: Any
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def rt(self, group: str, version: str, plural: str) -> Any:
        return self.store.resolve(group, version, plural)


async def quiesce(turns: int = 300) -> None:
    for _ in range(turns):
        await asyncio.sleep(0)


async def started(clock: Clock, config: SimulatorConfig) -> Sim:
    store = Store(clock=clock, seed=7)
    sim = Sim(store, clock)
    sim.tasks = start_simulators(store, clock, config)
    await quiesce(5)
    return sim


async def cancel_all(tasks: Iterable[asyncio.Task[Any]]) -> None:
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def stop(sim: Sim) -> None:
    await cancel_all(sim.tasks)
