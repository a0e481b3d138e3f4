"""The "Testing your own operator" example of README.md, run as written.

A tiny controller labels every ConfigMap it sees; the test drives it through a Manager against
the `apiserver` fixture and checks the end state in the API server.
"""

from __future__ import annotations

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import load_config
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.testing import eventually


def labeller(mgr: Manager) -> Controller:
    async def reconcile(req: Request) -> Result:
        cm = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
        if cm is not None and "seen" not in (cm["metadata"].get("labels") or {}):
            patch = {"metadata": {"labels": {"seen": "yes"}}}
            await mgr.client.patch(CONFIGMAP, req.name, patch, namespace=req.namespace)
        return Result()

    return Controller("labeller", reconciler(reconcile), watches=[for_(CONFIGMAP)])


async def test_my_controller(apiserver: ApiServer) -> None:
    async with Manager(config=await load_config(url=apiserver.url)) as mgr:
        mgr.add(labeller(mgr))
        await mgr.client.create(CONFIGMAP, {"metadata": {"name": "x", "namespace": "default"}})

        async def labelled() -> bool:
            cm = await mgr.client.get(CONFIGMAP, "x", namespace="default")
            return (cm["metadata"].get("labels") or {}).get("seen") == "yes"

        await eventually(labelled, timeout=20)
