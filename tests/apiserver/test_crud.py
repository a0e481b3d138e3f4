"""CRUD over real HTTP with kubernetes_asyncio (typed) and the sync `kubernetes` client."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from kubernetes import client as sync_client
from kubernetes_asyncio import client as kclient
from kubernetes_asyncio.client.exceptions import ApiException

from asyncop.apiserver import ApiServer


def _cm(name: str, **labels: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


async def test_create_get_update_delete_configmap(api: kclient.ApiClient,
                                                  apiserver_no_sim: ApiServer) -> None:
    v1 = kclient.CoreV1Api(api)
    created = await v1.create_namespaced_config_map("default", _cm("c1", app="a"))
    assert created.metadata.uid and created.metadata.creation_timestamp
    uid = uuid.UUID(created.metadata.uid)
    assert (str(uid), uid.version, uid.variant) == (created.metadata.uid, 4, uuid.RFC_4122)
    rv1 = int(created.metadata.resource_version)
    got = await v1.read_namespaced_config_map("c1", "default")
    assert got.data == {"k": "v"}
    got.data = {"k": "w"}
    updated = await v1.replace_namespaced_config_map("c1", "default", got)
    assert int(updated.metadata.resource_version) > rv1
    assert updated.metadata.uid == created.metadata.uid
    await v1.delete_namespaced_config_map("c1", "default")
    assert apiserver_no_sim.store.get(apiserver_no_sim.store.resolve("", "v1", "configmaps"),
                                      "default", "c1") is None
    with pytest.raises(ApiException) as info:
        await v1.read_namespaced_config_map("c1", "default")
    assert info.value.status == 404
    assert json.loads(info.value.body)["message"] == 'configmaps "c1" not found'


async def test_already_exists_and_stale_update_conflict(api: kclient.ApiClient) -> None:
    v1 = kclient.CoreV1Api(api)
    first = await v1.create_namespaced_config_map("default", _cm("c1"))
    with pytest.raises(ApiException) as info:
        await v1.create_namespaced_config_map("default", _cm("c1"))
    assert info.value.status == 409 and "AlreadyExists" in info.value.body
    await v1.patch_namespaced_config_map("c1", "default", {"data": {"k": "x"}})
    first.data = {"k": "stale"}
    with pytest.raises(ApiException) as info:
        await v1.replace_namespaced_config_map("c1", "default", first)
    assert info.value.status == 409
    assert "the object has been modified" in info.value.body
    current = await v1.read_namespaced_config_map("c1", "default")
    assert current.data == {"k": "x"}
    # no resourceVersion: an unconditional update is allowed for built-ins
    current.metadata.resource_version = None
    current.data = {"k": "forced"}
    forced = await v1.replace_namespaced_config_map("c1", "default", current)
    assert forced.data == {"k": "forced"}


async def test_resource_version_is_global_and_monotonic(api: kclient.ApiClient) -> None:
    v1 = kclient.CoreV1Api(api)
    rvs = []
    for i in range(3):
        cm = await v1.create_namespaced_config_map("default", _cm(f"c{i}"))
        rvs.append(int(cm.metadata.resource_version))
        sec = await v1.create_namespaced_secret("default", {"metadata": {"name": f"s{i}"}})
        rvs.append(int(sec.metadata.resource_version))
    assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs)


async def test_invalid_name_is_422_with_causes(api: kclient.ApiClient) -> None:
    v1 = kclient.CoreV1Api(api)
    with pytest.raises(ApiException) as info:
        await v1.create_namespaced_config_map("default", _cm("Bad_Name"))
    assert info.value.status == 422
    assert '"reason":"FieldValueInvalid"' in info.value.body.replace(" ", "")
    assert "metadata.name" in info.value.body


async def test_missing_namespace_is_404(api: kclient.ApiClient) -> None:
    v1 = kclient.CoreV1Api(api)
    with pytest.raises(ApiException) as info:
        await v1.create_namespaced_config_map("nope", _cm("c1"))
    assert info.value.status == 404
    assert json.loads(info.value.body)["message"] == 'namespaces "nope" not found'


async def test_generate_name(api: kclient.ApiClient) -> None:
    v1 = kclient.CoreV1Api(api)
    cm = await v1.create_namespaced_config_map(
        "default", {"metadata": {"generateName": "gen-"}, "data": {}})
    name = cm.metadata.name
    assert name.startswith("gen-") and len(name) == 9
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")


async def test_list_selectors_and_pagination(api: kclient.ApiClient) -> None:
    v1 = kclient.CoreV1Api(api)
    for i in range(7):
        await v1.create_namespaced_config_map("default", _cm(f"c{i}", tier="a" if i % 2 else "b"))
    a = await v1.list_namespaced_config_map("default", label_selector="tier=a")
    assert [c.metadata.name for c in a.items] == ["c1", "c3", "c5"]
    notin = await v1.list_namespaced_config_map("default", label_selector="tier notin (a)")
    assert [c.metadata.name for c in notin.items] == ["c0", "c2", "c4", "c6"]
    by_name = await v1.list_namespaced_config_map("default", field_selector="metadata.name=c2")
    assert [c.metadata.name for c in by_name.items] == ["c2"]
    page1 = await v1.list_namespaced_config_map("default", limit=3)
    assert [c.metadata.name for c in page1.items] == ["c0", "c1", "c2"]
    assert page1.metadata._continue and page1.metadata.remaining_item_count == 4
    # a write between pages does not change the snapshot the pages come from
    await v1.create_namespaced_config_map("default", _cm("c10"))
    page2 = await v1.list_namespaced_config_map("default", limit=3,
                                                _continue=page1.metadata._continue)
    assert [c.metadata.name for c in page2.items] == ["c3", "c4", "c5"]
    assert page2.metadata.resource_version == page1.metadata.resource_version
    page3 = await v1.list_namespaced_config_map("default", limit=3,
                                                _continue=page2.metadata._continue)
    assert [c.metadata.name for c in page3.items] == ["c6"]
    assert not page3.metadata._continue


async def test_bad_selector_is_400(api: kclient.ApiClient) -> None:
    v1 = kclient.CoreV1Api(api)
    with pytest.raises(ApiException) as info:
        await v1.list_namespaced_config_map("default", field_selector="spec.foo=bar")
    assert info.value.status == 400 and "field label not supported" in info.value.body


async def test_sync_kubernetes_client_in_a_thread(apiserver_no_sim: ApiServer) -> None:
    def work() -> list[str]:
        cfg = sync_client.Configuration()
        cfg.host = apiserver_no_sim.url
        with sync_client.ApiClient(cfg) as api_client:
            v1 = sync_client.CoreV1Api(api_client)
            v1.create_namespace({"metadata": {"name": "team"}})
            v1.create_namespaced_config_map("team", _cm("x", app="y"))
            v1.patch_namespaced_config_map("x", "team", {"data": {"k": "patched"}})
            items = v1.list_namespaced_config_map("team", label_selector="app=y").items
            return [f"{i.metadata.name}={i.data['k']}" for i in items]

    assert await asyncio.to_thread(work) == ["x=patched"]
    store = apiserver_no_sim.store
    ns = store.get(store.resolve("", "v1", "namespaces"), None, "team")
    assert ns is not None and ns["status"]["phase"] == "Active"
