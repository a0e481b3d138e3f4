"""asyncop: an asyncio toolkit for Kubernetes operators, with an embedded API server.

The names a newcomer needs, all importable from here (`from asyncop import Manager`):

- the reconcile contract: `Request`, `Result`, `Reconciler`, `TerminalError`, `reconciler`;
- what to watch: `for_`, `owns`, `watches` and the predicates `generation_changed`,
  `resource_version_changed`, `label_selector`, `annotation_changed`;
- running it: `Controller`, `Manager`, `LeaderElectionConfig`, and the RBAC a controller
  declares, `PolicyRule`;
- talking to the cluster: `Client`, `ClientConfig`, `load_config`, and the cache the
  controllers share: `Cache`, `Informer`, `Store`, `WorkQueue`, `EventRecorder`, `Metrics`;
- data and time: `Kind`, `RawObject`, `Clock`, `RealClock`, and the `ApiError` tree.

Reading order: README → this file → `runtime/reconcile.py` → a controller in
`controllers/` → `runtime/controller.py` → `runtime/workqueue.py` → `runtime/informer.py` +
`store.py` → `runtime/manager.py` → `cli.py`.

This is the one public door: `asyncop.runtime` is a package of modules and re-exports nothing
(import a name from here, or from the module that defines it).

Invariant: `import asyncop` stays cheap. The pure data (`asyncop.api`) and the clock load at
once; the runtime and client names (which pull in aiohttp and kubernetes_asyncio) load on
first access, so `import asyncop.apiserver` or `asyncop.api` does not pay for them. This
module is the package root, outside the import-linter layers; nothing below `cli` imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from asyncop.api import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    Kind,
    MethodNotAllowed,
    NotFound,
    RawObject,
    Request,
    ServerError,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
)
from asyncop.clock import Clock, RealClock

if TYPE_CHECKING:
    from asyncop.client import Client, ClientConfig, load_config
    from asyncop.runtime.cache import Cache
    from asyncop.runtime.controller import Controller
    from asyncop.runtime.handlers import (
        annotation_changed,
        for_,
        generation_changed,
        label_selector,
        owns,
        resource_version_changed,
        watches,
    )
    from asyncop.runtime.informer import Informer
    from asyncop.runtime.leader import LeaderElectionConfig
    from asyncop.runtime.manager import Manager
    from asyncop.runtime.metrics import Metrics
    from asyncop.runtime.rbac import PolicyRule
    from asyncop.runtime.reconcile import Reconciler, Result, TerminalError, reconciler
    from asyncop.runtime.recorder import EventRecorder
    from asyncop.runtime.store import Store
    from asyncop.runtime.workqueue import WorkQueue

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "Client": "asyncop.client",
    "ClientConfig": "asyncop.client",
    "load_config": "asyncop.client",
    "Cache": "asyncop.runtime.cache",
    "Controller": "asyncop.runtime.controller",
    **{name: "asyncop.runtime.handlers" for name in (
        "annotation_changed", "for_", "generation_changed", "label_selector", "owns",
        "resource_version_changed", "watches")},
    "Informer": "asyncop.runtime.informer",
    "LeaderElectionConfig": "asyncop.runtime.leader",
    "Manager": "asyncop.runtime.manager",
    "Metrics": "asyncop.runtime.metrics",
    "PolicyRule": "asyncop.runtime.rbac",
    **{name: "asyncop.runtime.reconcile" for name in (
        "Reconciler", "Result", "TerminalError", "reconciler")},
    "EventRecorder": "asyncop.runtime.recorder",
    "Store": "asyncop.runtime.store",
    "WorkQueue": "asyncop.runtime.workqueue",
}


def __getattr__(name: str) -> Any:
    """Load a runtime or client name on first access (PEP 562), then keep it here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'asyncop' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Cache",
    "Client",
    "ClientConfig",
    "Clock",
    "Conflict",
    "Controller",
    "EventRecorder",
    "Forbidden",
    "Gone",
    "Informer",
    "Invalid",
    "Kind",
    "LeaderElectionConfig",
    "Manager",
    "MethodNotAllowed",
    "Metrics",
    "NotFound",
    "PolicyRule",
    "RawObject",
    "RealClock",
    "Reconciler",
    "Request",
    "Result",
    "ServerError",
    "Store",
    "TerminalError",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "WorkQueue",
    "__version__",
    "annotation_changed",
    "for_",
    "generation_changed",
    "label_selector",
    "load_config",
    "owns",
    "reconciler",
    "resource_version_changed",
    "watches",
]
