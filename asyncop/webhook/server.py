"""WebhookServer: an operator's admission and conversion webhooks, served over HTTPS.

Register handlers by path, then start the server:

    server = WebhookServer(port=9443)
    server.validating("/validate-widget", check)      # async def check(req) -> warnings | None
    server.mutating("/mutate-widget", default)        # async def default(req) -> new object | None
    server.conversion("/convert-widget", convert)     # def convert(obj, to_api_version) -> obj
    async with server:
        await client.create(server.validating_configuration(...))

A validating handler allows by returning (optionally a list of warnings) and refuses by
raising `Denied`. A mutating handler returns the object it wants (None: unchanged); the server
answers with the JSONPatch between the two. A conversion handler converts one object to the
desired apiVersion; the server converts every object of a ConversionReview and answers
Failure with the first error. Any other exception in a handler is a 500 answer (the API
server then applies the webhook's failurePolicy) and is logged.

TLS: with no certificate given, a development certificate for 127.0.0.1, localhost and the
`service` names you pass (`<name>.<namespace>.svc`) is generated in `cert_dir` (a temporary
directory by default); `ca_bundle` is what goes into clientConfig.caBundle. Invariants: every
answer echoes the request's uid and apiVersion; a malformed review is a 400 with a message;
handlers run on the event loop (keep them fast, they hold up the API request).
"""

from __future__ import annotations

import base64
import inspect
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import structlog
from aiohttp import web

from asyncop import certs
from asyncop.webhook.jsonpatch import diff
from asyncop.webhook.review import AdmissionRequest, Denied

log = structlog.get_logger("asyncop.webhook")

Validator = Callable[[AdmissionRequest], Awaitable[list[str] | None]]
Mutator = Callable[[AdmissionRequest], Awaitable[dict[str, Any] | None]]
Converter = Callable[[dict[str, Any], str], dict[str, Any] | Awaitable[dict[str, Any]]]


