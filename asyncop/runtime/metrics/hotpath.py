"""Hot-path statistics for queues and controllers, turned into Prometheus metrics on scrape.

prometheus_client's metric objects take a lock and do several calls per update (a label
lookup alone costs microseconds), and a queue reports 4-6 updates per key, a controller 3-4
per reconcile. So queues and controllers update plain numbers here (`QueueStats`,
`ControllerStats`; an event loop is single-threaded) and two collectors render them, under
client-go's and controller-runtime's metric names, only when the registry is scraped.

Invariants: histograms use the upstream bucket bounds and Prometheus `le` semantics
(a value equal to a bound counts in that bound's bucket); counters never go down.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Literal

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
RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
    10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip
# client-go's workqueue buckets: 10 ns * 10**i for i in 0..11.
QUEUE_BUCKETS = tuple(float(f"1e{exp}") for exp in range(-8, 4))


class Histogram:
    """A lock-free histogram over fixed bounds."""

    __slots__ = ("_bounds", "_labels", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self._labels = tuple(repr(bound) for bound in bounds)
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self._bounds, value)] += 1
        self.sum += value

    def buckets(self) -> list[tuple[str, float]]:
        """Cumulative `(le, count)` pairs, ending with `+Inf`."""
        out: list[tuple[str, float]] = []
        total = 0
        for label, count in zip(self._labels, self.counts, strict=False):
            total += count
            out.append((label, total))
        out.append(("+Inf", total + self.counts[-1]))
        return out


class QueueStats:
    """One work queue's numbers; implements `workqueue.QueueMetrics`."""

    __slots__ = ("adds", "current_depth", "latency", "probe", "retries", "work")

    def __init__(self) -> None:
        self.adds = 0
        self.retries = 0
        self.current_depth = 0
        self.latency = Histogram(QUEUE_BUCKETS)
        self.work = Histogram(QUEUE_BUCKETS)
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


class ControllerStats:
    """One controller's numbers: reconciles by result, errors, durations, busy workers."""

    __slots__ = ("active_workers", "errors", "max_concurrent", "results", "terminal", "time")

    def __init__(self, *, workers: int) -> None:
        self.max_concurrent = workers
        self.active_workers = 0
        self.results: dict[ReconcileResult, int] = dict.fromkeys(RESULTS, 0)
        self.errors = 0
        self.terminal = 0
        self.time = Histogram(RECONCILE_BUCKETS)

    def reconciled(
        self, result: ReconcileResult, seconds: float, *, terminal: bool = False
    ) -> None:
        """Count one finished reconcile; `result="error"` also counts an error."""
        self.results[result] += 1
        self.time.observe(seconds)
        if result == "error":
            self.errors += 1
            if terminal:
                self.terminal += 1

    def busy(self, delta: int) -> None:
        self.active_workers += delta


class QueueCollector(Collector):
    """Renders every QueueStats under client-go's workqueue metric names."""

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


class ControllerCollector(Collector):
    """Renders every ControllerStats under controller-runtime's metric names."""

    def __init__(self, controllers: dict[str, ControllerStats]) -> None:
        self._controllers = controllers

    def collect(self) -> Iterator[Metric]:
        total = CounterMetricFamily(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            labels=["controller", "result"],
        )
        errors = CounterMetricFamily(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            labels=["controller"],
        )
        terminal = CounterMetricFamily(
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            labels=["controller"],
        )
        duration = HistogramMetricFamily(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            labels=["controller"],
        )
        max_concurrent = GaugeMetricFamily(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            labels=["controller"],
        )
        active = GaugeMetricFamily(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            labels=["controller"],
        )
        for name, stats in list(self._controllers.items()):
            for result, count in stats.results.items():
                total.add_metric([name, result], count)
            errors.add_metric([name], stats.errors)
            terminal.add_metric([name], stats.terminal)
            duration.add_metric([name], stats.time.buckets(), stats.time.sum)
            max_concurrent.add_metric([name], stats.max_concurrent)
            active.add_metric([name], stats.active_workers)
        yield from (total, errors, terminal, duration, max_concurrent, active)
