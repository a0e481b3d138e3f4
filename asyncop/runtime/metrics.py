"""Metrics: Prometheus metrics under controller-runtime's names, on a private registry.

Each `Metrics` owns its own `CollectorRegistry` (never the process-global one), so several
managers, or several tests, can run in one process without clashing. The metric names and
labels match controller-runtime and client-go's workqueue, so existing dashboards work:

- `controller_runtime_reconcile_total{controller,result}` (success|error|requeue|requeue_after)
- `controller_runtime_reconcile_errors_total{controller}`,
  `controller_runtime_terminal_reconcile_errors_total{controller}`
- `controller_runtime_reconcile_time_seconds{controller}` (histogram)
- `controller_runtime_max_concurrent_reconciles{controller}`,
  `controller_runtime_active_workers{controller}`
- `workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
  `workqueue_work_duration_seconds`, `workqueue_retries_total`,
  `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`
  (all `{name}`; the last two are computed at scrape time from the queue's in-flight keys)
- `leader_election_master_status{name}`, `asyncop_cache_objects{kind}`

`exposition()` renders the text format for the metrics endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

ReconcileResult = Literal["success", "error", "requeue", "requeue_after"]
RESULTS: tuple[ReconcileResult, ...] = ("success", "error", "requeue", "requeue_after")

# controller-runtime's reconcile_time_seconds buckets.
_RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
    10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip
# client-go's workqueue buckets: 10 ns * 10**i for i in 0..11.
_QUEUE_BUCKETS = tuple(1e-8 * 10.0**i for i in range(12))


class Metrics:
    """All runtime metrics of one Manager, on one private registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=reg,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=reg,
        )
        self.terminal_reconcile_errors = Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller",
            ["controller"],
            registry=reg,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=_RECONCILE_BUCKETS,
            registry=reg,
        )
        self.max_concurrent_reconciles = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            ["controller"],
            registry=reg,
        )
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            ["controller"],
            registry=reg,
        )
        self.queue_depth = Gauge(
            "workqueue_depth", "Current depth of workqueue", ["name"], registry=reg
        )
        self.queue_adds = Counter(
            "workqueue_adds_total", "Total number of adds handled by workqueue", ["name"],
            registry=reg,
        )
        self.queue_latency = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            ["name"],
            buckets=_QUEUE_BUCKETS,
            registry=reg,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            ["name"],
            buckets=_QUEUE_BUCKETS,
            registry=reg,
        )
        self.queue_retries = Counter(
            "workqueue_retries_total", "Total number of retries handled by workqueue", ["name"],
            registry=reg,
        )
        self.unfinished_work = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration",
            ["name"],
            registry=reg,
        )
        self.longest_running = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            ["name"],
            registry=reg,
        )
        self.leader_status = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master",
            ["name"],
            registry=reg,
        )
        self.cache_objects = Gauge(
            "asyncop_cache_objects", "Objects held in the informer cache per kind", ["kind"],
            registry=reg,
        )

    # -- controllers ------------------------------------------------------------------------
    def controller_started(self, controller: str, *, workers: int) -> None:
        """Publish the worker count and zero every result series (as controller-runtime does)."""
        self.max_concurrent_reconciles.labels(controller=controller).set(workers)
        self.active_workers.labels(controller=controller).set(0)
        for result in RESULTS:
            self.reconcile_total.labels(controller=controller, result=result)
        self.reconcile_errors.labels(controller=controller)
        self.terminal_reconcile_errors.labels(controller=controller)

    def reconcile_done(
        self, controller: str, *, result: ReconcileResult, seconds: float, terminal: bool = False
    ) -> None:
        """Count one finished reconcile; `result="error"` also counts an error."""
        self.reconcile_total.labels(controller=controller, result=result).inc()
        self.reconcile_time.labels(controller=controller).observe(seconds)
        if result == "error":
            self.reconcile_errors.labels(controller=controller).inc()
            if terminal:
                self.terminal_reconcile_errors.labels(controller=controller).inc()

    def worker_busy(self, controller: str, delta: int) -> None:
        self.active_workers.labels(controller=controller).inc(delta)

    # -- others -------------------------------------------------------------------------------
    def set_leader(self, name: str, *, leading: bool) -> None:
        self.leader_status.labels(name=name).set(1 if leading else 0)

    def set_cache_objects(self, kind: str, count: int) -> None:
        self.cache_objects.labels(kind=kind).set(count)

    def queue_metrics(self, name: str) -> QueueMetricsAdapter:
        """The `workqueue.QueueMetrics` implementation for the queue called `name`."""
        return QueueMetricsAdapter(self, name)

    def exposition(self) -> bytes:
        """The Prometheus text exposition format of every metric on this registry."""
        data: bytes = generate_latest(self.registry)
        return data


class QueueMetricsAdapter:
    """Binds a queue name to the workqueue_* metrics (label children resolved once)."""

    __slots__ = ("_adds", "_depth", "_latency", "_longest", "_retries", "_unfinished", "_work")

    def __init__(self, metrics: Metrics, name: str) -> None:
        self._depth = metrics.queue_depth.labels(name=name)
        self._adds = metrics.queue_adds.labels(name=name)
        self._latency = metrics.queue_latency.labels(name=name)
        self._work = metrics.work_duration.labels(name=name)
        self._retries = metrics.queue_retries.labels(name=name)
        self._unfinished = metrics.unfinished_work.labels(name=name)
        self._longest = metrics.longest_running.labels(name=name)

    def added(self) -> None:
        self._adds.inc()

    def depth(self, depth: int) -> None:
        self._depth.set(depth)

    def queue_latency(self, seconds: float) -> None:
        self._latency.observe(seconds)

    def work_duration(self, seconds: float) -> None:
        self._work.observe(seconds)

    def retried(self) -> None:
        self._retries.inc()

    def track_processing(self, probe: Callable[[], tuple[float, float]]) -> None:
        self._unfinished.set_function(lambda: probe()[0])
        self._longest.set_function(lambda: probe()[1])
