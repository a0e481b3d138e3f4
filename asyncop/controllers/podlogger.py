"""podlogger: the minimal controller (the Go original's) — log every pod's add/update and deletion.

Read-only. For a pod in the cache it logs "Sync/Add/Update for Pod" with `pod=<ns>/<name>`
and its phase; for a key whose pod is gone, "Pod does not exist anymore" with the same field
(the original's `Pod <ns>/<name> does not exist anymore`). Resync updates with an unchanged
resourceVersion are dropped. This is the smallest complete controller: read it first.
"""

from __future__ import annotations

import structlog

from asyncop.api import Request
from asyncop.api.kinds import POD
from asyncop.controllers.common import PolicyRule
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import DEFAULT_WORKERS, Controller
from asyncop.runtime.handlers import for_, resource_version_changed
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result

log = structlog.get_logger("asyncop.controllers.podlogger")

RBAC_RULES: tuple[PolicyRule, ...] = (PolicyRule(("",), ("pods",), ("get", "list", "watch")),)


class PodLogger:
    def __init__(self, *, cache: Cache) -> None:
        self.cache = cache

    async def reconcile(self, req: Request) -> Result:
        pod = self.cache.get(POD, req.name, req.namespace)
        if pod is None:
            log.info("Pod does not exist anymore", pod=req.key)
        else:
            phase = (pod.get("status") or {}).get("phase", "")
            log.info("Sync/Add/Update for Pod", pod=req.key, phase=phase)
        return Result()


def podlogger_controller(mgr: Manager, *, workers: int = DEFAULT_WORKERS) -> Controller:
    """The `podlogger` controller: every pod in the Manager's namespaces."""
    return Controller(
        "podlogger", PodLogger(cache=mgr.cache),
        watches=[for_(POD, resource_version_changed)], workers=workers, rbac=RBAC_RULES,
    )
