"""Manager against the embedded ApiServer: reconciles, probes/metrics, leader election, stop.

A tiny controller stamps every ConfigMap with the identity of the Manager that reconciled
it, so the end state in the API server shows which Manager ran its controllers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from asyncop.api import NotFound, Request
from asyncop.api.kinds import CONFIGMAP, EVENT, LEASE
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.runtime.controller import DEFAULT_WORKERS, Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.leader import LeaderElectionConfig, format_micro_time
from asyncop.runtime.manager import LeaderElectionLost, Manager
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.testing import FakeClock, eventually

STAMP = "asyncop.test/reconciled-by"
LE = LeaderElectionConfig(name="mgr-test", namespace="default")


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[Client]:
    async with Client(ClientConfig(host=server.url), max_retries=0) as c:
        yield c


def stamping_controller(mgr: Manager) -> Controller:
    async def reconcile(req: Request) -> Result:
        cm = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
        if cm is None or (cm["metadata"].get("annotations") or {}).get(STAMP):
            return Result()
        body = {"metadata": {"annotations": {STAMP: mgr.identity}}}
        await mgr.client.patch(CONFIGMAP, req.name, body, namespace=req.namespace)
        mgr.recorder("stamper").event(cm, "Normal", "Stamped", "stamped", kind=CONFIGMAP)
        return Result()

    return Controller("stamper", reconciler(reconcile), watches=[for_(CONFIGMAP)])


async def stamp_of(client: Client, name: str) -> str | None:
    try:
        cm = await client.get(CONFIGMAP, name, namespace="default")
    except NotFound:
        return None
    return (cm["metadata"].get("annotations") or {}).get(STAMP)


async def make_cm(client: Client, name: str) -> None:
    await client.create(CONFIGMAP, {"metadata": {"name": name, "namespace": "default"}})


async def advance_until(clock: FakeClock, pred: Callable[[], Awaitable[bool] | bool],
                        *, limit: float, dt: float = 0.1) -> float:
    """Advance virtual time in small steps (real I/O runs in between) until `pred` holds."""
    start = clock.monotonic()

    async def check() -> bool:
        value = pred()
        ok = bool(await value) if not isinstance(value, bool) else value
        if not ok:
            assert clock.monotonic() - start <= limit, "did not happen in time"
            await clock.advance(dt)
        return ok

    await eventually(check, timeout=20)
    return clock.monotonic() - start


def leftover(before: set[asyncio.Task[Any]]) -> set[asyncio.Task[Any]]:
    """Tasks started since `before`, except the embedded ApiServer's connection handlers."""
    return {
        t for t in asyncio.all_tasks() - before
        if not t.get_coro().__qualname__.startswith("RequestHandler.")  # type: ignore[union-attr]
    }


def named(mgr: Manager, identity: str) -> Manager:
    mgr.identity = identity
    return mgr


async def test_runs_controllers_and_stops_without_leaving_tasks(
    server: ApiServer, client: Client
) -> None:
    before = asyncio.all_tasks()
    clock = FakeClock()
    mgr = Manager(config=ClientConfig(host=server.url), clock=clock)
    mgr.add(stamping_controller(mgr))
    async with mgr:
        await make_cm(client, "one")
        await eventually(lambda: stamp_of(client, "one"), timeout=10)
        assert await stamp_of(client, "one") == mgr.identity
        await mgr.cache.wait_for_sync()
        assert mgr.cache.has_synced
        await eventually(lambda: mgr.recorder("stamper").pending == 0)
    assert leftover(before) == set()
    assert mgr.client._closed  # a Manager built from config closes its own client
    # the recorder was flushed on stop: the Event exists
    body = await client.list(EVENT, namespace="default")
    assert [e["reason"] for e in body["items"]] == ["Stamped"]


