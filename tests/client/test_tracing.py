"""Client tracing on the wire, and tracing configured by the standard OTEL_* variables.

A recording HTTP server stands in for kube-apiserver: with a tracer, every request carries
a W3C `traceparent` naming the request's own span (what kube-apiserver's APIServerTracing
joins), a retry is a span event, and without a tracer no header is added. The environment
tests build the SDK provider exactly as `asyncop run` does, and one exports over real
OTLP/HTTP to a local collector, decoding what arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from asyncop.api.kinds import CONFIGMAP
from asyncop.client import (
    Backoff,
    Client,
    ClientConfig,
    tracing,
)

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}


class Recorder:
    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.fail_first = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.headers.append(dict(request.headers))
        if self.fail_first:
            self.fail_first -= 1
            return web.json_response({"kind": "Status", "code": 429, "reason": "TooManyRequests",
                                      "message": "slow down"}, status=429,
                                     headers={"Retry-After": "0"})
        return web.Response(body=orjson.dumps(CM), content_type="application/json")


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[Recorder, str]]:
    rec = Recorder()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", rec.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield rec, f"http://127.0.0.1:{port}"
    await runner.cleanup()


async def test_traceparent_names_the_request_span(recorder: tuple[Recorder, str]) -> None:
    rec, url = recorder
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    rec.fail_first = 1
    async with Client(ClientConfig(host=url), tracer=provider.get_tracer("t"),
                      backoff=Backoff(base=0.01, cap=0.01)) as client:
        await client.get(CONFIGMAP, "a", namespace="ns")
    [span] = exporter.get_finished_spans()
    ctx = span.context
    assert ctx is not None
    expected = f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
    # both attempts (the 429 and its retry) carry the same span's traceparent
    assert [h.get("traceparent") for h in rec.headers] == [expected, expected]
    assert span.name == "get configmaps"
    [retry] = span.events
    assert retry.name == "retry"
    assert dict(retry.attributes or {})["asyncop.retry.reason"] == "429"
    assert dict(span.attributes or {})["http.response.status_code"] == 200


async def test_without_a_tracer_no_header_is_added(recorder: tuple[Recorder, str]) -> None:
    rec, url = recorder
    async with Client(ClientConfig(host=url)) as client:
        await client.get(CONFIGMAP, "a", namespace="ns")
    assert "traceparent" not in {k.lower() for k in rec.headers[0]}


@pytest.mark.parametrize(("env", "on"), [
    ({}, False),
    ({"OTEL_SERVICE_NAME": "x"}, False),
    ({"OTEL_TRACES_EXPORTER": "none"}, False),
    ({"OTEL_TRACES_EXPORTER": "console"}, True),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, True),
    ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, False),
])
def test_the_standard_variables_decide(env: dict[str, str], on: bool) -> None:
    assert tracing.enabled_by_environment(env) is on
    provider = tracing.from_environment(env)
    assert (provider is not None) is on
    tracing.shutdown(provider)


def test_an_exporter_that_is_not_installed_is_named() -> None:
    with pytest.raises(tracing.TracingUnavailable,
                       match="'nonesuch' trace exporter, which is not installed"):
        tracing.from_environment({"OTEL_TRACES_EXPORTER": "nonesuch"})


def test_the_process_provider_is_used_when_one_was_set_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    assert tracing.tracer_for(None) is None  # the API's proxy provider: nothing set up
    monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)
    assert tracing.tracer_for(None) is not None


async def test_spans_reach_an_otlp_http_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    received: list[bytes] = []

    async def collect(request: web.Request) -> web.Response:
        received.append(await request.read())
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application()
    app.router.add_post("/v1/traces", collect)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        # the exporter reads its own settings from the process environment
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                           f"http://127.0.0.1:{port}/v1/traces")
        provider: Any = tracing.from_environment()
        assert provider is not None
        with provider.get_tracer("t").start_as_current_span("reconcile"):
            pass
        await asyncio.to_thread(tracing.shutdown, provider)  # flushes the batch
    finally:
        await runner.cleanup()
    [body] = received
    export = ExportTraceServiceRequest.FromString(body)
    [resource_spans] = export.resource_spans
    service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert service["service.name"] == "asyncop"
    assert [s.name for ss in resource_spans.scope_spans for s in ss.spans] == ["reconcile"]
