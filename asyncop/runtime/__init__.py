"""The asyncop runtime: clock-driven work queue, informers, controllers and the Manager.

One concept per module; the names a newcomer needs are re-exported here, including the ones
a controller uses from the layers below (`Request`, `Kind`, `RawObject` and the `ApiError`
tree from `asyncop.api`, `Client`/`load_config` from `asyncop.client`, `Clock`/`RealClock`).
Reading order: `reconcile` → `controller` → `workqueue` → `informer` + `store` → `cache` →
`manager`.
"""

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
from asyncop.client import Client, ClientConfig, load_config
from asyncop.clock import Clock, RealClock
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
from asyncop.runtime.listeners import Registration
from asyncop.runtime.logs import configure_logging
from asyncop.runtime.manager import LeaderElectionLost, Manager, Runnable
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.progress import NotWatched
from asyncop.runtime.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from asyncop.runtime.rbac import PolicyRule
from asyncop.runtime.reconcile import Reconciler, Result, TerminalError, reconciler
from asyncop.runtime.recorder import EventRecorder
from asyncop.runtime.store import Store
from asyncop.runtime.workqueue import ShutDown, WorkQueue

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "BucketRateLimiter",
    "Cache",
    "Client",
    "ClientConfig",
    "Clock",
    "Conflict",
    "Controller",
    "EventRecorder",
    "Forbidden",
    "Gone",
    "Health",
    "Informer",
    "Invalid",
    "ItemExponentialFailureRateLimiter",
    "Kind",
    "LeaderElectionConfig",
    "LeaderElectionLost",
    "LeaderElector",
    "LoopLagProbe",
    "Manager",
    "MaxOfRateLimiter",
    "MethodNotAllowed",
    "Metrics",
    "NotFound",
    "NotWatched",
    "PolicyRule",
    "Predicate",
    "RateLimiter",
    "RawObject",
    "RealClock",
    "Reconciler",
    "Registration",
    "Request",
    "Result",
    "Runnable",
    "ServerError",
    "ShutDown",
    "Store",
    "TerminalError",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "Watch",
    "WorkQueue",
    "annotation_changed",
    "configure_logging",
    "default_controller_rate_limiter",
    "for_",
    "generation_changed",
    "label_selector",
    "load_config",
    "owns",
    "reconciler",
    "resource_version_changed",
    "watches",
]
