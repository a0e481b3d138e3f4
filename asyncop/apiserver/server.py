"""ApiServer: the embedded in-memory Kubernetes API server over real HTTP (aiohttp).

`async with ApiServer() as srv:` binds 127.0.0.1 on a free port (or the given one), serves
discovery, OpenAPI, CRUD, watch and subresources for built-in kinds and CRDs created at run
time, and runs the cluster simulators when enabled. `restart()` rebinds the same port,
keeping or dropping the store. Invariants: binds only to the requested host (127.0.0.1 by
default), and to a non-loopback one only with TLS and a token (bindpolicy); stop() closes
every watch stream before the listener so clients see a clean end.
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import structlog
import yaml
from aiohttp import web

from asyncop import kubespec
from asyncop.apiserver.bindpolicy import check_bind
from asyncop.apiserver.http import malformed, watchlist
from asyncop.apiserver.http.auth import self_signed
from asyncop.apiserver.http.faults import Faults
from asyncop.apiserver.http.metrics import RequestMetrics
from asyncop.apiserver.http.rbac import Authorizer
from asyncop.apiserver.http.router import BODY_TIMEOUT, MAX_REQUEST_BYTES, Router
from asyncop.apiserver.storage.store import Store
from asyncop.certs import Certificate
from asyncop.clock import Clock, RealClock

if TYPE_CHECKING:
    from asyncop.apiserver.simulators.config import SimulatorConfig

log = structlog.get_logger("asyncop.apiserver")

HEADER_TIMEOUT = 32.0
"""kube-apiserver's ReadHeaderTimeout (seconds): a request's headers must arrive within it."""
MAX_HEADER_BYTES = 1 << 20
"""kube-apiserver's MaxHeaderBytes: here the limit of the request line (URL, selectors); header
fields have theirs in `http/malformed.py`."""


class ApiServer:
    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, clock: Clock | None = None,
                 simulators: bool | SimulatorConfig = True, history: int = 10_000,
                 version: tuple[str, str] = ("1", "33"), bookmark_interval: float = 60.0,
                 watch_queue_size: int = 10_000, seed: int | None = None, tls: bool = False,
                 token: str | None = None, cert_dir: str | Path | None = None,
                 feature_gates: dict[str, bool] | None = None,
                 header_timeout: float = HEADER_TIMEOUT,
                 body_timeout: float = BODY_TIMEOUT,
                 authorizer: Authorizer | None = None) -> None:
        """`tls=True` serves HTTPS with a generated self-signed certificate (in `cert_dir`,
        or a temporary directory); `token` requires `Authorization: Bearer <token>`;
        `feature_gates` switches gates on or off (ShardedListAndWatch is on by default,
        WatchList as in kube-apiserver of the reported minor: off in 1.33);
        `header_timeout` closes a connection whose next request's headers have not all
        arrived that many seconds after it opened or after its last response (slowloris);
        `body_timeout` answers 504 when a request's body has not all arrived in time;
        `authorizer` turns on RBAC (asyncop.apiserver.http.rbac: users by bearer token).
        A host other than a loopback address needs `tls=True` and a token or an authorizer
        (bindpolicy.InsecureBind otherwise)."""
        check_bind(host, tls=tls, authenticated=token is not None or authorizer is not None)
        self.host = host
        self.authorizer = authorizer
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.tls = tls
        self.token = token
        self._cert_dir = Path(cert_dir) if cert_dir is not None else None
        self._certificate: Certificate | None = None
        self._requested_port = port
        self.clock: Clock = clock or RealClock()
        self.simulators = simulators
        self.history = history
        self.version = version
        self.bookmark_interval = bookmark_interval
        self.watch_queue_size = watch_queue_size
        self.seed = seed
        gates = {"ShardedListAndWatch": True,
                 watchlist.GATE: watchlist.watch_list_default(served_minor(version)),
                 **(feature_gates or {})}
        self.features = frozenset(name for name, on in gates.items() if on)
        self.faults = Faults()
        self.metrics = RequestMetrics()
        """apiserver_request_total and requests by client, served at /metrics."""
        self._store: Store | None = None
        self._runner: web.AppRunner | None = None
        self._router: Router | None = None
        self._port = 0
        self._sim_tasks: list[asyncio.Task[Any]] = []

    # --- lifecycle -------------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(clock=self.clock, history=self.history, seed=self.seed,
                                watch_queue_size=self.watch_queue_size,
                                features=self.features, minor=served_minor(self.version))
        return self._store

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0", "::") else self.host
        if ":" in host:
            host = f"[{host}]"  # an IPv6 literal in a URL (RFC 3986)
        return f"{'https' if self.tls else 'http'}://{host}:{self._port}"

    @property
    def ca_pem(self) -> bytes | None:
        """The PEM of the self-signed certificate clients must trust (HTTPS mode)."""
        return self._certificate.pem() if self._certificate is not None else None

    async def start(self) -> None:
        if self._runner is not None:
            return
        store = self.store
        self.faults.attach(store)
        port = self._port or self._requested_port
        router = Router(store=store, clock=self.clock, faults=self.faults,
                        version=self.version, bookmark_interval=self.bookmark_interval,
                        address=f"{self.host}:{port}", token=self.token,
                        metrics=self.metrics, authorizer=self.authorizer,
                        body_timeout=self.body_timeout)
        context = None
        if self.tls:
            if self._certificate is None:
                if self._cert_dir is None:
                    self._cert_dir = Path(tempfile.mkdtemp(prefix="asyncop-apiserver-"))
                self._certificate = await self_signed(self._cert_dir, host=self.host)
            context = self._certificate.server_context()
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{tail:.*}", router.handle)
        # handler_cancellation: a watch whose client went away ends at once (handlers never
        # await between validation and commit, so a cancelled write is all-or-nothing)
        # keepalive_timeout: aiohttp closes a connection that has not delivered a complete
        # request this long after it opened or after its last response, however many header
        # bytes trickled in meanwhile (slowloris); long selectors fit in MAX_HEADER_BYTES
        runner = web.AppRunner(app, access_log=None, handle_signals=False,
                               shutdown_timeout=0.5, handler_cancellation=True,
                               keepalive_timeout=self.header_timeout,
                               max_line_size=MAX_HEADER_BYTES,
                               max_headers=malformed.MAX_HEADERS,
                               max_field_size=malformed.MAX_FIELD_BYTES)
        await runner.setup()
        malformed.install(runner)
        site = web.TCPSite(runner, self.host, port, reuse_address=True, ssl_context=context)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self._port = int(sockets[0].getsockname()[1]) if sockets else port
        router.address = f"{self.host}:{self._port}"
        self._runner = runner
        self._router = router
        self._start_simulators(store)
        log.debug("apiserver started", url=self.url)

    def _start_simulators(self, store: Store) -> None:
        if self.simulators is False or self.simulators is None:
            return
        try:
            module = importlib.import_module("asyncop.apiserver.simulators")
        except ImportError:
            return
        start = getattr(module, "start_simulators", None)
        config_cls = getattr(module, "SimulatorConfig", None)
        if start is None or config_cls is None:
            return
        config = config_cls() if self.simulators is True else self.simulators
        self._sim_tasks = list(start(store, self.clock, config))

    async def stop(self) -> None:
        tasks, self._sim_tasks = self._sim_tasks, []
        for task in tasks:
            task.cancel()
        if tasks:  # their CancelledErrors are collected; our own cancellation propagates
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._store is not None:
            self._store.hub.cut()
        runner, self._runner = self._runner, None
        router, self._router = self._router, None
        if runner is not None:
            await _stop_accepting(runner)
            await runner.cleanup()
        if router is not None:
            await router.close()
            log.debug("apiserver stopped", url=self.url)

    async def restart(self, *, keep_state: bool = True) -> None:
        """Stop and start again on the same port, keeping (or dropping) every object."""
        await self.stop()
        if not keep_state:
            self._store = None
        await self.start()

    async def __aenter__(self) -> ApiServer:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.stop()

    # --- clients ---------------------------------------------------------------------------------

    def kubeconfig(self, *, namespace: str = "default") -> dict[str, Any]:
        cluster: dict[str, Any] = {"server": self.url}
        if self._certificate is not None:
            cluster["certificate-authority-data"] = base64.b64encode(
                self._certificate.pem()).decode()
        user: dict[str, Any] = {"token": self.token} if self.token else {}
        return {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "asyncop", "cluster": cluster}],
            "users": [{"name": "asyncop", "user": user}],
            "contexts": [{"name": "asyncop", "context": {
                "cluster": "asyncop", "user": "asyncop", "namespace": namespace}}],
            "current-context": "asyncop", "preferences": {},
        }

    def write_kubeconfig(self, path: str | Path, *, namespace: str = "default") -> Path:
        """Write the kubeconfig readable by its owner only (0600, as kubectl writes its
        own): it may hold the bearer token."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(self.kubeconfig(namespace=namespace), sort_keys=False)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return target


