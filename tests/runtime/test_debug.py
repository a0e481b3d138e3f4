"""/debug/reconciles: why did (or didn't) this object reconcile, asked of a running Manager.

Over real HTTP, against the embedded API server: a key backing off after an error (its
state, the error, the retry count, the summary line), a key waiting for its own writes
(the writes it waits for, by worker), the record of what a reconcile wrote, `asyncop debug`
printing the same from the command line, and the refusal to serve the endpoint on a
public address without metrics authentication.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP, SECRET
from asyncop.apiserver import ApiServer
from asyncop.cli import amain
from asyncop.client import ClientConfig
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.manager import Manager
from asyncop.runtime.ratelimit import ItemExponentialFailureRateLimiter
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.runtime.server import InsecureDebugBind
from asyncop.testing import eventually


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


def worker_controller(mgr: Manager, server: ApiServer) -> Controller:
    """`fail-*` raises; `stall-*` writes once while the API server hides the write from the
    operator's watch, then requeues, so its next reconcile waits for its own write;
    anything else gets a `seen` label and an Event."""
    stalled: set[str] = set()

    async def reconcile(req: Request) -> Result:
        cm = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
        if cm is None:
            return Result()
        if req.name.startswith("fail-"):
            raise RuntimeError(f"cannot handle {req.name}")
        if req.name.startswith("stall-") and req.name not in stalled:
            stalled.add(req.name)
            # the watch stream is cut and cannot come back: the cache will not see the write
            server.faults.fail(verb="watch", path="configmaps", status=500, count=None)
            server.faults.fail(verb="list", path="configmaps", status=500, count=None)
            server.faults.cut_watches()
            await mgr.client.patch(CONFIGMAP, req.name, {"data": {"stalled": "yes"}},
                                   namespace=req.namespace)
            return Result(requeue_after=0.01)
        if not (cm["metadata"].get("labels") or {}).get("seen"):
            await mgr.client.patch(CONFIGMAP, req.name, {"metadata": {"labels": {"seen": "y"}}},
                                   namespace=req.namespace)
            mgr.recorder("worker").event(cm, "Normal", "Seen", "seen it", kind=CONFIGMAP)
        return Result()

    return Controller("worker", reconciler(reconcile), watches=[for_(CONFIGMAP)], workers=2,
                      rate_limiter=ItemExponentialFailureRateLimiter(base=60.0),
                      write_sync_timeout=60.0)


@pytest.fixture
async def mgr(server: ApiServer) -> AsyncIterator[Manager]:
    async with Manager(config=ClientConfig(host=server.url), debug_endpoints=True,
                       metrics_bind_address="127.0.0.1:0") as m:
        m.add(worker_controller(m, server))
        await m.cache.wait_for_sync()  # objects the tests create are live events, not a list's
        yield m
        server.faults.clear()


async def ask(mgr: Manager, **query: str) -> tuple[int, dict[str, Any]]:
    url = f"http://127.0.0.1:{mgr.metrics_port}/debug/reconciles"
    async with aiohttp.ClientSession() as s, s.get(url, params=query) as resp:
        return resp.status, await resp.json()


async def create(mgr: Manager, name: str) -> None:
    await mgr.client.create(CONFIGMAP, {"metadata": {"name": name, "namespace": "default"}})


async def test_a_key_backing_off_after_an_error(mgr: Manager) -> None:
    await create(mgr, "fail-1")

    async def failed() -> bool:
        _, body = await ask(mgr, kind="configmap", namespace="default", name="fail-1")
        return bool(body["controllers"][0]["reconciles"])

    await eventually(failed, timeout=20)
    status, body = await ask(mgr, kind="ConfigMap", namespace="default", name="fail-1")
    assert status == 200
    assert body["key"] == "default/fail-1" and body["inCache"] is True
    assert body["owner"] == {"mode": "single", "thisReplica": True}
    [c] = body["controllers"]
    assert c["controller"] == "worker" and c["running"] is True
    state = c["state"]
    assert state["queued"] is False and state["processing"] is False
    assert state["requeues"] == 1
    assert state["priority"] == 0  # a live create; its retry keeps the priority (workqueue)
    delayed = state["delayed"]
    assert delayed["reason"] == "retry"
    assert delayed["why"] == "retry after error: cannot handle fail-1"
    assert 0 < delayed["inSeconds"] <= 60  # the rate limiter's first delay
    [rec] = c["reconciles"]
    assert rec["outcome"] == "error"
    assert rec["error"] == "cannot handle fail-1"
    assert rec["trigger"] == "ConfigMap default/fail-1 added"
    assert rec["wrote"] == [] and rec["events"] == []
    assert rec["durationSeconds"] >= 0 and rec["queuedSeconds"] >= 0
    assert c["summary"].startswith(f"backing off until {delayed['until']} (in ")
    assert c["summary"].endswith("after 1 failed reconcile(s); last error: cannot handle fail-1")


async def test_a_key_waiting_for_its_own_writes(mgr: Manager, server: ApiServer) -> None:
    await create(mgr, "stall-1")

    async def waiting() -> bool:
        _, body = await ask(mgr, kind="configmaps", namespace="default", name="stall-1")
        return body["controllers"][0]["state"].get("phase") == "waiting for own writes"

    await eventually(waiting, timeout=20)
    _, body = await ask(mgr, kind="configmaps", namespace="default", name="stall-1")
    [c] = body["controllers"]
    state = c["state"]
    assert state["processing"] is True and state["worker"] in (0, 1)
    [write] = state["waitingForOwnWrites"]
    assert write["kind"] == "ConfigMap" and write["object"] == "default/stall-1"
    assert write["resourceVersion"] is not None
    assert state["trigger"] == "requeue after 0.01s"
    assert c["summary"].startswith("waiting ")
    assert c["summary"].endswith(
        f"s for the cache to see its own 1 write(s) before reconciling (worker "
        f"{state['worker']})")
    # the first reconcile's record says what it wrote
    [first] = c["reconciles"]
    assert first["outcome"] == "requeue_after" and first["requeueAfterSeconds"] == 0.01
    assert first["wrote"] == [{"kind": "ConfigMap", "resource": "configmaps",
                               "object": "default/stall-1",
                               "resourceVersion": write["resourceVersion"]}]
    # the watch comes back: the wait ends and is recorded
    server.faults.clear()

    async def done() -> bool:
        _, body = await ask(mgr, kind="configmaps", namespace="default", name="stall-1")
        return len(body["controllers"][0]["reconciles"]) >= 2

    await eventually(done, timeout=30)
    _, body = await ask(mgr, kind="configmaps", namespace="default", name="stall-1")
    second = body["controllers"][0]["reconciles"][1]
    assert second["ownWritesWaitSeconds"] > 0
    assert "ownWritesNotSeen" not in second


async def test_what_a_reconcile_wrote_and_the_cli(
        mgr: Manager, capsys: pytest.CaptureFixture[str]) -> None:
    await create(mgr, "plain")

    # `cm` is no spelling kubectl accepts without discovery: asked by controller instead
    status, body = await ask(mgr, kind="cm", namespace="default", name="plain")
    assert status == 404
    assert body["error"] == ("no controller here reconciles kind 'cm'; controllers: "
                             "worker (ConfigMap)")

    async def recorded() -> bool:
        _, body = await ask(mgr, controller="worker", namespace="default", name="plain")
        return any(r["events"] for r in body["controllers"][0]["reconciles"])

    await eventually(recorded, timeout=20)
    _, body = await ask(mgr, controller="worker", namespace="default", name="plain")
    rec = next(r for r in body["controllers"][0]["reconciles"] if r["events"])
    assert rec["events"] == [{"type": "Normal", "reason": "Seen"}]
    assert [w["object"] for w in rec["wrote"]] == ["default/plain"]
    assert body["controllers"][0]["summary"].startswith("idle: the last reconcile (")

    address = f"http://127.0.0.1:{mgr.metrics_port}"
    capsys.readouterr()
    assert await amain(["debug", "configmap/plain", "-n", "default", "--address", address]) == 0
    out = capsys.readouterr().out
    assert "Name:        plain\nNamespace:   default\nKind:        ConfigMap (in the cache" in out
    assert "Controller:  worker (running, 2 workers)\n  Summary:   idle: the last reconcile" in out
    assert "      trigger: ConfigMap default/plain added\n" in out
    assert "      wrote: ConfigMap default/plain@" in out and ", Event Normal Seen" in out
    assert await amain(["debug", "secrets", "x", "--address", address]) == 2
    assert capsys.readouterr().err.strip() == (
        "asyncop: error: no controller here reconciles kind 'secrets'; controllers: worker "
        "(ConfigMap)")
    assert SECRET.plural == "secrets"


async def test_bad_questions_get_one_line_answers(mgr: Manager) -> None:
    assert await ask(mgr, kind="configmap", name="x") == (
        400, {"error": "ConfigMap is namespaced: give namespace="})
    assert await ask(mgr, name="x") == (
        400, {"error": "say which object: kind= (or controller=) and name="})
    status, body = await ask(mgr)  # no name: an overview of the controllers
    assert status == 200
    assert [c["controller"] for c in body["controllers"]] == ["worker"]
    assert body["controllers"][0]["kind"] == "ConfigMap"
    status, body = await ask(mgr, kind="configmap", namespace="default", name="never")
    assert body["inCache"] is False
    assert body["controllers"][0]["summary"].startswith(
        "never reconciled here, and not in this replica's cache")


async def test_the_cli_says_when_nothing_answers(capsys: pytest.CaptureFixture[str]) -> None:
    srv = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    srv.close()
    await srv.wait_closed()
    assert await amain(["debug", "at/x", "--address", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"asyncop: error: cannot reach the operator at http://127.0.0.1:{port}")
    assert await amain(["debug", "at"]) == 2
    assert "say which object as KIND/NAME (e.g. at/at), or KIND NAME" in capsys.readouterr().err


def test_never_on_a_public_address_without_metrics_auth() -> None:
    cfg = ClientConfig(host="http://127.0.0.1:1")
    with pytest.raises(InsecureDebugBind, match=re.escape(
            "refusing to serve /debug/reconciles on the non-loopback metrics address "
            "0.0.0.0:8080 without metrics authentication (--metrics-secure)")):
        Manager(config=cfg, debug_endpoints=True, metrics_bind_address=":8080")
    Manager(config=cfg, debug_endpoints=True, metrics_bind_address="127.0.0.1:8080")
    Manager(config=cfg, metrics_bind_address=":8080")  # metrics alone: as before
