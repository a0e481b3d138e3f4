"""pytest fixtures for testing against the embedded API server.

`apiserver` (simulators on) and `apiserver_no_sim` start a fresh ApiServer on a free port per
test and stop it afterwards; `kubeconfig` writes a kubeconfig for it under tmp_path;
`fake_clock` is a FakeClock. Load with `pytest_plugins = ["asyncop.testing.fixtures"]` or
`from asyncop.testing.fixtures import *` in a conftest.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.testing.clock import FakeClock

__all__ = ["apiserver", "apiserver_no_sim", "fake_clock", "kubeconfig"]


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