async def test_probes_and_metrics_after_real_reconciles(client: Client) -> None:
    clock = FakeClock()
    mgr = Manager(client=client, clock=clock, metrics_bind_address="127.0.0.1:0",
                  health_probe_bind_address="127.0.0.1:0")
    mgr.add(stamping_controller(mgr))
    async with mgr, aiohttp.ClientSession() as http:
        for i in range(3):
            await make_cm(client, f"cm-{i}")
        for i in range(3):
            await eventually(lambda i=i: stamp_of(client, f"cm-{i}"), timeout=10)
        hp = f"http://127.0.0.1:{mgr.health_port}"
        async with http.get(f"{hp}/healthz") as r:
            assert r.status == 200
        await mgr.cache.wait_for_sync()
        async with http.get(f"{hp}/readyz?verbose") as r:
            assert r.status == 200, await r.text()

        async def scrape() -> str:
            async with http.get(f"http://127.0.0.1:{mgr.metrics_port}/metrics") as r:
                assert r.status == 200
                return await r.text()

        def value(text: str, series: str) -> float:
            for line in text.splitlines():
                if line.startswith(series + " "):
                    return float(line.split()[-1])
            raise AssertionError(f"{series} not in metrics")

        text = await eventually(
            lambda: _has(scrape, 'controller_runtime_reconcile_total{controller="stamper",'
                                 'result="success"}', 3), timeout=10)
        assert value(text, 'workqueue_adds_total{name="stamper"}') >= 3
        assert value(text, 'asyncop_cache_objects{kind="configmaps"}') == 3
        series = 'controller_runtime_max_concurrent_reconciles{controller="stamper"}'
        assert value(text, series) == DEFAULT_WORKERS  # the default: none given
        # An unresponsive loop fails /healthz: the ticker stops, virtual time moves on.
        for task in mgr._tasks:
            if task.get_name() == "loop-probe":
                task.cancel()
        await clock.advance(mgr._loop_probe.interval + mgr._loop_probe.threshold + 1)
        async with http.get(f"{hp}/healthz?verbose") as r:
            assert r.status == 500 and "[-]loop failed" in await r.text()
    assert not client._closed  # a passed-in client stays open


async def _has(scrape: Callable[[], Awaitable[str]], series: str, minimum: float) -> str | None:
    text = await scrape()
    for line in text.splitlines():
        if line.startswith(series + " ") and float(line.split()[-1]) >= minimum:
            return text
    return None


async def test_only_the_leader_runs_controllers_and_standby_takes_over(
    client: Client
) -> None:
    before = asyncio.all_tasks()
    clock = FakeClock()
    a = named(Manager(client=client, clock=clock, leader_election=LE,
                      health_probe_bind_address="127.0.0.1:0"), "mgr-a")
    b = named(Manager(client=client, clock=clock, leader_election=LE,
                      health_probe_bind_address="127.0.0.1:0"), "mgr-b")
    for m in (a, b):
        m.add(stamping_controller(m))
    await a.start()
    await eventually(lambda: a.is_leader)
    assert a.running_controllers == ["stamper"]
    await b.start()
    await make_cm(client, "first")
    assert await eventually(lambda: stamp_of(client, "first")) == "mgr-a"
    await advance_until(clock, lambda: b.elector is not None and b.elector.leader == "mgr-a",
                        limit=3)
    assert not b.is_leader and b.running_controllers == []
    assert CONFIGMAP in b.cache.informers()  # the standby keeps a warm cache
    await eventually(lambda: b.cache.get(CONFIGMAP, "first", "default") is not None)
    async with aiohttp.ClientSession() as http:  # the standby is ready (standing by)
        await b.cache.wait_for_sync()
        async with http.get(f"http://127.0.0.1:{b.health_port}/readyz") as r:
            assert r.status == 200
    assert "leader_election_master_status{name=\"mgr-test\"} 0.0" in b.metrics.exposition().decode()
    assert "leader_election_master_status{name=\"mgr-test\"} 1.0" in a.metrics.exposition().decode()

    await a.stop()  # releases the lease
    spec = (await client.get(LEASE, "mgr-test", namespace="default"))["spec"]
    assert spec["holderIdentity"] == ""
    took = await advance_until(clock, lambda: b.is_leader, limit=LE.retry_period + 0.5)
    assert took <= LE.retry_period + 0.5
    await make_cm(client, "second")
    assert await eventually(lambda: stamp_of(client, "second")) == "mgr-b"
    assert await stamp_of(client, "first") == "mgr-a"
    await b.stop()
    assert leftover(before) == set()


