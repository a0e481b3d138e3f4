"""A CPU-heavy At operator for bench/sharding.py's `heavy` case.

The bundled At controller, unchanged, except that every reconcile first spends `HEAVY_MS`
milliseconds of CPU (default 4) in a busy loop: an operator whose own work, not the API
server, is the bottleneck. Run as `asyncop run bench/peers/heavy_at.py:OPERATOR`.
"""

from __future__ import annotations

import os
import time

from asyncop.api import Request
from asyncop.controllers.at import At, at_controller
from asyncop.operator import Operator
from asyncop.runtime.controller import DEFAULT_WORKERS, Controller
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Reconciler, Result

BURN = float(os.environ.get("HEAVY_MS", "4")) / 1000


def burn(seconds: float) -> None:
    """Spend `seconds` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Heavy:
    def __init__(self, inner: Reconciler) -> None:
        self.inner = inner

    async def reconcile(self, req: Request) -> Result:
        burn(BURN)
        return await self.inner.reconcile(req)


def heavy_at(mgr: Manager, *, workers: int = DEFAULT_WORKERS) -> Controller:
    ctrl = at_controller(mgr, workers=workers)
    ctrl.reconciler = Heavy(ctrl.reconciler)
    return ctrl


OPERATOR = Operator(name="heavy-at", controllers={"at": heavy_at}, resources=[At])
