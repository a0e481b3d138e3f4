"""pytest fixtures for testing against the embedded API server.

`apiserver` (simulators on) and `apiserver_no_sim` start a fresh ApiServer on a free port per
test and stop it afterwards; `apiserver_on_fake_clock` is `apiserver` running on the test's
`fake_clock` (its simulators, timestamps and watches move only when the test moves the clock;
`run_operator` then runs the operator on that clock too); `kubeconfig` writes a kubeconfig
for `apiserver` under tmp_path; `fake_clock` is a FakeClock (a fresh one per test, starting at
2026-01-01T00:00:00Z). Installing asyncop registers them (the `pytest11` entry point);
without that, load them with `pytest_plugins = ["asyncop.testing.fixtures"]` in a conftest.

Invariant: every server a fixture starts is stopped when its test ends, whatever the test did.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.testing.clock import FakeClock

__all__ = ["apiserver", "apiserver_no_sim", "apiserver_on_fake_clock", "fake_clock", "kubeconfig"]


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest_asyncio.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    server = ApiServer(simulators=True)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest_asyncio.fixture
async def apiserver_on_fake_clock(fake_clock: FakeClock) -> AsyncIterator[ApiServer]:
    server = ApiServer(simulators=True, clock=fake_clock)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest_asyncio.fixture
async def apiserver_no_sim() -> AsyncIterator[ApiServer]:
    server = ApiServer(simulators=False)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def kubeconfig(apiserver: ApiServer, tmp_path: Path) -> Path:
    return apiserver.write_kubeconfig(tmp_path / "kubeconfig")
