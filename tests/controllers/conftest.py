"""Fixtures for the controller tests: `clock` (a FakeClock) and `cluster` (see ctlenv)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from asyncop.testing import FakeClock
from tests.controllers.ctlenv import Cluster, start_cluster


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def cluster(clock: FakeClock) -> AsyncIterator[Cluster]:
    async with start_cluster(clock) as c:
        yield c
