"""Two sharded Managers in one process, a controller on ConfigMaps, the embedded API server.

Each reconcile records its (start, end) per key and replica; the test checks that no key is
ever reconciled by both replicas at once, that each replica's informer holds only its own
shards (the server filtered the list and watch: KEP-5866), that every ConfigMap ends up
handled, and that a replica stopping hands its shards over without waiting for the Lease to
expire — against a server that shards the list and watch, and one that ignores the
option (the informers then filter themselves). Timings are short (Lease 3 s, renew deadline
2 s, retry 0.2 s) so this runs in seconds of real time.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import AsyncIterator

import pytest

from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import load_config
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.manager import Manager
from asyncop.runtime.reconcile import Result, reconciler
from asyncop.runtime.sharding import ShardingConfig
from asyncop.testing import eventually
from tests.e2e.overlaps import concurrent_keys

Intervals = dict[str, list[tuple[float, float, str]]]


def sharded(url_config: object, identity: str) -> Manager:
    config = ShardingConfig(name="cms", namespace="default", shards=8, identity=identity,
                            lease_duration=3.0, renew_deadline=2.0, retry_period=0.2,
                            drain_timeout=2.0)
    return Manager(config=url_config, sharding=config)  # type: ignore[arg-type]


def labeller(mgr: Manager, intervals: Intervals) -> Controller:
    async def reconcile(req: Request) -> Result:
        start = time.monotonic()
        cm = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
        if cm is not None and (cm["metadata"].get("labels") or {}).get("by") is None:
            await mgr.client.patch(CONFIGMAP, req.name, {"metadata": {"labels": {
                "by": mgr.identity}}}, namespace=req.namespace)
        await asyncio.sleep(0.01)  # a reconcile takes a little while
        intervals[req.key].append((start, time.monotonic(), mgr.identity))
        return Result()

    return Controller("labeller", reconciler(reconcile), watches=[for_(CONFIGMAP)], workers=4)


@pytest.fixture(params=[True, False], ids=["server-sharded", "client-filtered"])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[ApiServer]:
    """With the ShardedListAndWatch gate off the server ignores shardSelector (as any
    kube-apiserver before 1.36 does) and the informers filter with the same hash."""
    async with ApiServer(feature_gates={"ShardedListAndWatch": request.param}) as srv:
        yield srv


async def test_two_replicas_split_the_work_and_hand_over_on_stop(server: ApiServer) -> None:
    config = await load_config(url=server.url)
    intervals: Intervals = defaultdict(list)
    a, b = sharded(config, "replica-a"), sharded(config, "replica-b")
    a.add(labeller(a, intervals))
    b.add(labeller(b, intervals))
    await a.start()
    await b.start()
    try:
        for i in range(60):
            await a.client.create(CONFIGMAP, {"metadata": {"name": f"cm-{i}",
                                                           "namespace": "default"}})

        async def all_labelled() -> bool:
            items = (await a.client.list(CONFIGMAP, namespace="default"))["items"]
            return len(items) == 60 and all(
                (i["metadata"].get("labels") or {}).get("by") for i in items)

        await eventually(all_labelled, timeout=30)
        assert a.shards is not None and b.shards is not None
        await eventually(lambda: len(a.shards.held) == 4 and len(b.shards.held) == 4,
                         timeout=10)
        assert not a.shards.held & b.shards.held
        # each cache holds exactly its own shards' ConfigMaps
        for mgr in (a, b):
            assert mgr.shards is not None
            cached = mgr.cache.list(CONFIGMAP)
            assert cached and all(mgr.shards.holds_uid(o["metadata"]["uid"]) for o in cached)
        assert len(a.cache.list(CONFIGMAP)) + len(b.cache.list(CONFIGMAP)) == 60
        await b.stop()  # graceful: drains and releases its shards at once
        assert a.shards is not None
        await eventually(lambda: len(a.shards.held) == 8, timeout=5)  # < the 3 s lease
        await a.client.create(CONFIGMAP, {"metadata": {"name": "late", "namespace": "default"}})

        async def late_labelled() -> bool:
            cm = await a.client.get(CONFIGMAP, "late", namespace="default")
            return (cm["metadata"].get("labels") or {}).get("by") == "replica-a"

        await eventually(late_labelled, timeout=10)
        assert len(a.cache.list(CONFIGMAP)) == 61
    finally:
        await b.stop()
        await a.stop()
    assert concurrent_keys(intervals) == []
    assert {who for spans in intervals.values() for _, _, who in spans} == {
        "replica-a", "replica-b"}
