"""Embedding asyncop in an aiohttp service: a Manager that lives as long as the app.

The Manager starts in the app's `cleanup_ctx` (after the app's own start-up) and stops when
the app shuts down, inside the same event loop — no threads, no signal handlers of its own
(aiohttp owns those). The controller here is the smallest useful one: it stamps every
ConfigMap labelled `greeting=yes` with an annotation and records an Event; the app serves
`/status` with what the Manager is doing.

Run it against any cluster (or `asyncop apiserver --kubeconfig-out /tmp/kc`):

    python examples/aiohttp_embedding.py --kubeconfig /tmp/kc
    kubectl --kubeconfig /tmp/kc create configmap hello && \\
        kubectl --kubeconfig /tmp/kc label configmap hello greeting=yes
    curl localhost:8000/status
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator

from aiohttp import web

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.client import ClientConfig, load_config
from asyncop.clock import Clock
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, label_selector
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result, reconciler

ANNOTATION = "example.asyncop.io/greeted"
MANAGER = web.AppKey("manager", Manager)
GREETED = web.AppKey("greeted", list)


def greeter(mgr: Manager, greeted: list[str]) -> Controller:
    events = mgr.recorder("greeter")

    async def reconcile(req: Request) -> Result:
        cm = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
        if cm is None:
            return Result()  # deleted: nothing to do
        if (cm["metadata"].get("annotations") or {}).get(ANNOTATION) != "true":
            patch = {"metadata": {"annotations": {ANNOTATION: "true"}}}
            await mgr.client.patch(CONFIGMAP, req.name, patch, namespace=req.namespace)
            events.event(cm, "Normal", "Greeted", "hello from the embedded manager",
                         kind=CONFIGMAP)
            greeted.append(req.key)
        return Result()

    return Controller("greeter", reconciler(reconcile),
                      watches=[for_(CONFIGMAP, label_selector({"greeting": "yes"}))])


def create_app(*, config: ClientConfig, clock: Clock | None = None) -> web.Application:
    app = web.Application()
    app[GREETED] = []

    async def manager_ctx(app: web.Application) -> AsyncIterator[None]:
        mgr = Manager(config=config, clock=clock)
        mgr.add(greeter(mgr, app[GREETED]))
        app[MANAGER] = mgr
        await mgr.start()
        yield
        await mgr.stop()

    async def status(request: web.Request) -> web.Response:
        mgr = request.app[MANAGER]
        return web.json_response({
            "leader": mgr.is_leader,
            "synced": mgr.cache.has_synced,
            "greeted": request.app[GREETED],
        })

    app.cleanup_ctx.append(manager_ctx)
    app.router.add_get("/status", status)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    config = asyncio.run(load_config(kubeconfig=args.kubeconfig))
    web.run_app(create_app(config=config), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
