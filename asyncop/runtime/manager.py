"""Manager: owns everything a set of controllers shares, and starts and stops it in order.

One Manager holds the Client (created from `config` when not given), the Cache (one shared
informer per kind), the Metrics, the EventRecorders, the controllers, the LeaderElector and
the probes/metrics HTTP server. Usable inside any asyncio program:

    async with Manager(config=cfg) as mgr:   # or: await mgr.start() ... await mgr.stop()
        mgr.add(controller)                  # also after start
        await mgr.wait()                     # until stop() or a fatal error

Invariants:
- Informers start at once on every replica (a standby keeps warm caches); controllers, and
  so their event handlers, run only while leading (at once without leader election); losing
  the lease cancels every controller at once, and with `exit_on_lost_lease` makes `wait()` raise
  `LeaderElectionLost` (the CLI then exits non-zero, like controller-runtime).
- Shutdown order: controllers (drained within `graceful_shutdown_timeout`, which is also each
  controller's `grace_period` unless it set its own), informers,
  recorders (flushed), the lease (released), the HTTP server, the client (if owned).
- No global state; signal handlers only with `install_signal_handlers=True` (the CLI).
  Every task the Manager starts is tracked and awaited by `stop()`: nothing is left pending.
- Observability (docs/observability.md): tracing is on when `tracer_provider` is given or
  the process has set up an OpenTelemetry provider (`asyncop.client.tracing.tracer_for`):
  the Client, the recorders and the controllers then share one tracer. `debug_endpoints`
  keeps the last `reconcile_history` reconciles of each key and serves
  `/debug/reconciles` on the metrics address (`asyncop.runtime.debug`; none without one).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
import socket
import uuid
from collections.abc import Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from asyncop.api import Kind
from asyncop.api.shards import ShardSpace
from asyncop.client import Client, ClientConfig
from asyncop.client.tracing import tracer_for
from asyncop.clock import Clock, RealClock, wait_for
from asyncop.gcpolicy import GcPolicy
from asyncop.runtime.cache import Cache
from asyncop.runtime.debug import Explainer, ownership
from asyncop.runtime.health import Health, LoopLagProbe
from asyncop.runtime.leader import LeaderElectionConfig, LeaderElector
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.metricsauth import MetricsAuth, MetricsTLS
from asyncop.runtime.observe import DEFAULT_HISTORY, Observing
from asyncop.runtime.recorder import EventRecorder
from asyncop.runtime.server import ProbeServer, parse_bind_address
from asyncop.runtime.sharding import ShardingConfig, ShardManager
from asyncop.runtime.shards import ShardScope

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

log = structlog.get_logger("asyncop.manager")

STALL_FACTOR = 3.0
"""An informer is stalled after this many watchdog periods without progress."""


class Runnable(Protocol):
    """What the Manager runs while leading: a Controller, or anything shaped like one.

    `run()` is cancelled when the Manager stops (or loses its lease); `grace_period` is the
    Manager's `graceful_shutdown_timeout`, the time it may take to drain before the Manager
    cancels it outright (one second later).
    """

    name: str

    async def run(
        self, *, cache: Cache, clock: Clock, metrics: Metrics | None = None,
        client: Client | None = None, grace_period: float | None = None,
    ) -> None: ...
    # A sharded Manager also passes `shards=ShardScope`, and one that traces or serves
    # /debug/reconciles `observing=Observing` to runnables with an `observer` attribute (a
    # Controller accepts both).


class LeaderElectionLost(RuntimeError):
    """The Manager lost its lease; its controllers were stopped."""


def default_identity() -> str:
    """`$POD_NAME` (or the host name) plus a random suffix, like controller-runtime."""
    base = os.environ.get("POD_NAME") or socket.gethostname()
    return f"{base}_{uuid.uuid4().hex[:8]}"


class Manager:
    def __init__(
        self,
        *,
        config: ClientConfig | None = None,
        client: Client | None = None,
        clock: Clock | None = None,
        namespaces: str | set[str] | list[str] | None = None,
        leader_election: LeaderElectionConfig | None = None,
        sharding: ShardingConfig | None = None,
        metrics_bind_address: str | None = None,
        health_probe_bind_address: str | None = None,
        graceful_shutdown_timeout: float = 10.0,
        exit_on_lost_lease: bool = False,
        install_signal_handlers: bool = False,
        gc_freeze: bool = False,
        tracer_provider: TracerProvider | None = None,
        debug_endpoints: bool = False,
        reconcile_history: int = DEFAULT_HISTORY,
        metrics_secure: bool = False,
        metrics_cert_dir: str | None = None,
    ) -> None:
        if (config is None) == (client is None):
            raise ValueError("pass exactly one of config= or client=")
        self.clock: Clock = clock or (client.clock if client is not None else RealClock())
        self._owns_client = client is None
        self.client: Client = client or Client(config, clock=self.clock)  # type: ignore[arg-type]
        ns: frozenset[str] | None = None
        if namespaces is not None:
            ns = frozenset([namespaces] if isinstance(namespaces, str) else namespaces)
        self.namespaces = ns
        self.cache = Cache(self.client, clock=self.clock, namespaces=ns)
        self.metrics = Metrics()
        self.health = Health()
        if leader_election is not None and sharding is not None:
            raise ValueError("use leader_election or sharding, not both")
        self.leader_election = leader_election
        self.sharding = sharding
        self.identity = (leader_election.identity if leader_election else None) or (
            sharding.identity if sharding else None) or default_identity()
        self.shards: ShardScope | None = None
        """With `sharding`: the shards this replica holds (informers and controllers follow)."""
        self.shard_manager: ShardManager | None = None
        if sharding is not None:
            self.shards = ShardScope(ShardSpace(sharding.shards), clock=self.clock)
            self.shard_manager = ShardManager(self.client, sharding, identity=self.identity,
                                              clock=self.clock, scope=self.shards)
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self.exit_on_lost_lease = exit_on_lost_lease
        self.install_signal_handlers = install_signal_handlers
        self.gc_policy = GcPolicy(clock=self.clock) if gc_freeze else None
        """With `gc_freeze`: short full GC collections in a big cache (asyncop.gcpolicy)."""
        self.tracer = tracer_for(tracer_provider)
        """The OpenTelemetry tracer of everything this Manager runs (None: tracing off)."""
        if self.tracer is not None and self.client.tracer is None:
            self.client.tracer = self.tracer
        if debug_endpoints and reconcile_history < 1:
            raise ValueError("debug_endpoints needs reconcile_history >= 1")
        self.observing = Observing(self.tracer, reconcile_history if debug_endpoints else 0)
        self._server = ProbeServer(
            health=self.health,
            exposition=self._exposition,
            metrics_bind_address=metrics_bind_address,
            health_probe_bind_address=health_probe_bind_address,
            debug=self.explain if debug_endpoints else None,
            authorize=MetricsAuth(self.client, clock=self.clock) if metrics_secure else None,
        )
        metrics_addr = parse_bind_address(metrics_bind_address)
        if metrics_secure and metrics_addr is not None and metrics_addr.port != 0 \
                and metrics_addr == parse_bind_address(health_probe_bind_address):
            raise ValueError("secure metrics are served over HTTPS and the probes over HTTP: "
                             "give the health probes an address of their own")
        self._loop_probe = LoopLagProbe(self.clock)
        self._controllers: list[Runnable] = []
        self._controller_tasks: dict[str, asyncio.Task[None]] = {}
        self._recorders: dict[str, EventRecorder] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._elector: LeaderElector | None = None
        self._elector_task: asyncio.Task[None] | None = None
        self._leading = leader_election is None
        self._started = False
        self._stopping = False
        self._done = asyncio.Event()
        self._error: BaseException | None = None
        self._signals: list[int] = []
        self._stop_task: asyncio.Task[None] | None = None
        self._metrics_tls = MetricsTLS(metrics_cert_dir) if metrics_secure else None
        self._log = log.bind(identity=self.identity)
        self.health.add_liveness("loop", self._loop_probe.check)
        self.health.add_liveness("informers", self._informers_live)
        self.health.add_readiness("caches", self._caches_ready)
        self.health.add_readiness("leader-election", self._election_ready)
        self.health.add_readiness("sharding", self._sharding_ready)
        self.health.add_readiness("credentials", self._credentials_ready)

    # -- public API ---------------------------------------------------------------------------
    @property
    def is_leader(self) -> bool:
        return self._leading

    @property
    def elector(self) -> LeaderElector | None:
        """The LeaderElector once started with leader election (its `leader` is the holder)."""
        return self._elector

    @property
    def controllers(self) -> list[Runnable]:
        """Every controller added so far, in the order they were added."""
        return list(self._controllers)

    @property
    def running_controllers(self) -> list[str]:
        """Names of the controllers running now (none on a standby)."""
        return [name for name, task in self._controller_tasks.items() if not task.done()]

    @property
    def metrics_port(self) -> int | None:
        return self._server.metrics_port

    @property
    def health_port(self) -> int | None:
        return self._server.health_port

    def add(self, controller: Runnable) -> None:
        """Register a controller; it starts now if the Manager runs and leads."""
        if any(c.name == controller.name for c in self._controllers):
            raise ValueError(f"a controller named {controller.name!r} was already added")
        self._controllers.append(controller)
        if self._started and not self._stopping:
            self._warm(controller)
            if self._leading:
                self._start_controller(controller)

    def recorder(self, component: str) -> EventRecorder:
        """The EventRecorder for `component` (one per name; drained by the Manager)."""
        rec = self._recorders.get(component)
        if rec is None:
            rec = EventRecorder(
                self.client, component=component, clock=self.clock, host=self.identity
            )
            rec.tracer = self.tracer
            self._recorders[component] = rec
            if self._started:
                self._spawn(rec.run(), f"recorder:{component}")
        return rec

    async def __aenter__(self) -> Manager:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start everything; on failure, undo what was started and re-raise."""
        if self._started:
            return
        self._started = True
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise
        self._log.info("manager started", controllers=[c.name for c in self._controllers])

    async def _start(self) -> None:
        if self._owns_client:
            await self.client.__aenter__()
        if self._metrics_tls is not None:
            self._server.metrics_ssl = await self._metrics_tls.context()
        await self._server.start()
        if self.install_signal_handlers:
            self._install_signals()
        self._spawn(self._loop_probe.run(), "loop-probe")
        if self.gc_policy is not None:
            self._spawn(self.gc_policy.run(), "gc-policy")
        for name, rec in self._recorders.items():
            self._spawn(rec.run(), f"recorder:{name}")
        for c in self._controllers:
            self._warm(c)
        if self.shard_manager is not None:
            self._shard_informers()
            self._spawn(self.shard_manager.run(), "sharding")
        await self.cache.start()
        if self.leader_election is None:
            for c in self._controllers:
                self._start_controller(c)
        else:
            self._start_elector(self.leader_election)

    async def wait(self) -> None:
        """Until `stop()` (or a signal); raises LeaderElectionLost if the lease was lost."""
        await self._done.wait()
        if self._error is not None:
            raise self._error

    async def stop(self) -> None:
        if not self._started:
            return
        if self._stopping:
            await self._done.wait()
            return
        self._stopping = True
        self._log.info("manager stopping")
        try:
            sharding = next((t for t in self._tasks if t.get_name() == "sharding"), None)
            if sharding is not None:  # hand every shard over while the controllers still run
                await _cancel(sharding)
            await self._stop_controllers(self.graceful_shutdown_timeout)
            await self.cache.stop()
            for rec in self._recorders.values():
                await rec.flush(timeout=2.0)
            if self._elector_task is not None:
                await _cancel(self._elector_task)
                self._elector_task = None
            tasks, self._tasks = list(self._tasks), set()
            for task in tasks:
                await _cancel(task)
            await self._server.stop()
            if self._metrics_tls is not None:
                self._metrics_tls.cleanup()
        finally:
            self._remove_signals()
            await self._close_client()
            self._done.set()
            self._log.info("manager stopped")

    def request_stop(self) -> None:
        """Ask for a graceful stop from synchronous code (a signal handler)."""
        if not self._stopping and self._stop_task is None:
            self._stop_task = asyncio.create_task(self.stop(), name="manager-stop")

    # -- leader election ----------------------------------------------------------------------
    def _start_elector(self, cfg: LeaderElectionConfig) -> None:
        self.metrics.set_leader(cfg.name, leading=False)
        self._elector = LeaderElector(
            self.client,
            name=cfg.name,
            namespace=cfg.namespace,
            identity=self.identity,
            clock=self.clock,
            lease_duration=cfg.lease_duration,
            renew_deadline=cfg.renew_deadline,
            retry_period=cfg.retry_period,
            release_on_cancel=cfg.release_on_cancel,
            on_started_leading=self._on_started_leading,
            on_stopped_leading=self._on_stopped_leading,
        )
        self._elector_task = asyncio.create_task(self._elector.run(), name="leader-election")

    def _on_started_leading(self) -> None:
        self._leading = True
        assert self.leader_election is not None
        self.metrics.set_leader(self.leader_election.name, leading=True)
        if self._stopping:
            return
        for c in self._controllers:
            self._start_controller(c)

    async def _on_stopped_leading(self) -> None:
        self._leading = False
        assert self.leader_election is not None
        self.metrics.set_leader(self.leader_election.name, leading=False)
        if self._stopping:
            return
        self._log.warning("leadership lost, stopping controllers")
        await self._stop_controllers(0.0)
        if self.exit_on_lost_lease:
            self._error = LeaderElectionLost(
                f"lost the lease {self.leader_election.namespace}/{self.leader_election.name}"
            )
            self.request_stop()

    def _sharding_ready(self) -> str | None:
        sm = self.shard_manager
        if sm is None or sm.rounds > 0:
            return None
        return "not yet a member of the shard group"

    def _election_ready(self) -> str | None:
        if self.leader_election is None:
            return None
        task = self._elector_task
        if task is None or task.done():
            return "leader election is not running"
        return None

    # -- controllers --------------------------------------------------------------------------
    def _warm(self, c: Runnable) -> None:
        """Create (and so start) the informers a controller watches, leading or not: a
        standby keeps warm caches, so a takeover does not wait for a full LIST."""
        for watch in getattr(c, "watches", ()):
            kind = getattr(watch, "kind", None)
            if kind is not None:
                self.cache.informer(kind)

    def _shard_informers(self) -> None:
        """List and watch only the held shards of every kind that is each watcher's primary
        kind (a kind some controller watches as owned or mapped stays whole: its events route
        by owner, not by their own uid)."""
        assert self.shards is not None
        primary: set[Kind] = set()
        whole: set[Kind] = set()
        for c in self._controllers:
            for watch in getattr(c, "watches", ()):
                (primary if getattr(watch, "target", "") == "self" else whole).add(watch.kind)
        for kind in primary - whole:
            self.cache.informer(kind).shard_scope = self.shards

    def _start_controller(self, c: Runnable) -> None:
        if c.name in self._controller_tasks:
            return
        extra: dict[str, Any] = {} if self.shards is None else {"shards": self.shards}
        if self.observing.on and hasattr(c, "observer"):
            extra["observing"] = self.observing
        coro = c.run(cache=self.cache, clock=self.clock, metrics=self.metrics, client=self.client,
                     grace_period=self.graceful_shutdown_timeout, **extra)
        task = asyncio.create_task(self._guard(c.name, coro), name=f"controller:{c.name}")
        self._controller_tasks[c.name] = task

    async def _guard(self, name: str, coro: Coroutine[Any, Any, None]) -> None:
        try:
            await coro
        except Exception as exc:
            self._log.exception("controller failed", controller=name, error=str(exc))
            if not self._stopping:
                self._error = exc
                self.request_stop()

    async def _stop_controllers(self, grace: float) -> None:
        """Cancel the controllers: they drain within `grace` (plus 1 s); `grace=0` (a lost
        lease) interrupts in-flight reconciles at once, as another leader may be writing."""
        tasks, self._controller_tasks = list(self._controller_tasks.values()), {}
        if not tasks:
            return
        for task in tasks:
            task.cancel()
        gathered = asyncio.gather(*tasks, return_exceptions=True)
        if grace <= 0:
            await asyncio.sleep(0)  # let each controller enter its shutdown path
            for task in tasks:
                task.cancel()  # ... and cut its drain short
            await gathered
            return
        try:
            await wait_for(self.clock, asyncio.shield(gathered), grace + 1.0)
        except TimeoutError:
            self._log.warning("controllers did not stop within the grace period")
            for task in tasks:
                task.cancel()
            await gathered

    # -- health and metrics -------------------------------------------------------------------
    def _caches_ready(self) -> str | None:
        return None if self.cache.has_synced else "informer caches not synced"

    def _credentials_ready(self) -> str | None:
        """Unready while the API server keeps rejecting our credentials (client/authhealth)."""
        auth = getattr(self.client, "auth", None)
        if auth is None or not auth.failing:
            return None
        return f"the API server rejects the credentials ({auth.source}): {auth.last_code}"

    def _informers_live(self) -> str | None:
        """Unhealthy when a started informer made no progress (no LIST, watch event or
        bookmark) for 3 watchdog periods: its watch keeps failing, or hangs."""
        now = self.clock.monotonic()
        for kind, inf in self.cache.informers().items():
            watchdog = inf.watchdog_timeout
            last = inf.last_activity()
            if watchdog and last is not None and now - last > STALL_FACTOR * watchdog:
                return f"informer {kind.resource} has had no live watch for {now - last:.0f}s"
        return None

    def _exposition(self) -> bytes:
        for kind, informer in self.cache.informers().items():
            self.metrics.set_cache_objects(kind.resource, self.cache.object_count(kind))
            self.metrics.set_watch_events(kind.resource, informer.events_received)
        auth = getattr(self.client, "auth", None)
        if auth is not None:
            self.metrics.set_auth(failing=auth.failing, rejections=dict(auth.rejections))
        sm = self.shard_manager
        if sm is not None and self.shards is not None:
            self.metrics.set_shards(sm.config.name, owned=len(self.shards.held),
                                    acquired=sm.acquisitions, handed_over=sm.handovers,
                                    lost=sm.losses)
        return self.metrics.exposition()

    # -- /debug/reconciles -----------------------------------------------------------------
    def explain(self, query: Any) -> tuple[int, dict[str, Any]]:
        """The /debug/reconciles answer for `query` (kind, namespace, name, controller)."""
        owner, shard_owner = ownership(
            leader_election=self.leader_election, elector=self._elector,
            leading=self._leading, shards=self.shards, shard_manager=self.shard_manager)
        return Explainer(
            controllers=[c for c in self._controllers if hasattr(c, "observer")],  # type: ignore[misc]
            running=self.running_controllers, cache=self.cache, clock=self.clock,
            replica=self.identity, owner=owner, shard_owner=shard_owner).answer(query)

    # -- plumbing -----------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        # a context of its own: a recorder started from inside a reconcile (its first
        # `mgr.recorder(...)` call) must not inherit that reconcile's context (its own-writes
        # recording, its log fields, its span)
        task = asyncio.create_task(coro, name=name, context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _install_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_stop)
                self._signals.append(sig)

    def _remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.remove_signal_handler(sig)
        self._signals.clear()

    async def _close_client(self) -> None:
        if self._owns_client:
            await self.client.close()


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and wait for it to finish (our own cancellation still propagates)."""
    task.cancel()
    await asyncio.wait([task])
