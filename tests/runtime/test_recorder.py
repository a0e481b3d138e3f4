"""EventRecorder against the embedded ApiServer: Events posted, aggregated, rate-limited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from asyncop.api import RawObject
from asyncop.api.kinds import CONFIGMAP, EVENT, NAMESPACE
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.runtime.recorder import EventRecorder
from asyncop.testing import FakeClock


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with ApiServer(simulators=False) as srv:
        async with Client(ClientConfig(host=srv.url), max_retries=0) as c:
            yield c


@pytest.fixture
async def cm(client: Client) -> RawObject:
    return await client.create(
        CONFIGMAP, {"metadata": {"name": "cfg", "namespace": "default"}, "data": {"a": "1"}}
    )


class Running:
    def __init__(self, rec: EventRecorder) -> None:
        self.rec = rec
        self.task = asyncio.create_task(rec.run())

    async def flushed(self) -> None:
        assert await self.rec.flush(timeout=30)

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.wait([self.task])


@pytest.fixture
async def recorder(client: Client) -> AsyncIterator[tuple[FakeClock, Running]]:
    clock = FakeClock()
    running = Running(EventRecorder(client, component="test-ctrl", clock=clock, host="node-1"))
    yield clock, running
    await running.stop()


async def events(client: Client, namespace: str = "default") -> list[dict[str, Any]]:
    body = await client.list(EVENT, namespace=namespace)
    return list(body["items"])


async def test_event_is_posted_for_the_involved_object(
    client: Client, cm: RawObject, recorder: Any
) -> None:
    _clock, running = recorder
    running.rec.event(cm, "Normal", "Synced", "synced ok", kind=CONFIGMAP)
    await running.flushed()
    [ev] = await events(client)
    inv = ev["involvedObject"]
    assert inv == {
        "apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "namespace": "default",
        "uid": cm["metadata"]["uid"], "resourceVersion": cm["metadata"]["resourceVersion"],
    }
    assert (ev["type"], ev["reason"], ev["message"], ev["count"]) == (
        "Normal", "Synced", "synced ok", 1)
    assert ev["source"] == {"component": "test-ctrl", "host": "node-1"}
    assert ev["reportingComponent"] == "test-ctrl"
    assert ev["firstTimestamp"] == ev["lastTimestamp"] == "2026-01-01T00:00:00Z"
    assert ev["metadata"]["name"].startswith("cfg.")


async def test_repeats_are_aggregated_into_one_event(
    client: Client, cm: RawObject, recorder: Any
) -> None:
    clock, running = recorder
    for _ in range(3):
        running.rec.event(cm, "Warning", "Failed", "boom", kind=CONFIGMAP)
        await running.flushed()
        await clock.advance(10)
    running.rec.event(cm, "Warning", "Failed", "other message", kind=CONFIGMAP)
    await running.flushed()
    by_message = {e["message"]: e for e in await events(client)}
    assert set(by_message) == {"boom", "other message"}
    agg = by_message["boom"]
    assert agg["count"] == 3
    assert agg["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert agg["lastTimestamp"] == "2026-01-01T00:00:20Z"
    assert by_message["other message"]["count"] == 1


async def test_deleted_event_starts_a_new_series(
    client: Client, cm: RawObject, recorder: Any
) -> None:
    _clock, running = recorder
    running.rec.event(cm, "Normal", "Tick", "t", kind=CONFIGMAP)
    await running.flushed()
    [ev] = await events(client)
    await client.delete(EVENT, ev["metadata"]["name"], namespace="default")
    running.rec.event(cm, "Normal", "Tick", "t", kind=CONFIGMAP)
    await running.flushed()
    [again] = await events(client)
    assert again["count"] == 1 and again["metadata"]["name"] != ev["metadata"]["name"]


async def test_rate_limit_per_object_with_token_bucket_on_the_clock(
    client: Client, cm: RawObject, recorder: Any
) -> None:
    clock, running = recorder
    rec = running.rec
    for i in range(30):
        rec.event(cm, "Normal", f"R{i}", "m", kind=CONFIGMAP)
    await running.flushed()
    assert len(await events(client)) == 25  # the burst
    assert rec.dropped == 5
    other = await client.create(CONFIGMAP, {"metadata": {"name": "other", "namespace": "default"}})
    rec.event(other, "Normal", "R", "m", kind=CONFIGMAP)  # other objects are unaffected
    await clock.advance(300)  # one token refills every 5 minutes
    rec.event(cm, "Normal", "Late", "m", kind=CONFIGMAP)
    rec.event(cm, "Normal", "TooLate", "m", kind=CONFIGMAP)
    await running.flushed()
    reasons = {e["reason"] for e in await events(client)}
    assert "Late" in reasons and "TooLate" not in reasons
    assert len(reasons) == 27


async def test_cluster_scoped_objects_get_events_in_default(
    client: Client, recorder: Any
) -> None:
    _clock, running = recorder
    ns = await client.create(NAMESPACE, {"metadata": {"name": "team-a"}})
    running.rec.event(ns, "Normal", "Seen", "namespace seen", kind=NAMESPACE)
    await running.flushed()
    [ev] = await events(client, "default")
    assert ev["involvedObject"]["kind"] == "Namespace"
    assert ev["involvedObject"]["name"] == "team-a"
    assert ev["involvedObject"]["namespace"] == ""


async def test_never_raises_and_survives_api_errors(
    client: Client, recorder: Any
) -> None:
    _clock, running = recorder
    ghost: RawObject = {"metadata": {"name": "ghost", "namespace": "no-such-ns", "uid": "u1"}}
    running.rec.event(ghost, "Warning", "Lost", "x", kind=CONFIGMAP)  # namespace missing: 404
    running.rec.event({}, "Normal", "Empty", "no metadata")  # malformed: dropped or posted
    cm = await client.create(CONFIGMAP, {"metadata": {"name": "later", "namespace": "default"}})
    running.rec.event(cm, "Normal", "After", "still works", kind=CONFIGMAP)
    await running.flushed()
    assert not running.task.done()
    assert "After" in {e["reason"] for e in await events(client)}


async def test_full_queue_drops_instead_of_blocking(client: Client, cm: RawObject) -> None:
    rec = EventRecorder(client, component="c", clock=FakeClock(), queue_size=2)
    for i in range(5):
        rec.event(cm, "Normal", f"R{i}", "m", kind=CONFIGMAP)  # nobody drains: no blocking
    assert rec.pending == 2 and rec.dropped == 3


async def test_a_burst_of_events_is_posted_whole_and_repeats_still_aggregate(
    client: Client, recorder: Any
) -> None:
    """Concurrent senders: 600 Events about 300 objects queued at once all arrive, and 20
    identical ones queued together end as one Event with count 20, not several series."""
    _, running = recorder
    objs = [{"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": f"o{i}", "namespace": "default", "uid": f"uid-{i}"}}
            for i in range(300)]
    for obj in objs:
        running.rec.event(obj, "Normal", "Created", "created")
        running.rec.event(obj, "Normal", "Done", f"done {obj['metadata']['name']}")
    for _ in range(20):
        running.rec.event(objs[0], "Warning", "Again", "the same thing again")
    await running.flushed()
    items = await events(client)
    assert running.rec.dropped == 0
    assert len([e for e in items if e["reason"] == "Created"]) == 300
    assert sorted(e["message"] for e in items if e["reason"] == "Done") == \
        sorted(f"done o{i}" for i in range(300))
    (again,) = [e for e in items if e["reason"] == "Again"]
    assert again["count"] == 20