def served_minor(version: tuple[str, str]) -> int:
    """The minor whose kube schemas decode built-in kinds for a reported version: that
    minor's, else the nearest one kubespec has (`("1", "33")` → 33)."""
    digits = "".join(c for c in version[1] if c.isdigit())
    minor = int(digits) if digits else kubespec.DEFAULT_MINOR
    have = kubespec.minors()
    if minor in have or not have:
        return minor if have else kubespec.DEFAULT_MINOR
    return min(have, key=lambda m: (abs(m - minor), -m))


async def _stop_accepting(runner: web.AppRunner) -> None:
    """Stop accepting connections, then let the ones just accepted attach to the server.

    asyncio (3.11) accepts a connection in one loop turn and attaches it to its Server in the
    next; a Server closed in between fails that attach silently and leaks the socket open and
    unread, so a client's request on it would wait for ever. Taking the listening sockets out
    of the selector first, and closing the Server only after the pending attaches ran, makes
    every accepted connection one that the shutdown closes.
    """
    loop = asyncio.get_running_loop()
    if not isinstance(loop, asyncio.selector_events.BaseSelectorEventLoop):
        return  # uvloop attaches in the accept itself
    for site in list(runner.sites):
        server = getattr(site, "_server", None)
        for sock in getattr(server, "sockets", None) or ():
            loop.remove_reader(sock.fileno())
    for _ in range(3):
        await asyncio.sleep(0)

