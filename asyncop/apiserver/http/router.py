"""URL dispatch for the embedded API server: discovery, OpenAPI, health and resource paths.

One catch-all aiohttp handler parses `/api/v1/...` and `/apis/<g>/<v>/...` into a `Target`,
derives the kube verb (get, list, watch, create, update, patch, delete, deletecollection),
applies injected faults, and calls the object or watch routes. Invariant: every failure,
including unknown paths and unexpected exceptions, is answered with a Status body.
"""

from __future__ import annotations

from typing import Any

import structlog
from aiohttp import web

from asyncop.api import ApiError, status_body
from asyncop.apiserver.core import errors, reviews
from asyncop.apiserver.core.registry import CRD_GR
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.http import binding, bodylimits, discovery
from asyncop.apiserver.http.auth import TokenAuthority, check_token
from asyncop.apiserver.http.faults import Faults
from asyncop.apiserver.http.metrics import RequestMetrics
from asyncop.apiserver.http.objects import ObjectRoutes
from asyncop.apiserver.http.rbac import Authorizer
from asyncop.apiserver.http.watches import WatchRoutes
from asyncop.apiserver.http.wire import (
    Target,
    check_acceptable,
    error_response,
    json_response,
    query_bool,
    read_body,
)
from asyncop.apiserver.openapi.service import OpenAPIService
from asyncop.apiserver.storage.store import Store
from asyncop.apiserver.webhooks.caller import Caller
from asyncop.clock import Clock, wait_for

log = structlog.get_logger("asyncop.apiserver.http.wire")

MAX_REQUEST_BYTES = bodylimits.MAX_DECODED_BYTES
"""kube-apiserver's limit on a request body (3 MiB); larger bodies are answered 413."""
BODY_TIMEOUT = 60.0
"""kube-apiserver's default request timeout (s): a body must have arrived within it (504)."""

_COUNTED = web.RequestKey("asyncop.counted", tuple)
"""Request key holding (verb, Target) once a resource request is parsed (for the metrics)."""

#: real subresources that need a kubelet or a network path: refused with a clear message
UNSUPPORTED_SUBRESOURCES = frozenset({
    ("pods", "exec"), ("pods", "attach"), ("pods", "portforward"), ("pods", "proxy"),
    ("pods", "eviction"), ("pods", "ephemeralcontainers"),
    ("pods", "resize"), ("services", "proxy"), ("nodes", "proxy"),
})


