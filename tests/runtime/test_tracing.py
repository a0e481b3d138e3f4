"""Tracing: a span per reconcile with its requests and own-write waits as children.

The operator runs against the embedded API server with an SDK TracerProvider exporting to
memory (`Manager(tracer_provider=...)`); the tests read the finished spans and check the
tree of one reconcile: `reconcile` (controller, key, reconcileID, trigger, queue wait,
outcome) → `create configmaps`, `patch configmaps`, and, for the next reconcile of the
same key, `wait for own writes`; the Event's `post event` span links back to the reconcile.
Tracing off costs nothing: no tracer, no observer, no trigger tracking.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import structlog
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.testing import eventually

CHILD = "-child"
LOGGED: list[dict[str, object]] = []
"""The structlog context each reconcile ran with."""


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    p = TracerProvider()
    p.add_span_processor(SimpleSpanProcessor(exporter))
    return p


def child_maker(mgr: Manager) -> Controller:
    """For each ConfigMap `x` without a label: create `x-child`, label `x`, post an Event.
    A ConfigMap named `fail-*` raises instead."""

    async def reconcile(req: Request) -> Result:
        LOGGED.append(structlog.contextvars.get_contextvars())
        if req.name.endswith(CHILD):
            return Result()
        if req.name.startswith("fail-"):
            raise RuntimeError("boom: cannot make the child")
        cm = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
        if cm is None or (cm["metadata"].get("labels") or {}).get("done"):
            return Result()
        await mgr.client.create(CONFIGMAP, {"metadata": {
            "name": req.name + CHILD, "namespace": req.namespace}})
        await mgr.client.patch(CONFIGMAP, req.name, {"metadata": {"labels": {"done": "y"}}},
                               namespace=req.namespace)
        mgr.recorder("child-maker").event(cm, "Normal", "Made", "made the child",
                                          kind=CONFIGMAP)
        return Result()

    return Controller("child-maker", reconciler(reconcile), watches=[for_(CONFIGMAP)],
                      workers=2)


def reconciles_of(spans: tuple[ReadableSpan, ...], key: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name == "reconcile"
                   and (s.attributes or {}).get("asyncop.object.key") == key),
                  key=lambda s: s.start_time or 0)


def children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    pid = parent.context.span_id if parent.context else None
    return sorted((s for s in spans if s.parent is not None and s.parent.span_id == pid),
                  key=lambda s: s.start_time or 0)


async def test_one_reconcile_is_a_span_tree_of_its_requests(
        server: ApiServer, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    # kube-rs wraps every reconcile in a span carrying the object reference; ours is the
    # root of a new trace whose children are the reconcile's API requests
    async with Manager(config=ClientConfig(host=server.url), tracer_provider=provider) as mgr:
        mgr.add(child_maker(mgr))
        await mgr.client.create(CONFIGMAP, {"metadata": {"name": "x", "namespace": "default"}})

        def settled() -> bool:
            first = reconciles_of(exporter.get_finished_spans(), "default/x")
            return len(first) >= 2 and any(s.name == "post event"
                                           for s in exporter.get_finished_spans())

        await eventually(settled, timeout=20)
    spans = exporter.get_finished_spans()
    first, second = reconciles_of(spans, "default/x")[:2]
    attrs = dict(first.attributes or {})
    assert first.parent is None and first.kind == SpanKind.INTERNAL
    assert attrs["asyncop.controller"] == "child-maker"
    assert attrs["asyncop.object.kind"] == "ConfigMap"
    assert attrs["k8s.namespace.name"] == "default"
    assert attrs["asyncop.object.name"] == "x"
    assert len(str(attrs["asyncop.reconcile_id"])) == 32
    assert attrs["asyncop.trigger"] == "ConfigMap default/x added"
    assert attrs["asyncop.trigger.reason"] == "added"
    assert float(attrs["asyncop.queue.wait_seconds"]) >= 0  # type: ignore[arg-type]
    assert attrs["asyncop.outcome"] == "success"
    assert attrs["asyncop.writes"] == 2
    assert first.status.status_code == StatusCode.UNSET

    requests = children(spans, first)
    assert [s.name for s in requests] == ["create configmaps", "patch configmaps"]
    assert {s.context.trace_id for s in requests if s.context} == {first.context.trace_id}
    for span, method in zip(requests, ("POST", "PATCH"), strict=True):
        a = dict(span.attributes or {})
        assert span.kind == SpanKind.CLIENT
        assert a["http.request.method"] == method
        assert a["http.response.status_code"] in (200, 201)
        assert a["k8s.namespace.name"] == "default"
        assert str(a["url.full"]).startswith(server.url + "/api/v1/namespaces/default/")

    # the reconcile's log lines name its trace and reconcile
    [fields] = [f for f in LOGGED if f.get("reconcile_id") == attrs["asyncop.reconcile_id"]]
    assert fields["trace_id"] == f"{first.context.trace_id:032x}"
    # the patch's own update event brings the key back: that reconcile first waits until
    # the cache has seen both writes of the first one
    second_attrs = dict(second.attributes or {})
    assert second_attrs["asyncop.trigger"] == "ConfigMap default/x updated"
    assert second.context.trace_id != first.context.trace_id
    [wait] = [s for s in children(spans, second) if s.name == "wait for own writes"]
    assert dict(wait.attributes or {})["asyncop.writes"] == 2
    assert dict(wait.attributes or {})["asyncop.writes.not_seen"] == 0

    # the Event is posted later, in a trace of its own, linked to the reconcile that
    # recorded it; its create request is that span's child
    [post] = [s for s in spans if s.name == "post event"]
    assert [link.context.span_id for link in post.links] == [first.context.span_id]
    assert dict(post.attributes or {})["asyncop.event.reason"] == "Made"
    assert [s.name for s in children(spans, post)] == ["create events"]


async def test_a_failed_reconcile_is_an_error_span_and_its_retry_says_so(
        server: ApiServer, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    async with Manager(config=ClientConfig(host=server.url), tracer_provider=provider) as mgr:
        mgr.add(child_maker(mgr))
        await mgr.client.create(CONFIGMAP, {"metadata": {"name": "fail-1",
                                                         "namespace": "default"}})
        await eventually(lambda: len(reconciles_of(exporter.get_finished_spans(),
                                                   "default/fail-1")) >= 2, timeout=20)
    first, second = reconciles_of(exporter.get_finished_spans(), "default/fail-1")[:2]
    assert first.status.status_code == StatusCode.ERROR
    assert first.status.description == "boom: cannot make the child"
    assert dict(first.attributes or {})["asyncop.outcome"] == "error"
    assert dict(first.attributes or {})["asyncop.requeues"] == 1
    assert [e.name for e in first.events] == ["exception"]  # the traceback, as logged
    assert dict(second.attributes or {})["asyncop.trigger"] == (
        "retry after error: boom: cannot make the child")


async def test_tracing_off_installs_nothing(server: ApiServer) -> None:
    # zero cost when off: no tracer anywhere, the queue keeps no triggers, no observer
    async with Manager(config=ClientConfig(host=server.url)) as mgr:
        controller = child_maker(mgr)
        mgr.add(controller)
        await mgr.client.create(CONFIGMAP, {"metadata": {"name": "y", "namespace": "default"}})

        async def labelled() -> bool:
            cm = await mgr.client.get(CONFIGMAP, "y", namespace="default")
            return bool((cm["metadata"].get("labels") or {}).get("done"))

        await eventually(labelled, timeout=20)
        assert mgr.tracer is None and mgr.client.tracer is None
        assert mgr.recorder("child-maker").tracer is None
        assert controller.observer is None
        assert controller.queue is not None and controller.queue.take_trigger(
            Request("y", "default")) == (None, None)
        assert controller.queue._why is None


async def test_a_client_of_its_own_is_traced_too(
        server: ApiServer, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    async with Client(ClientConfig(host=server.url), tracer=provider.get_tracer("t")) as c:
        await c.create(CONFIGMAP, {"metadata": {"name": "z", "namespace": "default"}})
        await c.apply(CONFIGMAP, {"metadata": {"name": "z", "namespace": "default"},
                                  "data": {"a": "b"}}, field_manager="t")
        with pytest.raises(Exception, match="not found"):
            await c.get(CONFIGMAP, "missing", namespace="default")
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["create configmaps", "apply configmaps",
                                       "get configmaps"]
    missing = spans[-1]
    assert missing.status.status_code == StatusCode.ERROR
    assert dict(missing.attributes or {})["http.response.status_code"] == 404
    assert dict(missing.attributes or {})["error.type"] == "NotFound"
