"""Client: raw-JSON REST and watch streams for any Kind.

The Transport (`asyncop.client.transport`) carries the bytes: calls on one bounded pool (a
lean HTTP/1.1 pool, or aiohttp through a proxy), watches on their own aiohttp session, so
long-lived streams never starve reconcile traffic of pool slots. TLS, the pool and the proxy
are decided once when the Client opens, not per request. Requests are orjson-encoded bytes
with an explicit Content-Type; responses are parsed with orjson and never turned into model
classes.

Invariants:
- every request has a timeout (`timeout` for calls, `timeoutSeconds + 30 s` of read silence
  for watches), so a dead TCP connection cannot hang a caller;
- a non-2xx answer raises the `asyncop.api.ApiError` subclass built from its Status body;
  no HTTP answer raises `TransportError` (`RequestTimeout` for timeouts);
- 429 (and a 5xx carrying Retry-After) is retried for every verb, other 5xx and transport
  errors only for idempotent ones (GET, PUT with a resourceVersion, DELETE, server-side
  apply; a refused connection is retried for every verb since nothing was sent; a timeout
  is retried once at most); pauses are jittered exponential backoff through the Clock, or
  exactly `Retry-After` seconds when the server says so;
- write listeners run after every successful write, and a failing listener never fails
  the write;
- with a `tracer` (`asyncop.client.tracing`), each call is one CLIENT span (its retries are
  span events) and carries the `traceparent` header; without one, nothing is traced and the
  request path is the untraced one.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import AsyncGenerator, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import orjson
import structlog

from asyncop.api import ApiError, Kind, RawObject, error_from_status, object_key
from asyncop.client import tracing
from asyncop.client.auth import Credentials
from asyncop.client.authhealth import AuthHealth
from asyncop.client.config import ClientConfig
from asyncop.client.errors import RequestTimeout, TransportError
from asyncop.client.http1 import ConnectFailed, ConnectionLost
from asyncop.client.retry import Backoff, parse_retry_after
from asyncop.client.transport import Params, Transport
from asyncop.client.watch import WatchEvent, parse_events
from asyncop.clock import Clock, RealClock

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

log = structlog.get_logger("asyncop.client")

PatchType = Literal["merge", "json", "strategic", "apply"]
WriteListener = Callable[[Kind, RawObject | None, str], None]

CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",  # JSON is valid YAML; we always send JSON
}
_JSON = "application/json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
"""What a metadata-only Kind accepts (as client-go's metadata client asks for them, JSON
first; plain JSON stays acceptable: a server that cannot answer in metadata sends whole
objects, which the informer reduces)."""


def _accept(kind: Kind, *, many: bool) -> str | None:
    if not kind.metadata_only:
        return None
    return f"{METADATA_LIST if many else METADATA},{_JSON}"


LARGE_BODY = 1 << 20
"""Bodies from this size on are parsed with the cyclic GC paused (it doubles parse time)."""


def loads(data: bytes) -> Any:
    """orjson.loads; for large bodies (a LIST page) with the generational GC paused."""
    if len(data) < LARGE_BODY or not gc.isenabled():
        return orjson.loads(data)
    gc.disable()
    try:
        return orjson.loads(data)
    finally:
        gc.enable()


class Client:
    def __init__(
        self,
        config: ClientConfig,
        *,
        clock: Clock | None = None,
        timeout: float = 30.0,
        watch_timeout: float = 300.0,
        max_retries: int = 5,
        backoff: Backoff | None = None,
        user_agent: str = "asyncop/0.1",
        pool_size: int = 100,
        tracer: Tracer | None = None,
    ) -> None:
        self.config = config
        self.tracer: Tracer | None = tracer
        """OpenTelemetry tracer for request spans (None: off; a Manager sets its own)."""
        self.clock: Clock = clock or RealClock()
        self.timeout = timeout
        self.watch_timeout = watch_timeout
        self.max_retries = max_retries
        self.backoff = backoff or Backoff(base=0.2, cap=30.0)
        self._user_agent = user_agent
        self._pool_size = pool_size
        self._credentials = Credentials(config, clock=self.clock)
        self.auth = AuthHealth(config)
        """Whether the server still accepts our credentials (the Manager's readiness)."""
        self._listeners: list[WriteListener] = []
        self._transport: Transport | None = None
        self._tmpdir: str | None = None
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        self._open()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def _open(self) -> Transport:
        if self._transport is not None:
            return self._transport
        if self._closed:
            raise RuntimeError("Client is closed")
        cfg = self.config
        self._transport = Transport(
            cfg,
            pool_size=self._pool_size,
            ca_file=cfg.ca_file or self._materialize("ca.crt", cfg.ca_data),
            cert_file=cfg.client_cert_file or self._materialize(
                "client.crt", cfg.client_cert_data),
            key_file=cfg.client_key_file or self._materialize("client.key", cfg.client_key_data),
        )
        return self._transport

    def _materialize(self, name: str, data: str | None) -> str | None:
        """Write inline PEM data to a private temp file (ssl needs paths); removed on close."""
        if data is None:
            return None
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="asyncop-client-")
        path = os.path.join(self._tmpdir, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(data)
        return path

    async def close(self) -> None:
        """Close both sessions (idempotent)."""
        self._closed = True
        transport, self._transport = self._transport, None
        try:
            if transport is not None:
                await transport.close()
        finally:
            if self._tmpdir is not None:
                shutil.rmtree(self._tmpdir, ignore_errors=True)
                self._tmpdir = None

    def add_write_listener(self, cb: WriteListener) -> None:
        """Call `cb(kind, obj_or_None, key)` after every successful write.

        For a delete, `obj` is the object the server returned (still finalizing, or as
        deleted, carrying the delete's resourceVersion), or None when it answered a Status.
        """
        self._listeners.append(cb)

    # -- verbs --------------------------------------------------------------------------------

    def _ns(self, kind: Kind, namespace: str | None) -> str | None:
        if not kind.namespaced:
            return None
        return namespace or self.config.namespace

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> RawObject:
        ns = self._ns(kind, namespace)
        obj: RawObject = await self._call("GET", kind.path(ns, name), idempotent=True,
                                          verb="get", kind=kind, namespace=ns,
                                          accept=_accept(kind, many=False))
        return obj

    async def list(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        shard_selector: str | None = None,
    ) -> dict[str, Any]:
        """One page of a LIST; `namespace=None` on a namespaced Kind lists all namespaces.

        `shard_selector` is KEP-5866's `shardSelector`; a server that honours it echoes it in
        `metadata.shardInfo.selector` (see `asyncop.api.shards`)."""
        params: Params = []
        if label_selector:
            params.append(("labelSelector", label_selector))
        if field_selector:
            params.append(("fieldSelector", field_selector))
        if shard_selector:
            params.append(("shardSelector", shard_selector))
        if limit:
            params.append(("limit", str(limit)))
        if continue_:
            params.append(("continue", continue_))
        if resource_version is not None:
            params.append(("resourceVersion", resource_version))
        ns = namespace if kind.namespaced else None
        body: dict[str, Any] = await self._call("GET", kind.path(ns), params=params,
                                                idempotent=True, verb="list", kind=kind,
                                                namespace=ns, accept=_accept(kind, many=True))
        return body

    async def create(
        self, kind: Kind, obj: RawObject, *, namespace: str | None = None
    ) -> RawObject:
        ns = self._ns(kind, namespace or obj.get("metadata", {}).get("namespace"))
        created: RawObject = await self._call(
            "POST", kind.path(ns), body=orjson.dumps(obj), idempotent=False,
            verb="create", kind=kind, namespace=ns,
        )
        self._notify(kind, created)
        return created

    async def update(self, kind: Kind, obj: RawObject) -> RawObject:
        return await self._put(kind, obj, "")

    async def update_status(self, kind: Kind, obj: RawObject) -> RawObject:
        return await self._put(kind, obj, "status")

    async def _put(self, kind: Kind, obj: RawObject, subresource: str) -> RawObject:
        meta = obj["metadata"]
        ns = self._ns(kind, meta.get("namespace"))
        updated: RawObject = await self._call(
            "PUT", kind.path(ns, meta["name"], subresource), body=orjson.dumps(obj),
            idempotent=bool(meta.get("resourceVersion")), verb="update", kind=kind,
            subresource=subresource, namespace=ns,
        )
        self._notify(kind, updated)
        return updated

    async def patch(
        self,
        kind: Kind,
        name: str,
        body: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> RawObject:
        if patch_type not in CONTENT_TYPES:
            raise ValueError(f"unknown patch_type {patch_type!r}")
        params: Params = []
        if field_manager:
            params.append(("fieldManager", field_manager))
        if force is not None:
            params.append(("force", "true" if force else "false"))
        ns = self._ns(kind, namespace)
        patched: RawObject = await self._call(
            "PATCH",
            kind.path(ns, name, subresource),
            params=params,
            body=body if isinstance(body, bytes) else orjson.dumps(body),
            content_type=CONTENT_TYPES[patch_type],
            idempotent=patch_type == "apply",
            verb="apply" if patch_type == "apply" else "patch",
            kind=kind,
            subresource=subresource,
            namespace=ns,
        )
        self._notify(kind, patched)
        return patched

    async def apply(
        self, kind: Kind, obj: RawObject, *, field_manager: str, force: bool = True
    ) -> RawObject:
        """Server-side apply of `obj` (apiVersion and kind are filled in from `kind`)."""
        body = dict(obj)
        body.setdefault("apiVersion", kind.api_version)
        body.setdefault("kind", kind.kind)
        meta = obj["metadata"]
        return await self.patch(
            kind,
            meta["name"],
            body,
            namespace=meta.get("namespace"),
            patch_type="apply",
            field_manager=field_manager,
            force=force,
        )

    async def delete(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        preconditions: dict[str, str] | None = None,
        grace_period_seconds: int | None = None,
    ) -> RawObject | None:
        """Delete; returns the object if it still exists (finalizers), else None."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = preconditions
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        ns = self._ns(kind, namespace)
        result = await self._call(
            "DELETE", kind.path(ns, name), body=orjson.dumps(options), idempotent=True,
            verb="delete", kind=kind, namespace=ns,
        )
        key = f"{ns}/{name}" if ns else name
        if isinstance(result, dict) and result.get("kind") != "Status":
            obj: RawObject = result  # type: ignore[assignment]
            # the object as deleted (or still finalizing): its resourceVersion is the write's
            self._notify(kind, obj, key)
            return obj
        self._notify(kind, None, key)
        return None

    async def watch(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
        shard_selector: str | None = None,
        send_initial_events: bool = False,
    ) -> AsyncGenerator[WatchEvent, None]:
        """Raw watch events; ERROR events are yielded as they come (the caller decides).

        `send_initial_events`: a streaming list (KEP-3157): `sendInitialEvents=true` and
        `resourceVersionMatch=NotOlderThan` (bookmarks must be allowed); the server sends the
        current objects as ADDED, then a BOOKMARK annotated `k8s.io/initial-events-end`.
        A metadata-only Kind (`kind.metadata()`) watches PartialObjectMetadata.

        Raises the ApiError for a refused watch (e.g. `Gone` for an expired resourceVersion)
        and TransportError/RequestTimeout when the stream breaks or stays silent for longer
        than `timeout_seconds + 30` (or `watch_timeout` without timeout_seconds).
        """
        params: Params = [("watch", "true")]
        if resource_version is not None:
            params.append(("resourceVersion", resource_version))
        if allow_bookmarks:
            params.append(("allowWatchBookmarks", "true"))
        if send_initial_events:
            params.append(("sendInitialEvents", "true"))
            params.append(("resourceVersionMatch", "NotOlderThan"))
        if label_selector:
            params.append(("labelSelector", label_selector))
        if field_selector:
            params.append(("fieldSelector", field_selector))
        if shard_selector:
            params.append(("shardSelector", shard_selector))
        if timeout_seconds is not None:
            params.append(("timeoutSeconds", str(timeout_seconds)))
        read = (timeout_seconds + 30.0) if timeout_seconds is not None else self.watch_timeout
        transport = self._open()
        path = kind.path(namespace if kind.namespaced else None)
        headers = await self._headers(None, accept=_accept(kind, many=False))
        try:
            async with transport.stream(path, params, headers, connect_timeout=self.timeout,
                                        read_timeout=read) as resp:
                if resp.status != 200:
                    err = self._error(resp.status, await resp.read(), resp.headers)
                    if resp.status in (401, 403):
                        self._rejected(resp.status, "WATCH", path, err)
                    raise err
                self.auth.accepted()
                async for event in parse_events(resp.content.iter_any()):
                    yield event
        except TimeoutError as exc:
            raise RequestTimeout(f"watch {path} timed out") from exc
        except (ConnectFailed, ConnectionLost) as exc:
            raise TransportError(f"watch {path} failed: {exc}") from exc

    # -- plumbing -----------------------------------------------------------------------------

    def _notify(self, kind: Kind, obj: RawObject | None, key: str | None = None) -> None:
        if key is None:
            assert obj is not None
            if not (obj.get("metadata") or {}).get("name"):
                return  # a review (TokenReview, SubjectAccessReview): answered, not stored
            key = object_key(obj)
        for cb in self._listeners:
            try:
                cb(kind, obj, key)
            except Exception:
                log.exception("write listener failed", kind=str(kind), key=key)

    async def _headers(self, content_type: str | None, *,
                       accept: str | None = None) -> dict[str, str]:
        headers = {"Accept": accept or _JSON, "User-Agent": self._user_agent}
        auth = await self._credentials.authorization()
        if auth:
            headers["Authorization"] = auth
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _error(self, status: int, data: bytes, headers: Any) -> ApiError:
        try:
            body = orjson.loads(data) if data else None
        except orjson.JSONDecodeError:
            body = {"message": data[:500].decode(errors="replace")}
        if not isinstance(body, dict):
            body = None
        retry_after = parse_retry_after(headers.get("Retry-After"))
        if retry_after is None and body is not None:
            seconds = (body.get("details") or {}).get("retryAfterSeconds")
            retry_after = float(seconds) if isinstance(seconds, int | float) else None
        return error_from_status(status, body, retry_after=retry_after)

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: bytes | None = None,
        content_type: str = _JSON,
        idempotent: bool,
        verb: str = "",
        kind: Kind | None = None,
        subresource: str = "",
        namespace: str | None = None,
        span: Span | None = None,
        accept: str | None = None,
    ) -> Any:
        """Send one request with retries; return the parsed JSON body of the 2xx answer.
        Traced (one span over every attempt) when the Client has a tracer."""
        if span is None and self.tracer is not None:
            url = urlsplit(self.config.host)
            with tracing.request_span(
                    self.tracer, verb=verb or method.lower(), kind=kind,
                    subresource=subresource, method=method, url=self.config.host + path,
                    host=url.hostname or "", port=url.port, namespace=namespace) as span:
                return await self._call(method, path, params=params, body=body,
                                        content_type=content_type, idempotent=idempotent,
                                        span=span, accept=accept)
        transport = self._open()
        attempt = 0
        while True:
            headers = await self._headers(content_type if body is not None else None,
                                          accept=accept)
            if span is not None:
                tracing.inject(headers)
            try:
                status, resp_headers, data = await transport.call(
                    method, path, params, headers, body, timeout=self.timeout)
            except TimeoutError as exc:
                # a timeout already cost `timeout` seconds: retry it once at most
                if idempotent and attempt < min(1, self.max_retries):
                    await self._pause(attempt, method, path, None, "timeout", span)
                    attempt += 1
                    continue
                raise RequestTimeout(f"{method} {path} timed out after {self.timeout}s") from exc
            except (ConnectFailed, ConnectionLost) as exc:
                refused = isinstance(exc, ConnectFailed)
                if (idempotent or refused) and attempt < self.max_retries:
                    await self._pause(attempt, method, path, None, type(exc).__name__, span)
                    attempt += 1
                    continue
                raise TransportError(f"{method} {path} failed: {exc!r}") from exc
            if 200 <= status < 300:
                self.auth.accepted()
                if span is not None:
                    span.set_attribute("http.response.status_code", status)
                return loads(data) if data else {}
            err = self._error(status, data, resp_headers)
            if status in (401, 403):
                self._rejected(status, method, path, err)
            # a 5xx that says when to come back (overload, APF) was not processed: any verb
            retryable = status == 429 or (
                status >= 500 and (idempotent or err.retry_after is not None)
            )
            if retryable and attempt < self.max_retries:
                await self._pause(attempt, method, path, err.retry_after, str(status), span)
                attempt += 1
                continue
            raise err

    def _rejected(self, status: int, verb: str, path: str, err: ApiError) -> None:
        if status == 401:
            self._credentials.invalidate()
        self.auth.rejected(status, verb=verb, path=path, message=err.message)

    async def _pause(
        self, attempt: int, method: str, path: str, retry_after: float | None, why: str,
        span: Span | None,
    ) -> None:
        delay = retry_after if retry_after is not None else self.backoff.delay(attempt)
        log.info("request retried", verb=method, path=path, reason=why, attempt=attempt + 1,
                 delay=round(delay, 3))
        if span is not None:
            span.add_event("retry", {"asyncop.retry.reason": why,
                                     "asyncop.retry.attempt": attempt + 1,
                                     "asyncop.retry.delay_seconds": delay})
        await self.clock.sleep(delay)
