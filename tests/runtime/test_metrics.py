"""Metrics: private registries, controller-runtime names, exposition text."""

from __future__ import annotations

from prometheus_client import REGISTRY

from asyncop.runtime.metrics import Metrics


def test_each_metrics_has_its_own_registry() -> None:
    a, b = Metrics(), Metrics()
    a.controller("foo", workers=1).reconciled("success", 0.2)
    assert a.registry.get_sample_value(
        "controller_runtime_reconcile_total", {"controller": "foo", "result": "success"}) == 1
    assert b.registry.get_sample_value(
        "controller_runtime_reconcile_total", {"controller": "foo", "result": "success"}) is None
    assert REGISTRY.get_sample_value("controller_runtime_reconcile_total",
                                     {"controller": "foo", "result": "success"}) is None


def test_controller_started_zeroes_every_result_series() -> None:
    m = Metrics()
    m.controller("foo", workers=4)
    for result in ("success", "error", "requeue", "requeue_after"):
        assert m.registry.get_sample_value(
            "controller_runtime_reconcile_total", {"controller": "foo", "result": result}) == 0
    assert m.registry.get_sample_value(
        "controller_runtime_max_concurrent_reconciles", {"controller": "foo"}) == 4


def test_errors_and_terminal_errors_count_separately() -> None:
    m = Metrics()
    stats = m.controller("foo", workers=1)
    stats.reconciled("error", 0.01)
    stats.reconciled("error", 0.01, terminal=True)
    stats.reconciled("requeue_after", 0.3)
    value = m.registry.get_sample_value
    assert value("controller_runtime_reconcile_errors_total", {"controller": "foo"}) == 2
    assert value("controller_runtime_terminal_reconcile_errors_total", {"controller": "foo"}) == 1
    assert value("controller_runtime_reconcile_time_seconds_count", {"controller": "foo"}) == 3
    assert value("controller_runtime_reconcile_time_seconds_bucket",
                 {"controller": "foo", "le": "0.25"}) == 2
    assert value("controller_runtime_reconcile_time_seconds_bucket",
                 {"controller": "foo", "le": "+Inf"}) == 3


def test_restarted_controllers_and_queues_keep_counting() -> None:
    m = Metrics()
    m.controller("foo", workers=1).reconciled("success", 0.1)
    m.controller("foo", workers=2).reconciled("success", 0.1)
    m.queue_metrics("foo").added()
    m.queue_metrics("foo").added()
    value = m.registry.get_sample_value
    assert value("controller_runtime_reconcile_total",
                 {"controller": "foo", "result": "success"}) == 2
    assert value("controller_runtime_max_concurrent_reconciles", {"controller": "foo"}) == 2
    assert value("workqueue_adds_total", {"name": "foo"}) == 2


def test_exposition_has_the_controller_runtime_and_workqueue_names() -> None:
    m = Metrics()
    m.controller("foo", workers=1).busy(1)
    m.set_leader("asyncop", leading=True)
    m.set_cache_objects("foos.samplecontroller.k8s.io", 12)
    q = m.queue_metrics("foo")
    q.added()
    q.depth(1)
    q.queue_latency(0.5)
    q.queue_latency(0.1)  # on a bucket bound: counted in le="0.1"
    q.work_duration(0.25)
    q.retried()
    q.track_processing(lambda: (3.0, 2.0))
    text = m.exposition().decode()
    for line in [
        'controller_runtime_active_workers{controller="foo"} 1.0',
        'workqueue_depth{name="foo"} 1.0',
        'workqueue_adds_total{name="foo"} 1.0',
        'workqueue_queue_duration_seconds_count{name="foo"} 2.0',
        'workqueue_queue_duration_seconds_bucket{le="0.01",name="foo"} 0.0',
        'workqueue_queue_duration_seconds_bucket{le="0.1",name="foo"} 1.0',
        'workqueue_queue_duration_seconds_bucket{le="1.0",name="foo"} 2.0',
        'workqueue_queue_duration_seconds_bucket{le="+Inf",name="foo"} 2.0',
        'workqueue_work_duration_seconds_sum{name="foo"} 0.25',
        'workqueue_retries_total{name="foo"} 1.0',
        'workqueue_unfinished_work_seconds{name="foo"} 3.0',
        'workqueue_longest_running_processor_seconds{name="foo"} 2.0',
        'leader_election_master_status{name="asyncop"} 1.0',
        'asyncop_cache_objects{kind="foos.samplecontroller.k8s.io"} 12.0',
    ]:
        assert line in text, line
