"""Metadata-only informers end to end against the embedded API server over real HTTP.

`owns(KIND, metadata_only=True)` / `watches(..., metadata_only=True)` watch `kind.metadata()`:
the informer lists with `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;
v=v1` and watches with `as=PartialObjectMetadata` (as client-go's metadata client does), and
caches `{apiVersion, kind, metadata}` under the object's own kind, as controller-runtime's
cache reader sets the requested GVK on PartialObjectMetadata it returns. Both the streaming
list (WatchList gate on) and the LIST fallback (kube 1.33's default) are run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from asyncop.api import Request, owner_reference
from asyncop.api.kinds import CONFIGMAP, SECRET
from asyncop.apiserver import ApiServer
from asyncop.client import Client, ClientConfig
from asyncop.clock import RealClock
from asyncop.runtime.cache import Cache
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, owns, watches
from asyncop.runtime.informer import LAST_APPLIED
from asyncop.runtime.reconcile import Result
from asyncop.testing import eventually

META = CONFIGMAP.metadata()


@asynccontextmanager
async def kube(*, watch_list: bool) -> AsyncIterator[tuple[ApiServer, Client, Cache]]:
    gates = {"WatchList": True} if watch_list else {}
    async with ApiServer(simulators=False, feature_gates=gates) as srv:
        async with Client(ClientConfig(host=srv.url)) as client:
            cache = Cache(client, clock=RealClock())
            try:
                yield srv, client, cache
            finally:
                await cache.stop()


def cm(name: str, **labels: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default", "labels": labels,
                         "annotations": {"note": "x" * 100, LAST_APPLIED: "{}" * 500}},
            "data": {"payload": "y" * 2000}}


@pytest.mark.parametrize("watch_list", [True, False])
async def test_metadata_informer_caches_only_metadata(watch_list: bool) -> None:
    async with kube(watch_list=watch_list) as (_srv, client, cache):
        await client.create(CONFIGMAP, cm("before", app="a"))
        inf = cache.informer(META)
        assert cache.informer(META) is inf
        await cache.start()
        await asyncio.wait_for(cache.wait_for_sync(), 10)
        cached = cache.get(META, "before", "default")
        assert cached is not None
        assert set(cached) == {"apiVersion", "kind", "metadata"}
        assert (cached["apiVersion"], cached["kind"]) == ("v1", "ConfigMap")
        assert cached["metadata"]["labels"] == {"app": "a"}
        assert "managedFields" not in cached["metadata"]
        # kubectl's copy of the whole object is dead weight in a metadata cache
        assert cached["metadata"]["annotations"] == {"note": "x" * 100}
        # live events arrive as metadata too
        created = await client.create(CONFIGMAP, cm("after", app="b"))
        await eventually(lambda: cache.get(META, "after", "default") is not None, timeout=10)
        assert set(cache.get(META, "after", "default") or {}) == {"apiVersion", "kind",
                                                                   "metadata"}
        await client.patch(CONFIGMAP, "after", {"metadata": {"labels": {"app": "c"}}})
        await eventually(lambda: (cache.get(META, "after", "default") or {}).get(
            "metadata", {}).get("labels") == {"app": "c"}, timeout=10)
        await client.delete(CONFIGMAP, "after")
        assert await cache.wait_for_resource_version(CONFIGMAP, "default/after", None,
                                                     timeout=10)
        assert cache.get(META, "after", "default") is None
        # read-your-own-writes through the whole Kind resolves on the metadata informer
        rv = created["metadata"]["resourceVersion"]
        assert await cache.wait_for_resource_version(CONFIGMAP, "default/before", rv,
                                                     timeout=10)
        assert CONFIGMAP not in cache.informers()  # nothing made a whole informer


async def test_owns_metadata_only_reconciles_the_owner() -> None:
    async with kube(watch_list=True) as (_srv, client, cache):
        seen: list[Request] = []

        class Recorder:
            async def reconcile(self, req: Request) -> Result:
                seen.append(req)
                return Result()

        ctrl = Controller("owners", Recorder(), workers=1,
                          watches=[for_(SECRET), owns(CONFIGMAP, metadata_only=True)])
        assert ctrl.watches[1].kind == META
        owner = await client.create(SECRET, {"metadata": {"name": "owner",
                                                          "namespace": "default"}})
        task = asyncio.create_task(ctrl.run(cache=cache, clock=RealClock(), client=client))
        await cache.start()
        try:
            await eventually(lambda: Request("owner", "default") in seen, timeout=10)
            seen.clear()
            child = cm("child")
            child["metadata"]["ownerReferences"] = [owner_reference(owner)]  # type: ignore[index]
            await client.create(CONFIGMAP, child)
            await eventually(lambda: Request("owner", "default") in seen, timeout=10)
            assert set(cache.informers()) == {SECRET, META}
            obj = cache.get(META, "child", "default")
            assert obj is not None and obj["metadata"]["ownerReferences"][0]["name"] == "owner"
            assert cache.by_index(META, "owner_uid", owner["metadata"]["uid"]) == [obj]
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def test_a_kind_watched_both_ways_has_two_informers() -> None:
    async with kube(watch_list=False) as (_srv, client, cache):
        await client.create(CONFIGMAP, cm("both"))
        whole, meta = cache.informer(CONFIGMAP), cache.informer(META)
        await cache.start()
        await asyncio.wait_for(cache.wait_for_sync(), 10)
        assert whole is not meta
        full = cache.get(CONFIGMAP, "both", "default")
        partial = cache.get(META, "both", "default")
        assert full is not None and partial is not None
        assert full["data"] == {"payload": "y" * 2000} and "data" not in partial
        # a whole object keeps it: PUT back from a copy, it would be lost on the server
        assert LAST_APPLIED in full["metadata"]["annotations"]
        assert LAST_APPLIED not in partial["metadata"]["annotations"]
        mapped = watches(CONFIGMAP, lambda o: [], metadata_only=True)
        assert mapped.kind == META and mapped.kind.full() == CONFIGMAP
