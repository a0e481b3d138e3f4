"""CRDs created at run time: Established, discovery, CRUD at their URLs, status/scale
subresources, generation rules, and deletion with cleanup."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest_asyncio

from asyncop.apiserver import ApiServer
from tests.apiserver.crdkit import CRDS, WIDGET_CRD, WIDGETS, widget

Srv = tuple[ApiServer, aiohttp.ClientSession]
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest_asyncio.fixture
async def srv(apiserver_no_sim: ApiServer) -> AsyncIterator[Srv]:
    async with aiohttp.ClientSession() as http:
        async with http.post(apiserver_no_sim.url + CRDS, json=WIDGET_CRD) as r:
            assert r.status == 201, await r.text()
        yield apiserver_no_sim, http


async def _json(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(await resp.read())
    return body


async def test_crd_established_and_in_discovery(srv: Srv) -> None:
    server, http = srv
    async with http.get(server.url + CRDS + "/widgets.example.com") as r:
        crd = await _json(r)
    conditions = {c["type"]: c for c in crd["status"]["conditions"]}
    assert conditions["Established"]["status"] == "True"
    assert conditions["NamesAccepted"]["reason"] == "NoConflicts"
    assert crd["status"]["acceptedNames"]["kind"] == "Widget"
    async with http.get(server.url + "/apis") as r:
        groups = [g["name"] for g in (await _json(r))["groups"]]
    assert "example.com" in groups
    async with http.get(server.url + "/apis/example.com/v1") as r:
        names = [res["name"] for res in (await _json(r))["resources"]]
    assert names == ["widgets", "widgets/status", "widgets/scale"]
    accept = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                        "application/json"}
    async with http.get(server.url + "/apis", headers=accept) as r:
        assert r.headers["Content-Type"] == \
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        agg = await _json(r)
    item = next(i for i in agg["items"] if i["metadata"]["name"] == "example.com")
    assert item["versions"][0]["resources"][0]["responseKind"]["kind"] == "Widget"


async def test_custom_resource_crud_and_generation(
        srv: Srv) -> None:
    server, http = srv
    async with http.post(server.url + WIDGETS, json=widget("w1", status={"ready": True})) as r:
        assert r.status == 201
        w = await _json(r)
    assert w["metadata"]["generation"] == 1 and "status" not in w
    # status change on the main endpoint is dropped and does not bump generation
    async with http.patch(server.url + WIDGETS + "/w1", data=b'{"status":{"ready":true}}',
                          headers=MERGE) as r:
        w = await _json(r)
    assert "status" not in w and w["metadata"]["generation"] == 1
    # metadata change: no bump
    async with http.patch(server.url + WIDGETS + "/w1",
                          data=b'{"metadata":{"labels":{"a":"b"}}}', headers=MERGE) as r:
        w = await _json(r)
    assert w["metadata"]["generation"] == 1 and w["metadata"]["labels"] == {"a": "b"}
    # spec change: bump
    async with http.patch(server.url + WIDGETS + "/w1", data=b'{"spec":{"size":3}}',
                          headers=MERGE) as r:
        w = await _json(r)
    assert w["metadata"]["generation"] == 2
    # /status writes only status; spec and labels changes there are dropped
    w["status"] = {"ready": True}
    w["spec"] = {"size": 9}
    w["metadata"]["labels"] = {"changed": "yes"}
    async with http.put(server.url + WIDGETS + "/w1/status", json=w) as r:
        assert r.status == 200, await r.text()
        w = await _json(r)
    assert w["status"] == {"ready": True} and w["spec"] == {"size": 3}
    assert w["metadata"]["labels"] == {"a": "b"} and w["metadata"]["generation"] == 2
    # PUT without resourceVersion is 422 for custom resources
    del w["metadata"]["resourceVersion"]
    async with http.put(server.url + WIDGETS + "/w1", json=w) as r:
        assert r.status == 422
        assert "must be specified for an update" in (await _json(r))["message"]
    # strategic merge patch on a CR is 415
    async with http.patch(server.url + WIDGETS + "/w1", data=b"{}",
                          headers={"Content-Type": "application/strategic-merge-patch+json"}) as r:
        assert r.status == 415


async def test_scale_subresource(srv: Srv) -> None:
    server, http = srv
    async with http.post(server.url + WIDGETS, json=widget("w1", size=2)):
        pass
    async with http.get(server.url + WIDGETS + "/w1/scale") as r:
        scale = await _json(r)
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 2
    async with http.patch(server.url + WIDGETS + "/w1/scale", data=b'{"spec":{"replicas":5}}',
                          headers=MERGE) as r:
        assert r.status == 200, await r.text()
    store = server.store
    stored = store.get(store.resolve("example.com", "v1", "widgets"), "default", "w1")
    assert stored is not None
    assert stored["spec"]["size"] == 5 and stored["metadata"]["generation"] == 2


async def test_finalizer_blocks_deletion_until_removed(
        srv: Srv) -> None:
    server, http = srv
    body = widget("w1")
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    async with http.post(server.url + WIDGETS, json=body):
        pass
    async with http.delete(server.url + WIDGETS + "/w1") as r:
        assert r.status == 200
        w = await _json(r)
    assert w["metadata"]["deletionTimestamp"]
    async with http.get(server.url + WIDGETS + "/w1") as r:
        assert r.status == 200
    # no new finalizers once deleting
    patch = b'{"metadata":{"finalizers":["example.com/cleanup","other"]}}'
    async with http.patch(server.url + WIDGETS + "/w1", data=patch, headers=MERGE) as r:
        assert r.status == 422
    async with http.patch(server.url + WIDGETS + "/w1",
                          data=b'{"metadata":{"finalizers":null}}', headers=MERGE) as r:
        assert r.status == 200
    async with http.get(server.url + WIDGETS + "/w1") as r:
        assert r.status == 404


async def test_crd_deletion_removes_objects_and_types(
        srv: Srv) -> None:
    server, http = srv
    async with http.post(server.url + WIDGETS, json=widget("w1")):
        pass
    async with http.delete(server.url + CRDS + "/widgets.example.com") as r:
        assert r.status == 200
    async with http.get(server.url + CRDS + "/widgets.example.com") as r:
        assert r.status == 404
    async with http.get(server.url + WIDGETS) as r:
        assert r.status == 404
    async with http.get(server.url + "/apis/example.com/v1") as r:
        assert r.status == 404
    # re-creating serves an empty collection again
    async with http.post(server.url + CRDS, json=WIDGET_CRD) as r:
        assert r.status == 201
    async with http.get(server.url + WIDGETS) as r:
        assert (await _json(r))["items"] == []


async def test_unknown_fields_strict_and_warn(srv: Srv) -> None:
    server, http = srv
    body = widget("w1")
    body["spec"]["foo"] = 1
    async with http.post(server.url + WIDGETS + "?fieldValidation=Strict", json=body) as r:
        assert r.status == 400
        assert 'unknown field "spec.foo"' in (await _json(r))["message"]
    async with http.post(server.url + WIDGETS, json=body) as r:
        assert r.status == 201
        assert r.headers.getall("Warning") == ['299 - "unknown field \\"spec.foo\\""']
        assert (await _json(r))["spec"] == {"size": 1}
    async with http.post(server.url + WIDGETS, json=widget("w2", size=50)) as r:
        assert r.status == 422
        causes = (await _json(r))["details"]["causes"]
    assert causes[0]["field"] == "spec.size"


async def test_conflicting_names_are_not_served(srv: Srv) -> None:
    server, http = srv
    spec = {**WIDGET_CRD["spec"], "names": {"plural": "gadgets", "kind": "Widget"}}
    crd = {**WIDGET_CRD, "metadata": {"name": "gadgets.example.com"}, "spec": spec}
    async with http.post(server.url + CRDS, json=crd) as r:
        assert r.status == 201
        conditions = {c["type"]: c for c in (await _json(r))["status"]["conditions"]}
    assert conditions["NamesAccepted"]["status"] == "False"
    assert conditions["NamesAccepted"]["reason"] == "KindConflict"
    async with http.get(server.url + "/apis/example.com/v1/namespaces/default/gadgets") as r:
        assert r.status == 404


THING_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "things.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "things", "kind": "Thing"},
             "versions": [
                 {"name": "v1beta1", "served": True, "storage": False, "deprecated": True,
                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                      "spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}}},
                 {"name": "v1", "served": True, "storage": True,
                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                      "spec": {"type": "object", "properties": {
                          "a": {"type": "string"},
                          "b": {"type": "string", "default": "bee"}}}}}}}]}}


async def test_multi_version_crd(apiserver_no_sim: ApiServer) -> None:
    url = apiserver_no_sim.url
    things = "/namespaces/default/things"
    async with aiohttp.ClientSession() as http:
        async with http.post(url + CRDS, json=THING_CRD) as r:
            assert (await _json(r))["status"]["storedVersions"] == ["v1"]
        async with http.post(url + "/apis/example.com/v1beta1" + things,
                             json={"metadata": {"name": "t"}, "spec": {"a": "x"}}) as r:
            assert r.status == 201
            assert r.headers.getall("Warning") == [
                '299 - "example.com/v1beta1 Thing is deprecated; use example.com/v1 Thing"']
            assert (await _json(r))["apiVersion"] == "example.com/v1beta1"
        async with http.get(url + "/apis/example.com/v1" + things + "/t") as r:
            thing = await _json(r)
        assert thing["apiVersion"] == "example.com/v1"
        assert thing["spec"] == {"a": "x", "b": "bee"}  # read-time default of v1
        async with http.get(url + "/apis/example.com") as r:
            assert (await _json(r))["preferredVersion"]["version"] == "v1"


async def test_status_writes_are_validated_against_the_schema(srv: Srv) -> None:
    server, http = srv
    async with http.post(server.url + WIDGETS, json=widget("w1")) as r:
        w = await _json(r)
    w["status"] = {"ready": "not-a-bool"}
    async with http.put(server.url + WIDGETS + "/w1/status", json=w) as r:
        assert r.status == 422
        assert (await _json(r))["details"]["causes"][0]["field"] == "status.ready"
    w["status"] = {"ready": True, "unknown": 1}
    async with http.put(server.url + WIDGETS + "/w1/status", json=w) as r:
        assert r.status == 200
        assert (await _json(r))["status"] == {"ready": True}


async def test_removing_last_finalizer_emits_a_single_deleted(srv: Srv) -> None:
    server, http = srv
    body = widget("w1")
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    async with http.post(server.url + WIDGETS, json=body) as r:
        rv = (await _json(r))["metadata"]["resourceVersion"]
    async with http.delete(server.url + WIDGETS + "/w1"):
        pass
    async with http.patch(server.url + WIDGETS + "/w1", headers=MERGE,
                          data=b'{"metadata":{"finalizers":[]}}') as r:
        assert r.status == 200
    async with http.get(server.url + WIDGETS + f"?watch=1&resourceVersion={rv}"
                                               "&timeoutSeconds=1") as r:
        events = [orjson.loads(line) async for line in r.content]
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["metadata"]["deletionTimestamp"]


async def test_default_added_later_applies_on_read(srv: Srv) -> None:
    server, http = srv
    async with http.post(server.url + WIDGETS, json=widget("w1")):
        pass
    async with http.get(server.url + CRDS + "/widgets.example.com") as r:
        crd = await _json(r)
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    props["spec"]["properties"]["color"]["default"] = "red"
    async with http.put(server.url + CRDS + "/widgets.example.com", json=crd) as r:
        assert r.status == 200, await r.text()
    async with http.get(server.url + WIDGETS + "/w1") as r:
        assert (await _json(r))["spec"] == {"size": 1, "color": "red"}


async def test_conflicting_crd_is_accepted_once_the_holder_is_gone(srv: Srv) -> None:
    server, http = srv
    spec = {**WIDGET_CRD["spec"], "names": {"plural": "gadgets", "kind": "Widget"}}
    crd = {**WIDGET_CRD, "metadata": {"name": "gadgets.example.com"}, "spec": spec}
    async with http.post(server.url + CRDS, json=crd) as r:
        assert r.status == 201
    async with http.delete(server.url + CRDS + "/widgets.example.com") as r:
        assert r.status == 200
    async with http.get(server.url + CRDS + "/gadgets.example.com") as r:
        conditions = {c["type"]: c["status"] for c in (await _json(r))["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    async with http.get(server.url + "/apis/example.com/v1/namespaces/default/gadgets") as r:
        assert r.status == 200


async def test_uid_is_immutable(srv: Srv) -> None:
    server, http = srv
    async with http.post(server.url + WIDGETS, json=widget("w1")) as r:
        w = await _json(r)
    w["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000"
    async with http.put(server.url + WIDGETS + "/w1", json=w) as r:
        assert r.status == 422 and "field is immutable" in (await _json(r))["message"]
