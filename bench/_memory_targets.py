"""Operator targets for bench/memory.py (`asyncop run bench/_memory_targets.py ...`).

`podmeta`: every pod, metadata only (`for_(POD, metadata_only=True)`), reading each pod's
labels in its reconcile: the memory of a metadata-only cache per object.
"""

from __future__ import annotations

from asyncop.api import Request
from asyncop.api.kinds import POD
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result

META = POD.metadata()


class PodLabels:
    def __init__(self, mgr: Manager) -> None:
        self.cache = mgr.cache
        self.seen = 0

    async def reconcile(self, req: Request) -> Result:
        pod = self.cache.get(META, req.name, req.namespace)
        if pod is not None and pod["metadata"].get("labels"):
            self.seen += 1
        return Result()


def podmeta(mgr: Manager) -> Controller:
    return Controller("podmeta", PodLabels(mgr), watches=[for_(POD, metadata_only=True)])


CONTROLLERS = {"podmeta": podmeta}
