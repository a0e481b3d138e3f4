"""Fixtures for the simulator tests: an in-process store with the simulators running.

`sim` runs them on the real clock (progress is awaited with `eventually`); `fake_sim` runs them
on a FakeClock for the timing tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.clock import RealClock
from asyncop.testing import FakeClock
from tests.apiserver.simulators.simkit import Sim, started, stop


@pytest.fixture
def sim_config() -> SimulatorConfig:
    return SimulatorConfig()


@pytest.fixture
async def sim(sim_config: SimulatorConfig) -> AsyncIterator[Sim]:
    s = await started(RealClock(), sim_config)
    yield s
    await stop(s)


@pytest.fixture
async def fake_sim(sim_config: SimulatorConfig) -> AsyncIterator[Sim]:
    s = await started(FakeClock(), sim_config)
    yield s
    await stop(s)