async def test_standby_runs_nothing_until_the_lease_expires(client: Client) -> None:
    clock = FakeClock()
    now = format_micro_time(clock.now())
    await client.create(LEASE, {
        "metadata": {"name": "mgr-test", "namespace": "default"},
        "spec": {"holderIdentity": "someone-else", "leaseDurationSeconds": 15,
                 "acquireTime": now, "renewTime": now, "leaseTransitions": 0},
    })
    mgr = named(Manager(client=client, clock=clock, leader_election=LE), "mgr-c")
    mgr.add(stamping_controller(mgr))
    async with mgr:
        await make_cm(client, "waiting")
        await advance_until(clock, lambda: clock.monotonic() >= 10, limit=11)
        assert not mgr.is_leader
        assert await stamp_of(client, "waiting") is None
        waited = await advance_until(clock, lambda: mgr.is_leader, limit=10)
        assert clock.monotonic() >= 15 and waited > 0
        assert await eventually(lambda: stamp_of(client, "waiting")) == "mgr-c"


async def test_losing_the_lease_stops_controllers_and_fails_wait(client: Client) -> None:
    clock = FakeClock()
    mgr = named(Manager(client=client, clock=clock, leader_election=LE,
                        exit_on_lost_lease=True), "mgr-d")
    mgr.add(stamping_controller(mgr))
    await mgr.start()
    await eventually(lambda: mgr.is_leader)
    lease = await client.get(LEASE, "mgr-test", namespace="default")
    lease["spec"]["holderIdentity"] = "usurper"  # another process took the lease
    await client.update(LEASE, lease)
    waiter = asyncio.create_task(mgr.wait())
    await advance_until(clock, lambda: waiter.done(), limit=LE.retry_period + 1)
    with pytest.raises(LeaderElectionLost):
        await waiter
    assert not mgr.is_leader and mgr.running_controllers == []
    await make_cm(client, "after")
    await clock.advance(5)
    assert await stamp_of(client, "after") is None
    spec = (await client.get(LEASE, "mgr-test", namespace="default"))["spec"]
    assert spec["holderIdentity"] == "usurper"  # the loser wrote nothing more
    await mgr.stop()


async def test_config_or_client_is_required() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Manager()


async def test_signal_handlers_only_when_asked(server: ApiServer) -> None:
    import signal

    mgr = Manager(config=ClientConfig(host=server.url), clock=FakeClock(),
                  install_signal_handlers=True)
    loop = asyncio.get_running_loop()
    await mgr.start()
    waiter = asyncio.create_task(mgr.wait())
    loop._signal_handlers[signal.SIGTERM]._run()  # what SIGTERM would do  # type: ignore[attr-defined]
    await asyncio.wait_for(waiter, 10)
    assert signal.SIGTERM not in getattr(loop, "_signal_handlers", {})
    plain = Manager(config=ClientConfig(host=server.url), clock=FakeClock())
    async with plain:
        assert signal.SIGTERM not in getattr(loop, "_signal_handlers", {})


