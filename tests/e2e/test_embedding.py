"""examples/aiohttp_embedding.py against the embedded ApiServer: start, reconcile, clean stop."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
from aiohttp import web

from asyncop.api.kinds import CONFIGMAP, EVENT
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.testing import FakeClock, eventually

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "aiohttp_embedding.py"


def load_example() -> ModuleType:
    """The example as a module, its bytecode not cached: an examples/__pycache__ created in
    the checkout would change it while test_tutorial, on another worker, checks that it is
    untouched."""
    spec = importlib.util.spec_from_file_location("aiohttp_embedding", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = dont_write
    return module


def leftover(before: set[asyncio.Task[Any]]) -> set[asyncio.Task[Any]]:
    """Tasks started since `before`, except the embedded ApiServer's connection handlers."""
    return {
        t for t in asyncio.all_tasks() - before
        if not t.get_coro().__qualname__.startswith("RequestHandler.")  # type: ignore[union-attr]
    }


async def test_embedded_manager_reconciles_and_stops_with_the_app() -> None:
    example = load_example()
    async with ApiServer(simulators=False) as srv:
        before = asyncio.all_tasks()
        app = example.create_app(config=ClientConfig(host=srv.url), clock=FakeClock())
        runner = web.AppRunner(app, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        async with Client(ClientConfig(host=srv.url)) as client:
            await client.create(CONFIGMAP, {"metadata": {
                "name": "hello", "namespace": "default", "labels": {"greeting": "yes"}}})
            await client.create(CONFIGMAP, {"metadata": {"name": "quiet", "namespace": "default"}})

            async def annotated(name: str) -> bool:
                cm = await client.get(CONFIGMAP, name, namespace="default")
                return (cm["metadata"].get("annotations") or {}).get(example.ANNOTATION) == "true"

            await eventually(lambda: annotated("hello"), timeout=10)
            async with aiohttp.ClientSession() as http:
                async with http.get(f"http://127.0.0.1:{port}/status") as r:
                    status = await r.json()
            assert status == {"leader": True, "synced": True, "greeted": ["default/hello"]}
            assert not await annotated("quiet")  # filtered by the label predicate
            await runner.cleanup()  # the app shuts down: the Manager stops with it
            assert leftover(before) == set()
            events = (await client.list(EVENT, namespace="default"))["items"]
            assert [(e["reason"], e["involvedObject"]["name"]) for e in events] == [
                ("Greeted", "hello")]
