"""Server-side apply with status subresources and CRD list types, CRD update validation, and
reads of a custom resource through another served version (pruned with that version's
schema), all over HTTP against the embedded server."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest_asyncio
import yaml

from asyncop.apiserver import ApiServer
from tests.apiserver.crdkit import CRDS

Http = tuple[str, aiohttp.ClientSession]
APPLY = {"Content-Type": "application/apply-patch+yaml"}
MERGE = {"Content-Type": "application/merge-patch+json"}

CONDITIONS = {"type": "array", "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["type"],
              "items": {"type": "object", "required": ["type", "status"], "properties": {
                  "type": {"type": "string"}, "status": {"type": "string"},
                  "reason": {"type": "string"}}}}

GIZMO_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "gizmos", "kind": "Gizmo"},
             "versions": [
                 {"name": "v1beta1", "served": True, "storage": True,
                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                      "spec": {"type": "object", "properties": {
                          "size": {"type": "integer"}, "legacy": {"type": "string"}}},
                      "status": {"type": "object", "properties": {
                          "conditions": CONDITIONS}}}}},
                  "subresources": {"status": {}}},
                 {"name": "v1", "served": True, "storage": False,
                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                      "spec": {"type": "object", "properties": {
                          "size": {"type": "integer"}}},
                      "status": {"type": "object", "properties": {
                          "conditions": CONDITIONS}}}}},
                  "subresources": {"status": {}}}]}}

GIZMOS = "/apis/example.com/{v}/namespaces/default/gizmos"


@pytest_asyncio.fixture
async def http(apiserver_no_sim: ApiServer) -> AsyncIterator[Http]:
    async with aiohttp.ClientSession() as session:
        async with session.post(apiserver_no_sim.url + CRDS, json=GIZMO_CRD) as r:
            assert r.status == 201, await r.text()
        yield apiserver_no_sim.url, session


async def _call(session: aiohttp.ClientSession, method: str, url: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, str) else (orjson.dumps(body) if body is not None else None)
    hdrs = headers or ({"Content-Type": "application/json"} if body is not None else {})
    async with session.request(method, url, data=data, headers=hdrs) as r:
        return r.status, orjson.loads(await r.read())


def _gizmo(name: str, version: str = "v1beta1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"example.com/{version}", "kind": "Gizmo",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


async def test_apply_of_a_manifest_with_stale_status_does_not_fight_status_writers(
        http: Http) -> None:
    url, session = http
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    path = url + "/apis/apps/v1/namespaces/default/deployments/web"
    code, live = await _call(session, "PATCH", path + "?fieldManager=helm",
                             yaml.safe_dump(deploy), APPLY)
    assert code == 201, live
    live["status"] = {"replicas": 3, "observedGeneration": 1}
    code, body = await _call(session, "PUT", path + "/status?fieldManager=ctl", live)
    assert code == 200, body
    stale = {**copy.deepcopy(deploy), "status": {"replicas": 0}}  # exported long ago
    code, body = await _call(session, "PATCH", path + "?fieldManager=helm",
                             yaml.safe_dump(stale), APPLY)
    assert code == 200, body
    assert body["status"]["replicas"] == 3
    helm = next(e for e in body["metadata"]["managedFields"] if e["manager"] == "helm")
    assert "f:status" not in helm["fieldsV1"]


async def test_two_controllers_apply_different_conditions_without_conflict(http: Http) -> None:
    url, session = http
    base = url + GIZMOS.format(v="v1beta1")
    code, _ = await _call(session, "POST", base, _gizmo("g", size=1))
    assert code == 201
    for manager, ctype in (("ctl-a", "Ready"), ("ctl-b", "Synced")):
        cfg = {"apiVersion": "example.com/v1beta1", "kind": "Gizmo",
               "metadata": {"name": "g", "namespace": "default"},
               "status": {"conditions": [{"type": ctype, "status": "True"}]}}
        code, body = await _call(
            session, "PATCH", f"{base}/g/status?fieldManager={manager}&force=false",
            yaml.safe_dump(cfg), APPLY)
        assert code == 200, body
    assert sorted(c["type"] for c in body["status"]["conditions"]) == ["Ready", "Synced"]
    # a plain update of one entry records ownership of that entry only
    body["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "Down"} if c["type"] == "Ready" else c
        for c in body["status"]["conditions"]]
    code, body = await _call(session, "PUT", f"{base}/g/status?fieldManager=editor", body)
    assert code == 200, body
    editor = next(e for e in body["metadata"]["managedFields"] if e["manager"] == "editor")
    assert list(editor["fieldsV1"]["f:status"]["f:conditions"]) == ['k:{"type":"Ready"}']
    ctl_b = next(e for e in body["metadata"]["managedFields"] if e["manager"] == "ctl-b")
    assert 'k:{"type":"Synced"}' in ctl_b["fieldsV1"]["f:status"]["f:conditions"]


async def test_crd_updates_are_validated_like_kube(http: Http) -> None:
    url, session = http
    crd_url = url + CRDS + "/gizmos.example.com"
    code, crd = await _call(session, "GET", crd_url)
    assert crd["status"]["storedVersions"] == ["v1beta1"]
    changed = copy.deepcopy(crd)
    changed["spec"]["scope"] = "Cluster"
    code, body = await _call(session, "PUT", crd_url, changed)
    assert code == 422, body
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.scope"]
    # drop v1beta1, still listed in status.storedVersions
    changed = copy.deepcopy(crd)
    changed["spec"]["versions"] = [dict(changed["spec"]["versions"][1], storage=True)]
    code, body = await _call(session, "PUT", crd_url, changed)
    assert code == 422, body
    assert "status.storedVersions[0]" in [c["field"] for c in body["details"]["causes"]]
    code, body = await _call(session, "PATCH", crd_url, {"spec": {"scope": "Cluster"}}, MERGE)
    assert code == 422, body
    code, after = await _call(session, "GET", crd_url)
    assert after["spec"]["scope"] == "Namespaced"
    assert [v["name"] for v in after["spec"]["versions"]] == ["v1beta1", "v1"]


async def test_read_through_another_version_prunes_with_its_schema(http: Http) -> None:
    url, session = http
    code, created = await _call(session, "POST", url + GIZMOS.format(v="v1beta1"),
                                _gizmo("g", size=2, legacy="old"))
    assert code == 201
    assert created["spec"] == {"size": 2, "legacy": "old"}
    code, v1 = await _call(session, "GET", url + GIZMOS.format(v="v1") + "/g")
    assert v1["apiVersion"] == "example.com/v1"
    assert v1["spec"] == {"size": 2}
    code, v1_list = await _call(session, "GET", url + GIZMOS.format(v="v1"))
    assert v1_list["items"][0]["spec"] == {"size": 2}
    # the stored object keeps the field: the storage version still shows it
    code, beta = await _call(session, "GET", url + GIZMOS.format(v="v1beta1") + "/g")
    assert beta["apiVersion"] == "example.com/v1beta1"
    assert beta["spec"] == {"size": 2, "legacy": "old"}
    async with session.get(url + GIZMOS.format(v="v1") + "?watch=1&timeoutSeconds=1") as r:
        event = orjson.loads(await r.content.readline())
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == "example.com/v1"
    assert event["object"]["spec"] == {"size": 2}


async def test_replayed_watch_events_follow_the_current_schema_of_the_read_version(
        http: Http) -> None:
    url, session = http
    code, created = await _call(session, "POST", url + GIZMOS.format(v="v1beta1"),
                                _gizmo("g", size=2, legacy="old"))
    assert code == 201
    rv = int(created["metadata"]["resourceVersion"]) - 1
    watch = url + GIZMOS.format(v="v1") + f"?watch=1&timeoutSeconds=1&resourceVersion={rv}"

    async def first_event() -> dict[str, Any]:
        async with session.get(watch) as r:
            event: dict[str, Any] = orjson.loads(await r.content.readline())
        assert event["type"] == "ADDED"
        return event

    assert (await first_event())["object"]["spec"] == {"size": 2}
    # v1 learns the field: the same history event, replayed through v1, now shows it
    crd_url = url + CRDS + "/gizmos.example.com"
    code, crd = await _call(session, "GET", crd_url)
    v1_spec = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    v1_spec["properties"]["legacy"] = {"type": "string"}
    code, body = await _call(session, "PUT", crd_url, crd)
    assert code == 200, body
    assert (await first_event())["object"]["spec"] == {"size": 2, "legacy": "old"}
