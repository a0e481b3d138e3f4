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
  (all `{name}`; queues keep plain numbers that a collector reads at scrape time, and the
  last two are computed then from the queue's in-flight keys)
- `leader_election_master_status{name}`, `asyncop_cache_objects{kind}`

`exposition()` renders the text format for the metrics endpoint.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

ReconcileResult = Literal["success", "error", "requeue", "requeue_after"]
RESULTS: tuple[ReconcileResult, ...] = ("success", "error", "requeue", "requeue_after")

# controller-runtime's reconcile_time_seconds buckets.
_RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
    10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip
# client-go's workqueue buckets: 10 ns * 10**i for i in 0..11.
_QUEUE_BUCKETS = tuple(float(f"1e{exp}") for exp in range(-8, 4))
_QUEUE_BUCKET_LABELS = tuple(repr(bound) for bound in _QUEUE_BUCKETS)


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
        self._queues: dict[str, QueueStats] = {}
        reg.register(_QueueCollector(self._queues))
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

    def queue_metrics(self, name: str) -> QueueStats:
        """The `workqueue.QueueMetrics` implementation for the queue called `name`.

        A queue of the same name started later (a restarted controller) replaces the old one.
        """
        stats = QueueStats()
        self._queues[name] = stats
        return stats

    def exposition(self) -> bytes:
        """The Prometheus text exposition format of every metric on this registry."""
        data: bytes = generate_latest(self.registry)
        return data


class _Histogram:
    """A lock-free histogram for the single-threaded event loop (exported at scrape time)."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(_QUEUE_BUCKETS) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(_QUEUE_BUCKETS, value)] += 1
        self.sum += value

    def buckets(self) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        total = 0
        for label, count in zip(_QUEUE_BUCKET_LABELS, self.counts, strict=False):
            total += count
            out.append((label, total))
        out.append(("+Inf", total + self.counts[-1]))
        return out


class QueueStats:
    """One queue's workqueue_* numbers: plain counters on the hot path, read at scrape time.

    prometheus_client's metric objects take a lock and do several calls per update; a queue
    reports 4-6 updates per key, so it keeps plain numbers here instead (measured in
    bench/queue.py) and `_QueueCollector` turns them into metric families when scraped.
    """

    __slots__ = ("adds", "current_depth", "latency", "probe", "retries", "work")

    def __init__(self) -> None:
        self.adds = 0
        self.retries = 0
        self.current_depth = 0
        self.latency = _Histogram()
        self.work = _Histogram()
        self.probe: Callable[[], tuple[float, float]] | None = None

    def added(self) -> None:
        self.adds += 1

    def depth(self, depth: int) -> None:
        self.current_depth = depth

    def queue_latency(self, seconds: float) -> None:
        self.latency.observe(seconds)

    def work_duration(self, seconds: float) -> None:
        self.work.observe(seconds)

    def retried(self) -> None:
        self.retries += 1

    def track_processing(self, probe: Callable[[], tuple[float, float]]) -> None:
        self.probe = probe


class _QueueCollector(Collector):
    """Exports every QueueStats of one Metrics under client-go's workqueue metric names."""

    def __init__(self, queues: dict[str, QueueStats]) -> None:
        self._queues = queues

    def collect(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=["name"])
        adds = CounterMetricFamily(
            "workqueue_adds", "Total number of adds handled by workqueue", labels=["name"]
        )
        latency = HistogramMetricFamily(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            labels=["name"],
        )
        work = HistogramMetricFamily(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            labels=["name"],
        )
        retries = CounterMetricFamily(
            "workqueue_retries", "Total number of retries handled by workqueue", labels=["name"]
        )
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration",
            labels=["name"],
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            labels=["name"],
        )
        for name, stats in list(self._queues.items()):
            depth.add_metric([name], stats.current_depth)
            adds.add_metric([name], stats.adds)
            latency.add_metric([name], stats.latency.buckets(), stats.latency.sum)
            work.add_metric([name], stats.work.buckets(), stats.work.sum)
            retries.add_metric([name], stats.retries)
            in_flight, oldest = stats.probe() if stats.probe is not None else (0.0, 0.0)
            unfinished.add_metric([name], in_flight)
            longest.add_metric([name], oldest)
        yield from (depth, adds, latency, work, retries, unfinished, longest)
