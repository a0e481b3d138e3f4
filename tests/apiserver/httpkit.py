"""Raw-HTTP helpers for the API server tests: an aiohttp session fixture and `call`.

Invariant: `call` reads the whole answer and decodes it as JSON, so every response the
server sends back (objects, lists, Status errors) is checked as the client would see it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest_asyncio

from asyncop.testing import eventually


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    """A plain aiohttp session (no Kubernetes client in between)."""
    async with aiohttp.ClientSession() as session:
        yield session


async def call(http: aiohttp.ClientSession, method: str, url: str, **kw: Any,
               ) -> tuple[int, dict[str, Any]]:
    """The status code and the decoded JSON body of one request."""
    async with http.request(method, url, **kw) as r:
        return r.status, orjson.loads(await r.read())


async def install_crd(http: aiohttp.ClientSession, base: str, crd: dict[str, Any],
                      served_path: str) -> None:
    """Create `crd` and wait (on the condition, not a fixed time) until `served_path` lists."""
    code, body = await call(http, "POST",
                            base + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                            json=crd)
    assert code == 201, body

    async def served() -> bool:
        return (await call(http, "GET", base + served_path))[0] == 200

    await eventually(served, timeout=5, message=f"{served_path} is not served")