class Router:
    def __init__(self, *, store: Store, clock: Clock, faults: Faults, version: tuple[str, str],
                 bookmark_interval: float, address: str, token: str | None = None,
                 metrics: RequestMetrics | None = None,
                 authorizer: Authorizer | None = None,
                 body_timeout: float = BODY_TIMEOUT) -> None:
        self.store = store
        self.body_timeout = body_timeout
        self.token = token
        self.authorizer = authorizer
        self.clock = clock
        self.faults = faults
        self.version = version
        self.git_version = f"v{version[0]}.{version[1]}.0"
        self.address = address
        self.webhooks = Caller(store)
        self.objects = ObjectRoutes(store, self.webhooks)
        self.watches = WatchRoutes(store, clock, bookmark_interval=bookmark_interval,
                                   conversion=self.objects.conversion)
        self.metrics = metrics if metrics is not None else RequestMetrics()
        self.openapi = OpenAPIService()

    async def close(self) -> None:
        """Release what outlives requests (the webhook client session)."""
        await self.webhooks.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            if self.authorizer is None:
                check_token(request.path, request.headers.get("Authorization", ""), self.token)
            else:
                self.authorizer.authenticate(request)
            if request.body_exists and not request.content.is_eof():
                await self._read_slow_body(request)
            response = await self._dispatch(request)
        except ApiError as err:
            response = error_response(err)
        except web.HTTPRequestEntityTooLarge:
            response = error_response(errors.too_large(f"limit is {MAX_REQUEST_BYTES}"))
        except Exception as exc:
            log.exception("request failed", method=request.method, path=request.path)
            response = error_response(errors.internal(str(exc)))
        counted = request.get(_COUNTED)
        if counted is not None:
            headers = request.headers
            self.metrics.count(verb=counted[0], target=counted[1], code=response.status,
                               user_agent=headers.get("User-Agent", ""),
                               content_type=headers.get("Content-Type", ""))
        return response

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        parts = [p for p in path.split("/") if p]
        method = request.method
        if parts and parts[0] in ("api", "apis"):
            target, prefix_only = self._parse(parts)
            if target is None:
                if self.authorizer is not None:
                    self.authorizer.check_path(request, path)
                return await self._discovery(request, parts, prefix_only)
            verb = _verb(method, target, request)
            if self.authorizer is not None:
                self.authorizer.check(request, verb, target)
            request[_COUNTED] = (verb, target)
            await self._faults(verb, request.path)
            return await self._resource(request, target, verb)
        if self.authorizer is not None:
            self.authorizer.check_path(request, path)
        if method != "GET":
            raise errors.method_not_allowed() if path in (
                "/version", "/healthz", "/livez", "/readyz") else errors.path_not_found()
        await self._faults("get", request.path)
        if path == "/version":
            return json_response(discovery.version_info(*self.version))
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok", content_type="text/plain")
        if path == "/metrics":
            return web.Response(text=self.metrics.render(), content_type="text/plain",
                                charset="utf-8", headers={"X-Content-Type-Options": "nosniff"})
        if path == "/openapi/v2" or path.startswith("/openapi/v3"):
            return self._openapi(request, path)
        raise errors.path_not_found()

    def _openapi(self, request: web.Request, path: str) -> web.StreamResponse:
        """`/openapi/v2`, `/openapi/v3` and `/openapi/v3/<gv>` (openapi/service.py)."""
        types = self.store.registry.all_types()
        minor, version = self.version[1], self.git_version
        headers = request.headers
        if path == "/openapi/v2":
            served = self.openapi.v2(types, minor=minor, server_version=version,
                                     accept=headers.get("Accept", ""),
                                     if_none_match=headers.get("If-None-Match", ""))
        elif path == "/openapi/v3":
            served = self.openapi.v3_index(types, minor=minor, server_version=version)
        else:
            found = self.openapi.v3_group(
                types, path.removeprefix("/openapi/v3/"), minor=minor, server_version=version,
                query_hash=request.query.get("hash"),
                if_none_match=headers.get("If-None-Match", ""), now=self.clock.now())
            if found is None:
                raise errors.path_not_found()
            served = found
        return web.Response(status=served.status, body=served.body or None,
                            headers=served.headers)

    async def _read_slow_body(self, request: web.Request) -> None:
        """A body still arriving after its headers: read it (aiohttp keeps it for the
        handlers) within `body_timeout`, else 504 as kube's request timeout answers. A body
        that came with its headers, the common case, never gets here."""
        try:
            await wait_for(self.clock, request.read(), self.body_timeout)
        except TimeoutError:
            raise ApiError(status_body(
                504, "Timeout: request did not complete within the allotted timeout",
                reason="Timeout", retry_after_seconds=0)) from None

    async def _faults(self, verb: str, path: str) -> None:
        seconds = self.faults.delay_for(verb, path)
        if seconds > 0:
            await self.clock.sleep(seconds)
        failure = self.faults.failure_for(verb, path)
        if failure is not None:
            err = ApiError(failure.body, retry_after=failure.retry_after)
            err.code = failure.status
            raise err

    def _parse(self, parts: list[str]) -> tuple[Target | None, bool]:
        """Resource target, or (None, True) for a discovery path."""
        if parts[0] == "api":
            if len(parts) <= 2:
                return None, True
            group, version, rest = "", parts[1], parts[2:]
        else:
            if len(parts) <= 3:
                return None, True
            group, version, rest = parts[1], parts[2], parts[3:]
        watch_path = False
        if rest and rest[0] == "watch":
            watch_path = True
            rest = rest[1:]
        namespace: str | None = None
        namespace_object = (group == "" and len(rest) == 3 and rest[0] == "namespaces"
                            and rest[2] in ("status", "finalize"))
        if len(rest) >= 3 and rest[0] == "namespaces" and not namespace_object:
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise errors.path_not_found()
        rt = self.store.registry.resolve(group, version, rest[0])
        if rt is None:
            raise errors.path_not_found()
        if rt.namespaced is False and namespace is not None:
            raise errors.path_not_found()
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) == 3 else ""
        if (rt.plural, sub) in UNSUPPORTED_SUBRESOURCES and rt.group == "":
            raise errors.bad_request(
                f"{rt.plural}/{sub} is not supported by the asyncop embedded API server "
                "(nothing runs on the simulated node)")
        if sub and not ((sub == "status" and rt.has_status) or (sub == "scale" and rt.scale)
                        or (sub == "finalize" and rt.gr == ("", "namespaces"))
                        or (sub in ("log", "binding") and rt.gr == ("", "pods"))):
            raise errors.path_not_found()
        return Target(rt, namespace, name, sub, watch_path), False

    async def _discovery(self, request: web.Request, parts: list[str],
                         _prefix: bool) -> web.StreamResponse:
        if request.method != "GET":
            raise errors.method_not_allowed()
        await self._faults("get", request.path)
        registry = self.store.registry
        accept = request.headers.get("Accept", "")
        if len(parts) == 1:
            agg = discovery.aggregated_version(accept)
            if agg is not None:
                body = discovery.aggregated(registry, core=parts[0] == "api", version=agg)
                return json_response(body, content_type=discovery.AGGREGATED_CT.format(v=agg))
            if parts[0] == "api":
                return json_response(discovery.api_versions(self.address))
            return json_response(discovery.api_group_list(registry))
        if parts[0] == "api":
            doc = discovery.resource_list(registry, "", parts[1])
        elif len(parts) == 2:
            doc = discovery.api_group(registry, parts[1])
        else:
            doc = discovery.resource_list(registry, parts[1], parts[2])
        if doc is None:
            raise errors.path_not_found()
        return json_response(doc)

    async def _resource(self, request: web.Request, t: Target, verb: str) -> web.StreamResponse:
        check_acceptable(request)
        if verb == "watch":
            return await self.watches.watch(request, t)
        response = await self._verb(request, t, verb)
        warning = self._deprecation(t.rt) if t.rt.is_custom else None
        if warning:
            response.headers.add("Warning", f'299 - "{warning}"')
        return response

    def _deprecation(self, rt: ResourceType) -> str | None:
        """The Warning text for a deprecated CRD version (V-1), or None."""
        crd = self.store.raw_get(CRD_GR, "", rt.crd_name or "")
        if crd is None:
            return None
        for version in (crd.get("spec") or {}).get("versions") or []:
            if version.get("name") == rt.version and version.get("deprecated"):
                text = version.get("deprecationWarning")
                if text:
                    return str(text).replace('"', "'")
                text = f"{rt.group}/{rt.version} {rt.kind} is deprecated"
                if rt.storage_version and rt.storage_version != rt.version:
                    text += f"; use {rt.group}/{rt.storage_version} {rt.kind}"
                return text
        return None

    async def _review(self, request: web.Request, t: Target) -> dict[str, Any]:
        content_type = request.headers.get("Content-Type", "")
        if "protobuf" in content_type:
            await request.read()
            body: Any = {}  # the answer does not depend on the (typed-client) request body
        else:
            body = await read_body(request)
        if not isinstance(body, dict):
            raise errors.bad_request("the request body is not a JSON object")
        return reviews.answer(t.rt, body, t.namespace, self._authority(request))

    def _authority(self, request: web.Request) -> reviews.Authority:
        """Who answers the review APIs: the RBAC mode for its user, the token mode, or the
        open (anonymous, allow-all) server."""
        if self.authorizer is not None:
            return self.authorizer.authority(request)
        if self.token is not None:
            return TokenAuthority(self.token)
        return reviews.OPEN

    async def _verb(self, request: web.Request, t: Target, verb: str) -> web.StreamResponse:
        if verb == "get":
            if t.subresource == "log":
                return self.objects.pod_log(request, t)
            return await self.objects.get(request, t)
        if verb == "list":
            return await self.objects.list(request, t)
        if verb not in t.rt.verbs and not t.subresource:
            raise errors.method_not_allowed()
        if verb == "create":
            if t.subresource == "binding":
                return await binding.create(self.store, request, t)
            if reviews.is_review(t.rt):
                return json_response(await self._review(request, t), status=201)
            return await self.objects.create(request, t)
        if verb == "update":
            return await self.objects.update(request, t)
        if verb == "patch":
            return await self.objects.patch(request, t)
        if verb == "delete":
            return await self.objects.delete(request, t)
        if verb == "deletecollection":
            return await self.objects.delete_collection(request, t)
        raise errors.method_not_allowed()


def _verb(method: str, t: Target, request: web.Request) -> str:
    if t.subresource == "binding":
        if method != "POST":
            raise errors.method_not_allowed()
        return "create"
    if t.subresource and method not in ("GET", "PUT", "PATCH"):
        raise errors.method_not_allowed()
    if t.subresource == "finalize" and method != "PUT":
        raise errors.method_not_allowed()
    if t.subresource == "log" and method != "GET":
        raise errors.method_not_allowed()
    if method == "GET":
        if t.watch_path or query_bool(request, "watch"):
            if t.subresource:
                raise errors.method_not_allowed()
            return "watch"
        return "get" if t.name else "list"
    if t.watch_path:
        raise errors.method_not_allowed()
    if method == "POST":
        if t.name:
            raise errors.method_not_allowed()
        return "create"
    if method == "PUT":
        if not t.name:
            raise errors.method_not_allowed()
        return "update"
    if method == "PATCH":
        if not t.name:
            raise errors.method_not_allowed()
        return "patch"
    if method == "DELETE":
        return "delete" if t.name else "deletecollection"
    raise errors.method_not_allowed()
