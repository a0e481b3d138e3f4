"""Wire details clients' own test suites compare byte for byte: Status field order, a
resourceVersion given on create, ownerReference error text, APIService objects, and the
`default` ServiceAccount kube-controller-manager puts in every namespace."""

from __future__ import annotations

import aiohttp

from asyncop.apiserver import ApiServer
from asyncop.testing import eventually
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call

CM = "/api/v1/namespaces/default/configmaps"
http = httpkit.http  # the shared aiohttp session fixture


async def _raw(http: aiohttp.ClientSession, method: str, url: str,
               json: object = None) -> tuple[int, bytes]:
    async with http.request(method, url, json=json) as r:
        return r.status, await r.read()


async def test_status_bodies_keep_kubes_field_order(apiserver_no_sim: ApiServer,
                                                    http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    await call(http, "POST", url + CM, json={"metadata": {"name": "dup"}})
    code, raw = await _raw(http, "POST", url + CM, json={"metadata": {"name": "dup"}})
    assert code == 409
    assert raw.rstrip(b"\n") == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"configmaps \\"dup\\" already exists","reason":"AlreadyExists",'
        b'"details":{"name":"dup","kind":"configmaps"},"code":409}')
    code, raw = await _raw(http, "DELETE", url + CM + "/dup")
    assert code == 200
    body = raw.decode()
    assert body.startswith('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",'
                           '"details":{"name":"dup","kind":"configmaps","uid":"')
    code, body_ = await call(http, "GET", url + "/apis/apps/v1/namespaces/default/deployments/x")
    assert code == 404 and list(body_) == ["kind", "apiVersion", "metadata", "status",
                                            "message", "reason", "details", "code"]
    assert list(body_["details"]) == ["name", "group", "kind"]


async def test_resource_version_on_create(apiserver_no_sim: ApiServer,
                                          http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    for i, rv in enumerate(["", "0", "abc", "-1", "+5"]):  # cleared, and the create accepted
        code, body = await call(http, "POST", url + CM, json={
            "metadata": {"name": f"ok{i}", "resourceVersion": rv}})
        assert code == 201, (rv, body)
        assert body["metadata"]["resourceVersion"] not in ("", "0", "abc", "-1", "+5")
    code, body = await call(http, "POST", url + CM, json={
        "metadata": {"name": "refused", "resourceVersion": "12"}})
    assert code == 400 and body["reason"] == "BadRequest"
    assert body["message"] == "resourceVersion should not be set on objects to be created"
    code, _ = await call(http, "GET", url + CM + "/refused")
    assert code == 404


async def test_owner_reference_errors_are_worded_like_kube(apiserver_no_sim: ApiServer,
                                                           http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    code, body = await call(http, "POST", url + CM, json={"metadata": {
        "name": "owned", "ownerReferences": [{"apiVersion": "", "kind": "", "name": "o",
                                              "uid": "u-1"}]}})
    assert code == 422
    causes = [(c["field"], c["message"]) for c in body["details"]["causes"]]
    assert causes == [
        ("metadata.ownerReferences.apiVersion", 'Invalid value: "": version must not be empty'),
        ("metadata.ownerReferences.kind", 'Invalid value: "": must not be empty'),
    ]
    assert 'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be ' \
           'empty' in body["message"]
    code, body = await call(http, "POST", url + CM, json={"metadata": {
        "name": "owned", "ownerReferences": [{"apiVersion": "apps/", "kind": "Deployment",
                                              "name": "", "uid": "u-1"}]}})
    assert code == 422
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("metadata.ownerReferences.apiVersion",
         'Invalid value: "apps/": version must not be empty'),
        ("metadata.ownerReferences.name", 'Invalid value: "": must not be empty'),
    ]


async def test_apiservices_are_served(apiserver_no_sim: ApiServer,
                                      http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + "/apis/apiregistration.k8s.io/v1/apiservices"
    obj = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": "v1beta1.metrics.k8s.io"},
           "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                    "versionPriority": 100, "service": {"name": "metrics", "namespace": "x"}}}
    code, created = await call(http, "POST", url, json=obj)
    assert code == 201 and created["spec"]["group"] == "metrics.k8s.io"
    code, got = await call(http, "GET", url + "/v1beta1.metrics.k8s.io")
    assert code == 200 and got["metadata"]["uid"] == created["metadata"]["uid"]
    code, listed = await call(http, "GET", url)
    assert code == 200 and [i["metadata"]["name"] for i in listed["items"]] == [
        "v1beta1.metrics.k8s.io"]
    code, groups = await call(http, "GET", apiserver_no_sim.url + "/apis")
    assert "apiregistration.k8s.io" in [g["name"] for g in groups["groups"]]


async def test_every_namespace_gets_a_default_service_account(
        apiserver: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver.url

    async def default_sa(ns: str) -> bool:
        code, _ = await call(http, "GET", f"{url}/api/v1/namespaces/{ns}/serviceaccounts/default")
        return code == 200

    assert await eventually(lambda: default_sa("default"), timeout=10)
    await call(http, "POST", url + "/api/v1/namespaces", json={"metadata": {"name": "team-a"}})
    assert await eventually(lambda: default_sa("team-a"), timeout=10)
    code, _ = await call(http, "DELETE", f"{url}/api/v1/namespaces/team-a/serviceaccounts/default")
    assert code == 200
    assert await eventually(lambda: default_sa("team-a"), timeout=10)  # put back
