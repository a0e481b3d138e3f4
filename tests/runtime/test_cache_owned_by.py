"""Cache.owned_by: the owner index under a name users find (and the old by_index read).

kube: an object's owners are its metadata.ownerReferences, matched by uid; the one with
`controller: true` is its controllerRef (apimachinery's metav1.GetControllerOf), which is
what `controller=True` keeps.
"""

from __future__ import annotations

from typing import cast

import pytest

from asyncop.api import RawObject, owner_reference
from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.client import Client, load_config
from asyncop.clock import RealClock
from asyncop.runtime.cache import Cache
from asyncop.testing import eventually


def names(objs: list[RawObject]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


async def test_owned_by_finds_what_an_owner_owns_and_controls(
        apiserver_no_sim: ApiServer) -> None:
    async with Client(await load_config(url=apiserver_no_sim.url)) as client:
        owner = await client.create(CONFIGMAP, {"metadata": {"name": "owner",
                                                             "namespace": "default"}})
        other = await client.create(CONFIGMAP, {"metadata": {"name": "other",
                                                             "namespace": "default"}})
        for name, refs in (("controlled", [owner_reference(owner)]),
                           ("owned", [owner_reference(owner, controller=False)]),
                           ("shared", [owner_reference(other),
                                       owner_reference(owner, controller=False)]),
                           ("foreign", [owner_reference(other)]),
                           ("orphan", [])):
            await client.create(CONFIGMAP, {"metadata": {
                "name": name, "namespace": "default", "ownerReferences": refs}})
        cache = Cache(client, clock=RealClock())
        cache.informer(CONFIGMAP)
        await cache.start()
        try:
            await cache.wait_for_sync()
            await eventually(lambda: cache.object_count(CONFIGMAP) == 7, timeout=10)
            assert names(cache.owned_by(CONFIGMAP, owner)) == ["controlled", "owned", "shared"]
            assert names(cache.owned_by(CONFIGMAP, owner, controller=True)) == ["controlled"]
            uid = owner["metadata"]["uid"]
            assert names(cache.owned_by(CONFIGMAP, uid)) == ["controlled", "owned", "shared"]
            assert names(cache.owned_by(CONFIGMAP, other, controller=True)) == [
                "foreign", "shared"]
            # the old spelling reads the same index
            assert names(cache.by_index(CONFIGMAP, "owner_uid", uid)) == [
                "controlled", "owned", "shared"]
            assert cache.owned_by(CONFIGMAP, "no-such-uid") == []
            unsaved = cast(RawObject, {"metadata": {"name": "new", "namespace": "default"}})
            with pytest.raises(ValueError, match=r"the owner has no metadata\.uid"):
                cache.owned_by(CONFIGMAP, unsaved)
        finally:
            await cache.stop()
