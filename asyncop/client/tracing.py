"""Tracing: OpenTelemetry spans for reconciles, API requests and own-write waits, or nothing.

asyncop depends on `opentelemetry-api` only; the SDK and the OTLP exporters come with
`pip install 'asyncop[otel]'`. Tracing is on for a Manager when it is given a
`tracer_provider`, or when the process has a real one: `asyncop run` installs one from the
standard `OTEL_*` environment variables (`from_environment`), and an application that set up
OpenTelemetry itself (`opentelemetry-instrument`, its own SDK code) has set the global one.
Otherwise it is off, and off means off: every traced component holds `tracer = None` and
tests it once per reconcile or request; nothing calls OpenTelemetry at all.

What is traced (docs/observability.md has the span tree):
- `reconcile` (a new trace per reconcile; `asyncop.runtime.observe`): controller, object key,
  reconcileID, trigger, queue wait, outcome, requeue; its children:
- `wait for own writes` (`asyncop.runtime.ownwrites`), and
- one CLIENT span per API request (`request_span`, here), named `VERB RESOURCE` (`patch
  ats/status`); retries are span events; the W3C `traceparent` header goes on the wire, so a
  kube-apiserver with APIServerTracing joins the trace;
- `post event` (`asyncop.runtime.recorder`), linked to the reconcile that recorded the Event.

OpenTelemetry is imported on first use (its import takes ~50 ms), so a process that never
traces never loads it.

Invariants: span names are low-cardinality (no object names); attributes follow
OpenTelemetry's HTTP and Kubernetes conventions where they exist (`http.request.method`,
`url.full`, `server.address`, `http.response.status_code`, `k8s.namespace.name`) and use the
`asyncop.` prefix otherwise; a span that ends in an error has status ERROR with the
Kubernetes message.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from typing import TYPE_CHECKING, Any

from asyncop.api import ApiError, Kind

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = [
    "TracingUnavailable",
    "enabled_by_environment",
    "from_environment",
    "inject",
    "request_span",
    "tracer_for",
]

INSTRUMENTATION = "asyncop"
_TRUE = ("true", "1", "yes")


class TracingUnavailable(RuntimeError):
    """OTEL_* asks for tracing but the SDK or the named exporter is not installed."""


def tracer_for(provider: TracerProvider | None = None) -> Tracer | None:
    """The tracer to use: from `provider`, else from the process's provider if one was set
    up; None (tracing off) when there is none."""
    from opentelemetry import trace

    if provider is None:
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            return None
    from asyncop import __version__

    return provider.get_tracer(INSTRUMENTATION, __version__)


def enabled_by_environment(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the standard variables ask for traces: an exporter other than `none` in
    OTEL_TRACES_EXPORTER, or an OTLP endpoint; OTEL_SDK_DISABLED=true always wins."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    exporters = [e.strip() for e in env.get("OTEL_TRACES_EXPORTER", "").split(",") if e.strip()]
    if exporters:
        return exporters != ["none"]
    return bool(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                or env.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def _exporter_names(env: Mapping[str, str]) -> list[str]:
    """Entry-point names of the trace exporters OTEL_* asks for (`otlp` by protocol)."""
    names = [e.strip() for e in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",")
             if e.strip() and e.strip() != "none"]
    # the specification's default protocol; grpc needs opentelemetry-exporter-otlp-proto-grpc
    protocol = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip()
    otlp = "otlp_proto_grpc" if protocol == "grpc" else "otlp_proto_http"
    return [otlp if n == "otlp" else n for n in names]


def from_environment(environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """An SDK TracerProvider configured by the OTEL_* variables, or None when they do not ask
    for traces. The SDK reads the rest itself: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    (service.name defaults to `asyncop`), OTEL_TRACES_SAMPLER, OTEL_BSP_*, and each exporter
    its OTEL_EXPORTER_* settings. Raises TracingUnavailable naming what to install."""
    env = os.environ if environ is None else environ
    if not enabled_by_environment(env):
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise TracingUnavailable(
            "OTEL_* asks for traces but the OpenTelemetry SDK is not installed: "
            "pip install 'asyncop[otel]' (or unset OTEL_TRACES_EXPORTER and "
            "OTEL_EXPORTER_OTLP_ENDPOINT)") from None
    attributes: dict[str, Any] = {}
    if not env.get("OTEL_SERVICE_NAME") and "service.name=" not in env.get(
            "OTEL_RESOURCE_ATTRIBUTES", ""):
        attributes["service.name"] = "asyncop"
    provider = SdkTracerProvider(resource=Resource.create(attributes))
    for name in _exporter_names(env):
        found = list(metadata.entry_points(group="opentelemetry_traces_exporter", name=name))
        if not found:
            extra = ("pip install opentelemetry-exporter-otlp-proto-grpc"
                     if name == "otlp_proto_grpc" else "pip install 'asyncop[otel]'")
            raise TracingUnavailable(
                f"OTEL_TRACES_EXPORTER asks for the {name!r} trace exporter, which is not "
                f"installed: {extra}")
        provider.add_span_processor(BatchSpanProcessor(found[0].load()()))
    return provider


def shutdown(provider: TracerProvider | None) -> None:
    """Flush and stop an SDK provider (exports what is buffered); others are left alone."""
    stop = getattr(provider, "shutdown", None)
    if callable(stop):
        stop()


def inject(headers: dict[str, str]) -> None:
    """Add the current span's `traceparent` (and whatever OTEL_PROPAGATORS adds)."""
    from opentelemetry import propagate

    propagate.inject(headers)


def _resource(kind: Kind | None, subresource: str) -> str:
    if kind is None:
        return ""
    return f"{kind.plural}/{subresource}" if subresource else kind.plural


@contextmanager
def request_span(tracer: Tracer, *, verb: str, kind: Kind | None, subresource: str,
                 method: str, url: str, host: str, port: int | None,
                 namespace: str | None) -> Iterator[Span]:
    """The CLIENT span of one API request (all its retries); the error ends it ERROR."""
    from opentelemetry.trace import SpanKind, Status, StatusCode

    resource = _resource(kind, subresource)
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.full": url,
        "server.address": host,
        "asyncop.verb": verb,
        "asyncop.resource": resource,
    }
    if port is not None:
        attributes["server.port"] = port
    if namespace:
        attributes["k8s.namespace.name"] = namespace
    name = f"{verb} {resource}" if resource else method
    with tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes,
                                      record_exception=False,
                                      set_status_on_exception=False) as span:
        try:
            yield span
        except ApiError as exc:
            span.set_attribute("http.response.status_code", exc.code)
            span.set_attribute("error.type", exc.reason or str(exc.code))
            span.set_status(Status(StatusCode.ERROR, exc.message))
            raise
        except Exception as exc:
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, str(exc) or type(exc).__name__))
            raise
