"""The asyncop runtime: clock-driven work queue, informers, controllers and the Manager.

One concept per module; the names a newcomer needs are re-exported here. Reading order:
`reconcile` → `controller` → `workqueue` → `informer` + `store` → `cache` → `manager`.
"""

from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import (
    Predicate,
    Watch,
    annotation_changed,
    for_,
    generation_changed,
    label_selector,
    owns,
    resource_version_changed,
    watches,
)
from asyncop.runtime.health import Health, LoopLagProbe
from asyncop.runtime.informer import Informer
from asyncop.runtime.leader import LeaderElectionConfig, LeaderElector
from asyncop.runtime.logs import configure_logging
from asyncop.runtime.manager import LeaderElectionLost, Manager, Runnable
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from asyncop.runtime.reconcile import Reconciler, Result, TerminalError, reconciler
from asyncop.runtime.recorder import EventRecorder
from asyncop.runtime.store import Store
from asyncop.runtime.workqueue import ShutDown, WorkQueue

__all__ = [
    "BucketRateLimiter",
    "Cache",
    "Controller",
    "EventRecorder",
    "Health",
    "Informer",
    "ItemExponentialFailureRateLimiter",
    "LeaderElectionConfig",
    "LeaderElectionLost",
    "LeaderElector",
    "LoopLagProbe",
    "Manager",
    "MaxOfRateLimiter",
    "Metrics",
    "Predicate",
    "RateLimiter",
    "Reconciler",
    "Result",
    "Runnable",
    "ShutDown",
    "Store",
    "TerminalError",
    "Watch",
    "WorkQueue",
    "annotation_changed",
    "configure_logging",
    "default_controller_rate_limiter",
    "for_",
    "generation_changed",
    "label_selector",
    "owns",
    "reconciler",
    "resource_version_changed",
    "watches",
]
