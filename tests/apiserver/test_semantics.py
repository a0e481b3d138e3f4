"""Verb semantics: delete responses and preconditions, dry runs, deletecollection, patch
types, list resourceVersion rules, Tables, and the in-process store API."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
import pytest

from asyncop.apiserver import ApiServer
from asyncop.testing import eventually
from tests.apiserver import httpkit
from tests.apiserver.crdkit import CRDS, WIDGET_CRD, WIDGETS, widget
from tests.apiserver.httpkit import call

CM = "/api/v1/namespaces/default/configmaps"
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}


http = httpkit.http  # the shared aiohttp session fixture


async def test_delete_answers_status_or_object(apiserver_no_sim: ApiServer,
                                               http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    await call(http, "POST", url + CM, json={"metadata": {"name": "c1"}})
    code, body = await call(http, "DELETE", url + CM + "/c1")
    assert code == 200 and body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"]["name"] == "c1" and body["details"]["kind"] == "configmaps"
    await call(http, "POST", url + "/api/v1/namespaces/default/serviceaccounts",
               json={"metadata": {"name": "sa"}})
    code, body = await call(http, "DELETE", url + "/api/v1/namespaces/default/serviceaccounts/sa")
    assert code == 200 and body["kind"] == "ServiceAccount"
    code, body = await call(http, "DELETE", url + CM + "/c1")
    assert code == 404


async def test_delete_preconditions(apiserver_no_sim: ApiServer,
                                    http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    _, cm = await call(http, "POST", url + CM, json={"metadata": {"name": "c1"}})
    code, body = await call(http, "DELETE", url + CM + "/c1",
                            json={"preconditions": {"uid": "other"}})
    assert code == 409 and "the UID in the precondition (other)" in body["message"]
    code, body = await call(http, "DELETE", url + CM + "/c1",
                            json={"preconditions": {"resourceVersion": "1"}})
    assert code == 409 and body["reason"] == "Conflict"
    code, _ = await call(http, "DELETE", url + CM + "/c1",
                         json={"preconditions": {"uid": cm["metadata"]["uid"]}})
    assert code == 200


async def test_dry_run_does_not_persist(apiserver_no_sim: ApiServer,
                                        http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    rv = srv.store.resource_version
    code, body = await call(http, "POST", srv.url + CM + "?dryRun=All",
                            json={"metadata": {"name": "c1"}})
    assert code == 201 and body["metadata"]["name"] == "c1"
    assert srv.store.resource_version == rv
    code, _ = await call(http, "GET", srv.url + CM + "/c1")
    assert code == 404
    code, _ = await call(http, "POST", srv.url + CM + "?dryRun=Some",
                         json={"metadata": {"name": "c1"}})
    assert code == 400


async def test_deletecollection_by_label(apiserver_no_sim: ApiServer,
                                         http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        await call(http, "POST", url + CM, json={"metadata": {"name": name,
                                                                "labels": {"tier": tier}}})
    code, body = await call(http, "DELETE", url + CM + "?labelSelector=tier%3Dx")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["a", "b"]
    _, listed = await call(http, "GET", url + CM)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["c"]
    code, _ = await call(http, "DELETE", url + "/api/v1/configmaps")
    assert code == 405


async def test_patch_types(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    await call(http, "POST", url + CM, json={"metadata": {"name": "c1"}, "data": {"a": "1"}})
    ops = [{"op": "add", "path": "/data/b", "value": "2"}]
    code, body = await call(http, "PATCH", url + CM + "/c1", data=orjson.dumps(ops),
                            headers=JSON_PATCH)
    assert code == 200 and body["data"] == {"a": "1", "b": "2"}
    code, body = await call(http, "PATCH", url + CM + "/c1", data=b'{"data":{"a":null}}',
                            headers=MERGE)
    assert body["data"] == {"b": "2"}
    code, body = await call(http, "PATCH", url + CM + "/c1", data=b'{"data":{}}',
                            headers=JSON_PATCH)
    assert code == 400 and "cannot unmarshal object" in body["message"]
    bad = [{"op": "test", "path": "/data/b", "value": "nope"}]
    code, body = await call(http, "PATCH", url + CM + "/c1", data=orjson.dumps(bad),
                            headers=JSON_PATCH)
    assert code == 422
    code, _ = await call(http, "PATCH", url + CM + "/missing", data=b"{}", headers=MERGE)
    assert code == 404
    stale = {"metadata": {"resourceVersion": "1"}, "data": {"c": "3"}}
    code, body = await call(http, "PATCH", url + CM + "/c1", data=orjson.dumps(stale),
                            headers=MERGE)
    assert code == 409


async def test_server_side_apply_creates_then_conflicts(apiserver_no_sim: ApiServer,
                                                        http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    apply = {"Content-Type": "application/apply-patch+yaml"}
    cfg = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"},
           "data": {"a": "1"}}
    code, body = await call(http, "PATCH", url + CM + "/c1?fieldManager=one",
                            data=orjson.dumps(cfg), headers=apply)
    assert code == 201 and body["data"] == {"a": "1"}
    cfg["data"] = {"a": "2"}
    code, body = await call(http, "PATCH", url + CM + "/c1?fieldManager=two",
                            data=orjson.dumps(cfg), headers=apply)
    assert code == 409 and body["details"]["causes"][0]["reason"] == "FieldManagerConflict"
    code, body = await call(http, "PATCH", url + CM + "/c1?fieldManager=two&force=true",
                            data=orjson.dumps(cfg), headers=apply)
    assert code == 200 and body["data"] == {"a": "2"}
    code, body = await call(http, "PATCH", url + CM + "/c1", data=orjson.dumps(cfg),
                            headers=apply)
    assert code == 422


async def test_list_resource_version_rules(apiserver_no_sim: ApiServer,
                                           http: aiohttp.ClientSession) -> None:
    srv = apiserver_no_sim
    _, a = await call(http, "POST", srv.url + CM, json={"metadata": {"name": "a"}})
    rv_a = a["metadata"]["resourceVersion"]
    await call(http, "POST", srv.url + CM, json={"metadata": {"name": "b"}})
    code, body = await call(http, "GET", srv.url + CM + f"?resourceVersion={rv_a}"
                                                         "&resourceVersionMatch=Exact")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["a"]
    assert body["metadata"]["resourceVersion"] == rv_a
    code, body = await call(http, "GET", srv.url + CM + "?resourceVersion=99999")
    assert code == 504 and body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    code, _ = await call(http, "GET", srv.url + CM + "?resourceVersionMatch=Exact")
    assert code == 422
    code, body = await call(http, "GET", srv.url + CM + "?limit=1")
    token = body["metadata"]["continue"]
    srv.faults.expire_history()
    code, body = await call(http, "GET", srv.url + CM + f"?limit=1&continue={token}")
    assert code == 410 and body["reason"] == "Expired"


async def test_table_responses(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    await call(http, "POST", url + CRDS, json=WIDGET_CRD)
    await call(http, "POST", url + WIDGETS, json=widget("w1", size=3))
    accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    code, table = await call(http, "GET", url + WIDGETS, headers=accept)
    assert code == 200 and table["kind"] == "Table"
    assert table["columnDefinitions"][0]["name"] == "Name"
    assert table["rows"][0]["cells"][0] == "w1"
    assert table["metadata"]["resourceVersion"]
    code, table = await call(http, "GET", url + WIDGETS + "/w1", headers=accept)
    assert code == 200 and len(table["rows"]) == 1


async def test_in_process_store_api_and_subscribe(apiserver_no_sim: ApiServer) -> None:
    store = apiserver_no_sim.store
    rt = store.resolve("", "v1", "configmaps")
    seen: list[tuple[str, str]] = []

    async def consume() -> None:
        async for type_, event_rt, obj in store.subscribe():
            if event_rt.gr == rt.gr:
                seen.append((type_, obj["metadata"]["name"]))

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    created = await store.create(rt, {"metadata": {"name": "c1", "namespace": "default"}})
    created["data"] = {"x": "y"}
    await store.update(rt, created)
    assert store.list(rt, "default", label_selector={"missing": "x"}) == []
    assert await store.delete(rt, "default", "c1") is None
    await eventually(lambda: len(seen) == 3)
    assert seen == [("ADDED", "c1"), ("MODIFIED", "c1"), ("DELETED", "c1")]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_admission_hook_mutates_and_rejects(apiserver_no_sim: ApiServer,
                                                  http: aiohttp.ClientSession) -> None:
    from asyncop.apiserver.core.errors import forbidden

    store = apiserver_no_sim.store
    rt = store.resolve("", "v1", "configmaps")

    def hook(op: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if obj["metadata"]["name"] == "deny":
            raise forbidden(rt, "deny", "denied by test")
        obj.setdefault("data", {})["op"] = op

    store.add_admission(rt.gr, hook)
    code, body = await call(http, "POST", apiserver_no_sim.url + CM,
                            json={"metadata": {"name": "ok"}})
    assert code == 201 and body["data"] == {"op": "CREATE"}
    code, body = await call(http, "POST", apiserver_no_sim.url + CM,
                            json={"metadata": {"name": "deny"}})
    assert code == 403


async def test_events_v1_share_core_event_storage(apiserver_no_sim: ApiServer,
                                                  http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    v1 = url + "/apis/events.k8s.io/v1/namespaces/default/events"
    core = url + "/api/v1/namespaces/default/events"
    event = {"metadata": {"name": "e1"}, "eventTime": "2026-01-01T00:00:00.000000Z",
             "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
             "note": "pulled", "reason": "Pulled", "type": "Normal", "action": "Pull",
             "reportingController": "kubelet", "reportingInstance": "node-1"}
    code, created = await call(http, "POST", v1, json=event)
    assert code == 201 and created["apiVersion"] == "events.k8s.io/v1"
    assert created["regarding"]["name"] == "p" and created["note"] == "pulled"
    code, stored = await call(http, "GET", core + "/e1")
    assert stored["apiVersion"] == "v1" and stored["message"] == "pulled"
    assert stored["involvedObject"]["name"] == "p" and stored["reportingComponent"] == "kubelet"
    code, listed = await call(http, "GET", core + "?fieldSelector=involvedObject.name%3Dp")
    assert [e["metadata"]["name"] for e in listed["items"]] == ["e1"]
    code, listed = await call(http, "GET", v1 + "?fieldSelector=regarding.name%3Dother")
    assert listed["items"] == []
    async with http.get(v1 + "?watch=1&timeoutSeconds=1") as resp:
        first = orjson.loads(await resp.content.readline())
    assert first["object"]["apiVersion"] == "events.k8s.io/v1"
    assert first["object"]["note"] == "pulled"


async def test_partial_object_metadata(apiserver_no_sim: ApiServer,
                                       http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    await call(http, "POST", url + CM, json={"metadata": {"name": "c1"}, "data": {"a": "b"}})
    accept = {"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                        "application/json"}
    code, body = await call(http, "GET", url + CM, headers=accept)
    assert code == 200 and body["kind"] == "PartialObjectMetadataList"
    assert body["items"][0] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                "metadata": body["items"][0]["metadata"]}
    accept = {"Accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"}
    code, body = await call(http, "GET", url + CM + "/c1", headers=accept)
    assert code == 200 and body["kind"] == "PartialObjectMetadata" and "data" not in body
    async with http.get(url + CM + "?watch=1&timeoutSeconds=1", headers=accept) as resp:
        event = orjson.loads(await resp.content.readline())
    assert event["object"]["kind"] == "PartialObjectMetadata"
    assert event["object"]["metadata"]["name"] == "c1"


async def test_annotations_are_limited_to_256_kib_in_total(apiserver_no_sim: ApiServer) -> None:
    """kube: ValidateAnnotationsSize — keys and values of all annotations together at most
    262,144 bytes (TotalAnnotationSizeLimitB); a CRD applied client-side by kubectl carries
    its whole text in last-applied-configuration, which is how large CRDs meet it."""
    from asyncop.api import Invalid

    store = apiserver_no_sim.store
    rt = store.resolve("", "v1", "configmaps")
    big = {"a": "x" * (256 * 1024 - 1)}  # key + value: exactly the limit
    await store.create(rt, {"metadata": {"name": "fits", "annotations": big}},
                       namespace="default")
    with pytest.raises(Invalid) as refused:
        await store.create(rt, {"metadata": {"name": "over", "annotations": {
            "a": "x" * (256 * 1024)}}}, namespace="default")
    assert refused.value.status["message"] == (
        'ConfigMap "over" is invalid: metadata.annotations: Too long: may not be more than '
        "262144 bytes")
