"""Metrics authentication: who may read /metrics and /debug/reconciles, asked of the API server.

controller-runtime's secure metrics (`filters.WithAuthenticationAndAuthorization`, what
kubebuilder projects enable with `--metrics-secure`), re-implemented: the caller's bearer
token is reviewed with a TokenReview, then the user is checked with a SubjectAccessReview for
the request's non-resource path and verb (`get /metrics`), so access is plain RBAC:

    rules: [{nonResourceURLs: ["/metrics", "/debug/reconciles"], verbs: ["get"]}]

Answers are worded as controller-runtime words them: no or an unknown token → 401
`Unauthorized`; a review that fails → 500 `Authentication failed` / `Authorization for user
U failed`; a denial → 403 `Authorization denied for user U`. Results are cached as there:
authenticated tokens for 1 minute, allowed decisions for 5 minutes, denied ones for 30
seconds (each cache an LRU of at most `max_entries`, on the clock), so a scrape every few
seconds costs the API server two reviews a minute. The operator's ServiceAccount needs
`create` on tokenreviews and subjectaccessreviews (the chart grants it with
`metrics.secure`). Invariant: nothing is served until both reviews said yes; a review that
cannot be made never lets a request through.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol, cast

import structlog
from aiohttp import web

from asyncop.api import Kind, RawObject
from asyncop.api.kinds import SUBJECTACCESSREVIEW, TOKENREVIEW
from asyncop.certs import Certificate, self_signed
from asyncop.clock import Clock
from asyncop.runtime.rbac import PolicyRule

log = structlog.get_logger("asyncop.runtime.metricsauth")

TOKEN_TTL = 60.0
ALLOW_TTL = 300.0
DENY_TTL = 30.0


class ReviewClient(Protocol):
    async def create(self, kind: Kind, obj: RawObject, *,
                     namespace: str | None = None) -> RawObject: ...


class _TTLCache:
    def __init__(self, clock: Clock, max_entries: int) -> None:
        self._clock = clock
        self._max = max_entries
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    def get(self, key: Any) -> Any:
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] < self._clock.monotonic():
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return item[1]

    def put(self, key: Any, value: Any, ttl: float) -> None:
        self._items[key] = (self._clock.monotonic() + ttl, value)
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)


def _text(status: int, message: str) -> web.Response:
    return web.Response(status=status, text=message + "\n")  # as Go's http.Error writes it


class MetricsAuth:
    """`authorize(request)` for the ProbeServer: None to serve, else the refusal."""

    def __init__(self, client: ReviewClient, *, clock: Clock, max_entries: int = 1024) -> None:
        self._client = client
        self._tokens = _TTLCache(clock, max_entries)
        self._decisions = _TTLCache(clock, max_entries)
        self.reviews = 0
        """TokenReviews and SubjectAccessReviews sent (the cache keeps this low)."""

    async def __call__(self, request: web.Request) -> web.Response | None:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return _text(401, "Unauthorized")
        try:
            user = await self._authenticate(token)
        except Exception as exc:
            log.error("Authentication failed", error=str(exc))
            return _text(500, "Authentication failed")
        if user is None:
            return _text(401, "Unauthorized")
        name = str(user.get("username") or "")
        verb, path = request.method.lower(), request.path
        try:
            allowed = await self._authorize(user, verb, path)
        except Exception as exc:
            message = f"Authorization for user {name} failed"
            log.error(message, error=str(exc))
            return _text(500, message)
        if not allowed:
            return _text(403, f"Authorization denied for user {name}")
        return None

    async def _authenticate(self, token: str) -> dict[str, Any] | None:
        cached = self._tokens.get(token)
        if cached is not None:
            return cast("dict[str, Any] | None", cached or None)
        self.reviews += 1
        review = await self._client.create(TOKENREVIEW, cast(RawObject, {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "metadata": {}, "spec": {"token": token}}))
        status = cast("dict[str, Any]", review).get("status") or {}
        user = status.get("user") if status.get("authenticated") else None
        user = user if isinstance(user, dict) and user.get("username") else None
        if user is not None:
            self._tokens.put(token, user, TOKEN_TTL)
        return user

    async def _authorize(self, user: dict[str, Any], verb: str, path: str) -> bool:
        groups = tuple(str(g) for g in user.get("groups") or ())
        key = (str(user.get("username")), groups, verb, path)
        cached = self._decisions.get(key)
        if cached is not None:
            return bool(cached)
        self.reviews += 1
        spec: dict[str, Any] = {"user": key[0], "groups": list(groups),
                                "nonResourceAttributes": {"path": path, "verb": verb}}
        if user.get("uid"):
            spec["uid"] = user["uid"]
        if user.get("extra"):
            spec["extra"] = user["extra"]
        review = await self._client.create(SUBJECTACCESSREVIEW, cast(RawObject, {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "metadata": {}, "spec": spec}))
        status = cast("dict[str, Any]", review).get("status") or {}
        allowed = bool(status.get("allowed")) and not status.get("denied")
        self._decisions.put(key, allowed, ALLOW_TTL if allowed else DENY_TTL)
        return allowed


RBAC_RULES: tuple[PolicyRule, ...] = (
    PolicyRule.for_(TOKENREVIEW, "create"),
    PolicyRule.for_(SUBJECTACCESSREVIEW, "create"),
)
"""What the operator needs for `--metrics-secure` (cluster-scoped: a ClusterRole)."""


class MetricsTLS:
    """The secure metrics listener's certificate: `cert_dir`'s tls.crt and tls.key (as
    controller-runtime's CertDir), else a self-signed one made at start (`openssl`) in a
    temporary directory that `cleanup()` removes."""

    def __init__(self, cert_dir: str | None) -> None:
        self.cert_dir = cert_dir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    async def context(self) -> ssl.SSLContext:
        if self.cert_dir:
            cert = Certificate(Path(self.cert_dir) / "tls.crt", Path(self.cert_dir) / "tls.key")
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="asyncop-metrics-")
            hosts = ["localhost", "127.0.0.1", socket.gethostname()]
            cert = await self_signed(Path(self._tmp.name), hosts=hosts, name="metrics")
        return await asyncio.to_thread(cert.server_context)

    def cleanup(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
