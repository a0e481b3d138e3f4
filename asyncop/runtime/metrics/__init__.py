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
  `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds` (`{name}`)
- `leader_election_master_status{name}`, `asyncop_cache_objects{kind}`
- `asyncop_client_credentials_failing` (1 while the API server keeps rejecting the
  credentials), `asyncop_client_auth_rejections_total{code}` (401/403 answers)

Controllers and queues update plain numbers (`asyncop.runtime.metrics.hotpath`) that
collectors render at scrape time; the rare updates (leader status, cache sizes) use ordinary gauges.
`exposition()` renders the text format for the metrics endpoint.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily

from asyncop.runtime.metrics.hotpath import (
    RESULTS,
    ControllerCollector,
    ControllerStats,
    QueueCollector,
    QueueStats,
    ReconcileResult,
)

__all__ = ["RESULTS", "ControllerStats", "Metrics", "QueueStats", "ReconcileResult"]


class _Counters:
    """A counter family whose values are read at scrape time from a dict (label tuple ->
    count), for counts kept as plain numbers by the code that owns them."""

    def __init__(self, name: str, doc: str, labels: list[str],
                 values: dict[tuple[str, ...], int]) -> None:
        self.name, self.doc, self.labels, self.values = name, doc, labels, values

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(self.name, self.doc, labels=self.labels)
        for labels, value in sorted(self.values.items()):
            family.add_metric(list(labels), value)
        yield family

    def describe(self) -> Iterator[CounterMetricFamily]:
        return iter(())


class Metrics:
    """All runtime metrics of one Manager, on one private registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._controllers: dict[str, ControllerStats] = {}
        self._queues: dict[str, QueueStats] = {}
        self.registry.register(ControllerCollector(self._controllers))
        self.registry.register(QueueCollector(self._queues))
        self.leader_status = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master",
            ["name"],
            registry=self.registry,
        )
        self.cache_objects = Gauge(
            "asyncop_cache_objects",
            "Objects held in the informer cache per kind",
            ["kind"],
            registry=self.registry,
        )

        self.shards_owned = Gauge(
            "asyncop_shards_owned",
            "Virtual shards whose Lease this replica holds (sharded Managers)",
            ["group"],
            registry=self.registry,
        )
        self._shard_changes: dict[tuple[str, ...], int] = {}
        self.registry.register(_Counters(
            "asyncop_shard_changes", "Shards acquired, handed over (drained, then released) "
            "and lost by this replica", ["group", "change"], self._shard_changes))
        self.credentials_failing = Gauge(
            "asyncop_client_credentials_failing",
            "1 while the API server keeps rejecting the client's credentials (401/403 in a "
            "row), else 0", registry=self.registry)
        self._auth_rejections: dict[tuple[str, ...], int] = {}
        self.registry.register(_Counters(
            "asyncop_client_auth_rejections", "Requests the API server refused with 401 or "
            "403", ["code"], self._auth_rejections))
        self._watch_events: dict[tuple[str, ...], int] = {}
        self.registry.register(_Counters(
            "asyncop_watch_events", "Watch events received per kind (the watch traffic)",
            ["kind"], self._watch_events))

    def set_auth(self, *, failing: bool, rejections: dict[int, int]) -> None:
        """Credential health at scrape time (asyncop.client.authhealth)."""
        self.credentials_failing.set(1 if failing else 0)
        for code, count in rejections.items():
            self._auth_rejections[(str(code),)] = count

    def set_shards(self, group: str, *, owned: int, acquired: int, handed_over: int,
                   lost: int) -> None:
        """Sharding state at scrape time: owned shards, and the counts since start."""
        self.shards_owned.labels(group=group).set(owned)
        for change, value in (("acquired", acquired), ("handed_over", handed_over),
                              ("lost", lost)):
            self._shard_changes[(group, change)] = value

    def controller(self, name: str, *, workers: int) -> ControllerStats:
        """The stats of controller `name` (every result series starts at 0, as upstream).

        A controller restarted under the same name (after a leader change) keeps counting.
        """
        stats = self._controllers.get(name)
        if stats is None:
            stats = self._controllers[name] = ControllerStats(workers=workers)
        stats.max_concurrent = workers
        return stats

    def queue_metrics(self, name: str) -> QueueStats:
        """The `workqueue.QueueMetrics` implementation for the queue called `name`.

        A queue started later under the same name keeps the counters and takes over the
        in-flight probe.
        """
        stats = self._queues.get(name)
        if stats is None:
            stats = self._queues[name] = QueueStats()
        return stats

    def set_leader(self, name: str, *, leading: bool) -> None:
        self.leader_status.labels(name=name).set(1 if leading else 0)

    def set_watch_events(self, kind: str, count: int) -> None:
        self._watch_events[(kind,)] = count

    def set_cache_objects(self, kind: str, count: int) -> None:
        self.cache_objects.labels(kind=kind).set(count)

    def exposition(self) -> bytes:
        """The Prometheus text exposition format of every metric on this registry."""
        data: bytes = generate_latest(self.registry)
        return data