class WebhookServer:
    def __init__(self, *, host: str = "127.0.0.1", port: int = 0,
                 certificate: certs.Certificate | None = None, cert_dir: Path | None = None,
                 service: tuple[str, str] | None = None) -> None:
        """`service`: (namespace, name) of the Service that fronts this server in a cluster,
        added to the development certificate's names."""
        self.host = host
        self._requested_port = port
        self._port: int | None = None
        self._certificate = certificate
        self._cert_dir = cert_dir
        self._service = service
        self._routes: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {}
        self._runner: web.AppRunner | None = None

    # --- registration ------------------------------------------------------------------------

    def validating(self, path: str, handler: Validator) -> None:
        self._add(path, lambda review: self._admit(review, handler, mutating=False))

    def mutating(self, path: str, handler: Mutator) -> None:
        self._add(path, lambda review: self._admit(review, handler, mutating=True))

    def conversion(self, path: str, handler: Converter) -> None:
        self._add(path, lambda review: self._convert(review, handler))

    def _add(self, path: str, fn: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]) -> None:
        if not path.startswith("/"):
            raise ValueError(f"a webhook path starts with '/': {path!r}")
        if path in self._routes:
            raise ValueError(f"a webhook is already registered at {path!r}")
        self._routes[path] = fn

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the webhook server is not started")
        return self._port

    def url(self, path: str) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}{path}"

    @property
    def ca_bundle(self) -> str:
        """base64 of the PEM clients must trust (clientConfig.caBundle)."""
        if self._certificate is None:
            raise RuntimeError("the webhook server is not started")
        return base64.b64encode(self._certificate.pem()).decode("ascii")

    async def start(self) -> None:
        if self._runner is not None:
            return
        if self._certificate is None:
            directory = self._cert_dir or Path(tempfile.mkdtemp(prefix="asyncop-webhook-"))
            hosts = ["127.0.0.1", "localhost", self.host]
            if self._service is not None:
                ns, name = self._service
                hosts += [f"{name}.{ns}.svc", f"{name}.{ns}.svc.cluster.local"]
            self._certificate = await certs.self_signed(directory, hosts=hosts,
                                                        name="webhook")
        app = web.Application()
        app.router.add_route("POST", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False,
                               shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._requested_port,
                           ssl_context=self._certificate.server_context())
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        sockets = getattr(site._server, "sockets", None) or []
        self._port = int(sockets[0].getsockname()[1]) if sockets else self._requested_port
        self._runner = runner
        log.info("webhook server started", url=self.url(""), paths=sorted(self._routes))

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> WebhookServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- configuration manifests -------------------------------------------------------------

    def client_config(self, path: str) -> dict[str, Any]:
        """clientConfig for a webhook at `path`: the Service if one was named, else the URL."""
        if self._service is not None:
            ns, name = self._service
            return {"service": {"namespace": ns, "name": name, "path": path, "port": 443},
                    "caBundle": self.ca_bundle}
        return {"url": self.url(path), "caBundle": self.ca_bundle}

    def validating_configuration(self, name: str, webhooks: list[dict[str, Any]],
                                 ) -> dict[str, Any]:
        return self._configuration("ValidatingWebhookConfiguration", name, webhooks)

    def mutating_configuration(self, name: str, webhooks: list[dict[str, Any]],
                               ) -> dict[str, Any]:
        return self._configuration("MutatingWebhookConfiguration", name, webhooks)

    def _configuration(self, kind: str, name: str, webhooks: list[dict[str, Any]],
                       ) -> dict[str, Any]:
        """Each webhook dict names its `path` (replaced by clientConfig) plus any v1 fields;
        sideEffects None and admissionReviewVersions [v1] unless given."""
        out = []
        for hook in webhooks:
            hook = dict(hook)
            path = hook.pop("path")
            hook.setdefault("clientConfig", self.client_config(path))
            hook.setdefault("sideEffects", "None")
            hook.setdefault("admissionReviewVersions", ["v1"])
            out.append(hook)
        return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                "metadata": {"name": name}, "webhooks": out}

    # --- requests ----------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        fn = self._routes.get(request.path)
        if fn is None:
            return web.json_response({"error": f"no webhook at {request.path}"}, status=404)
        try:
            review = orjson.loads(await request.read())
        except orjson.JSONDecodeError as exc:
            return web.json_response({"error": f"the body is not JSON: {exc}"}, status=400)
        if not isinstance(review, dict) or not isinstance(review.get("request"), dict):
            return web.json_response({"error": "the body is not a review with a request"},
                                     status=400)
        try:
            answer = await fn(review)
        except Exception:
            log.exception("webhook handler failed", path=request.path)
            return web.json_response({"error": "the webhook handler failed"}, status=500)
        return web.Response(body=orjson.dumps(answer), content_type="application/json")

    async def _admit(self, review: dict[str, Any], handler: Callable[[AdmissionRequest], Any],
                     *, mutating: bool) -> dict[str, Any]:
        original = review["request"].get("object")
        # the handler gets its own copy: it may edit the object in place and return it
        req = AdmissionRequest(orjson.loads(orjson.dumps(review["request"])))
        response: dict[str, Any] = {"uid": req.uid, "allowed": True}
        try:
            result = await handler(req)
        except Denied as denied:
            response = {"uid": req.uid, "allowed": False, "status": denied.status()}
        else:
            if mutating and isinstance(result, dict) and isinstance(original, dict):
                ops = diff(original, result)
                if ops:
                    response["patchType"] = "JSONPatch"
                    response["patch"] = base64.b64encode(orjson.dumps(ops)).decode("ascii")
            elif not mutating and result:
                response["warnings"] = [str(w) for w in result]
        return {"apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
                "kind": "AdmissionReview", "response": response}

    async def _convert(self, review: dict[str, Any], handler: Converter) -> dict[str, Any]:
        req = review["request"]
        desired = str(req.get("desiredAPIVersion", ""))
        converted: list[dict[str, Any]] = []
        response: dict[str, Any] = {"uid": req.get("uid", "")}
        try:
            for obj in req.get("objects") or ():
                out = handler(obj, desired)
                if inspect.isawaitable(out):
                    out = await out
                converted.append(out)
        except Exception as exc:
            response["result"] = {"status": "Failure", "message": str(exc)}
            response["convertedObjects"] = []
        else:
            response["result"] = {"status": "Success"}
            response["convertedObjects"] = converted
        return {"apiVersion": review.get("apiVersion", "apiextensions.k8s.io/v1"),
                "kind": "ConversionReview", "response": response}


__all__ = ["Converter", "Mutator", "Validator", "WebhookServer"]