async def test_healthz_fails_while_an_informer_watch_keeps_failing(
    server: ApiServer, client: Client
) -> None:
    """Every watch of the embedded server is refused (503) while virtual time passes: the
    informer retries (and relists) all along, but makes no progress, so /healthz fails once
    3 watchdog periods went by; it recovers when the watch works again."""
    clock = FakeClock()
    mgr = Manager(client=client, clock=clock, health_probe_bind_address="127.0.0.1:0")
    mgr.add(stamping_controller(mgr))
    async with mgr, aiohttp.ClientSession() as http:
        await make_cm(client, "x")
        await eventually(lambda: stamp_of(client, "x"))
        hp = f"http://127.0.0.1:{mgr.health_port}/healthz?verbose"

        async def healthz() -> tuple[int, str]:
            async with http.get(hp) as r:
                return r.status, await r.text()

        status, text = await healthz()
        assert status == 200 and "[+]informers ok" in text
        informer = mgr.cache.informers()[CONFIGMAP]
        watchdog = informer.watchdog_timeout
        assert watchdog is not None and informer.last_activity() is not None
        faults = server.faults
        faults.fail(verb="watch", status=503, count=None)
        faults.cut_watches()
        await eventually(lambda: faults.injected >= 1)  # the first rewatch was refused
        stalled_from = informer.last_activity()
        assert stalled_from is not None
        # step virtual time by the backoff cap, letting each retry really fail in between
        while clock.monotonic() + 30 < stalled_from + 3 * watchdog - 1:
            failed = faults.injected
            await clock.advance(30)
            await eventually(lambda failed=failed: faults.injected > failed)
        await clock.run_until(stalled_from + 3 * watchdog - 1)
        assert informer.last_activity() == stalled_from  # retries are not progress
        status, text = await healthz()
        assert status == 200, text
        await clock.advance(2)
        status, text = await healthz()
        assert status == 500 and "[-]informers failed" in text and "configmaps" in text
        # the watch works again: once a retry gets an event through, /healthz recovers
        faults.clear()
        beats = 0

        async def recovered() -> bool:
            nonlocal beats
            if informer.last_activity() != stalled_from:
                return True
            beats += 1
            assert beats < 200, "the informer did not recover"
            await client.patch(CONFIGMAP, "x", {"data": {"beat": str(beats)}},
                               namespace="default")
            await clock.advance(1)
            return False

        await eventually(recovered, timeout=20)
        status, text = await healthz()
        assert status == 200 and "[+]informers ok" in text
        await make_cm(client, "after")
        assert await eventually(lambda: stamp_of(client, "after")) == mgr.identity


async def test_reacquires_and_restarts_controllers_when_not_exiting(client: Client) -> None:
    clock = FakeClock()
    mgr = named(Manager(client=client, clock=clock, leader_election=LE), "mgr-e")
    mgr.add(stamping_controller(mgr))
    async with mgr:
        await eventually(lambda: mgr.is_leader)
        informer = mgr.cache.informer(CONFIGMAP)
        await eventually(lambda: mgr.running_controllers == ["stamper"])
        leading_handlers = informer.handler_count
        assert leading_handlers >= 1
        for round_ in range(2):  # lose and regain the lease twice
            lease = await client.get(LEASE, "mgr-test", namespace="default")
            lease["spec"]["holderIdentity"] = "usurper"  # takes over, dies without renewing
            await client.update(LEASE, lease)
            await advance_until(clock, lambda: not mgr.is_leader, limit=LE.retry_period + 1)
            # the stopped controller takes its event handlers with it (no virtual time passes)
            await eventually(lambda: mgr.running_controllers == [])
            stopped_at = clock.monotonic()
            await eventually(lambda: informer.handler_count == leading_handlers - 1)
            assert clock.monotonic() == stopped_at
            await make_cm(client, f"while-lost-{round_}")
            assert await stamp_of(client, f"while-lost-{round_}") is None
            await advance_until(clock, lambda: mgr.is_leader, limit=LE.lease_duration + 3)
            assert await eventually(lambda r=round_: stamp_of(client, f"while-lost-{r}")) == (
                "mgr-e")
            assert informer.handler_count == leading_handlers  # no handler leaked
        spec = (await client.get(LEASE, "mgr-test", namespace="default"))["spec"]
        assert spec["holderIdentity"] == "mgr-e"


async def test_stop_drains_in_flight_reconciles_before_releasing_the_lease(
    client: Client
) -> None:
    clock = FakeClock()
    mgr = named(Manager(client=client, clock=clock, leader_election=LE), "mgr-f")
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(req: Request) -> Result:
        entered.set()
        await release.wait()
        holder = (await client.get(LEASE, "mgr-test", namespace="default"))["spec"]
        body = {"metadata": {"annotations": {STAMP: holder["holderIdentity"]}}}
        await client.patch(CONFIGMAP, req.name, body, namespace=req.namespace)
        return Result()

    mgr.add(Controller("slow", reconciler(slow), watches=[for_(CONFIGMAP)]))
    await mgr.start()
    await eventually(lambda: mgr.is_leader)
    await make_cm(client, "busy")
    await eventually(entered.is_set)
    stopping = asyncio.create_task(mgr.stop())
    await clock.settle()
    assert not stopping.done()  # waiting for the in-flight reconcile
    release.set()
    await asyncio.wait_for(stopping, 10)
    # the reconcile finished while we still held the lease; the lease was released after
    assert await stamp_of(client, "busy") == "mgr-f"
    spec = (await client.get(LEASE, "mgr-test", namespace="default"))["spec"]
    assert spec["holderIdentity"] == ""


