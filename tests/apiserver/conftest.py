"""Fixtures for the API server tests: the asyncop test kit plus real-client helpers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from kubernetes_asyncio import client as kclient

from asyncop.apiserver import ApiServer
from asyncop.testing.fixtures import *  # noqa: F403


@pytest_asyncio.fixture
async def api(apiserver_no_sim: ApiServer) -> AsyncIterator[kclient.ApiClient]:
    """A kubernetes_asyncio ApiClient talking to a fresh server (simulators off)."""
    cfg = kclient.Configuration(host=apiserver_no_sim.url)
    async with kclient.ApiClient(cfg) as api_client:
        yield api_client