async def test_failed_start_cleans_up(server: ApiServer) -> None:
    import socket

    before = asyncio.all_tasks()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        mgr = Manager(config=ClientConfig(host=server.url), clock=FakeClock(),
                      metrics_bind_address=f"127.0.0.1:{port}")
        with pytest.raises(OSError):
            await mgr.start()
    assert mgr.client._closed
    assert leftover(before) == set()


async def test_lost_lease_interrupts_in_flight_reconciles_at_once(client: Client) -> None:
    clock = FakeClock()
    mgr = named(Manager(client=client, clock=clock, leader_election=LE,
                        exit_on_lost_lease=True), "mgr-g")
    entered, cancelled = asyncio.Event(), asyncio.Event()

    async def stuck(req: Request) -> Result:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return Result()

    mgr.add(Controller("stuck", reconciler(stuck), watches=[for_(CONFIGMAP)]))
    async with mgr:
        await eventually(lambda: mgr.is_leader)
        await make_cm(client, "slow")
        await eventually(entered.is_set)
        lease = await client.get(LEASE, "mgr-test", namespace="default")
        lease["spec"]["holderIdentity"] = "usurper"
        await client.update(LEASE, lease)
        await advance_until(clock, lambda: not mgr.is_leader, limit=LE.retry_period + 1)
        lost_at = clock.monotonic()
        await eventually(cancelled.is_set)  # no virtual time passes: at once
        assert clock.monotonic() == lost_at
        assert mgr.running_controllers == []
        with pytest.raises(LeaderElectionLost):
            await mgr.wait()


async def test_graceful_shutdown_timeout_is_the_controllers_grace_period(
    client: Client
) -> None:
    """A controller without its own grace period drains for the Manager's
    `graceful_shutdown_timeout` (30 s here, not the 10 s default); one with its own keeps it."""
    clock = FakeClock()
    mgr = Manager(client=client, clock=clock, graceful_shutdown_timeout=30.0)
    started: dict[str, asyncio.Event] = {"patient": asyncio.Event(), "hasty": asyncio.Event()}
    outcome: dict[str, str] = {}

    def slow(name: str) -> Controller:
        async def reconcile(req: Request) -> Result:
            if req.name != name:
                return Result()
            started[name].set()
            try:
                await clock.sleep(20.0)
            except asyncio.CancelledError:
                outcome[name] = "cancelled"
                raise
            await client.patch(CONFIGMAP, req.name, {"metadata": {"annotations": {
                STAMP: "drained"}}}, namespace=req.namespace)
            outcome[name] = "finished"
            return Result()

        grace = 1.0 if name == "hasty" else None
        return Controller(name, reconciler(reconcile), watches=[for_(CONFIGMAP)],
                          grace_period=grace)

    mgr.add(slow("patient"))
    mgr.add(slow("hasty"))
    await mgr.start()
    await make_cm(client, "patient")
    await make_cm(client, "hasty")
    await eventually(lambda: all(e.is_set() for e in started.values()))
    stopping = asyncio.create_task(mgr.stop())
    await advance_until(clock, lambda: "hasty" in outcome, limit=2)
    assert outcome == {"hasty": "cancelled"}
    await clock.advance(12.0)  # past the 10 s default: the patient one still drains
    assert not stopping.done() and "patient" not in outcome
    await advance_until(clock, lambda: stopping.done(), limit=10)
    await stopping
    assert outcome == {"hasty": "cancelled", "patient": "finished"}
    assert await stamp_of(client, "patient") == "drained"
