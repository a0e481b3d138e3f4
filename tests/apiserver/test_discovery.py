"""Discovery, version, health, OpenAPI presence and path-level errors."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from asyncop.apiserver import ApiServer


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_version_and_health(http: aiohttp.ClientSession) -> None:
    async with ApiServer(simulators=False, version=("1", "30")) as srv:
        async with http.get(srv.url + "/version") as r:
            info = await r.json()
        assert info["gitVersion"] == "v1.30.0" and info["minor"] == "30"
        for path in ("/healthz", "/readyz", "/livez"):
            async with http.get(srv.url + path) as r:
                assert r.status == 200 and await r.text() == "ok"


async def test_legacy_discovery_shapes(apiserver_no_sim: ApiServer,
                                       http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    async with http.get(url + "/api") as r:
        assert (await r.json())["versions"] == ["v1"]
    async with http.get(url + "/api/v1") as r:
        resources = {res["name"]: res for res in (await r.json())["resources"]}
    assert resources["pods"]["shortNames"] == ["po"] and "pods/status" in resources
    assert resources["namespaces"]["namespaced"] is False
    async with http.get(url + "/apis/apps/v1") as r:
        resources = {res["name"]: res for res in (await r.json())["resources"]}
    assert resources["deployments/scale"]["group"] == "autoscaling"
    async with http.get(url + "/apis/apps") as r:
        assert (await r.json())["preferredVersion"]["groupVersion"] == "apps/v1"
    async with http.get(url + "/apis/nope.example.com") as r:
        assert r.status == 404


async def test_aggregated_discovery_v2beta1(apiserver_no_sim: ApiServer,
                                            http: aiohttp.ClientSession) -> None:
    accept = ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
              "application/json")
    async with http.get(apiserver_no_sim.url + "/api", headers={"Accept": accept}) as r:
        assert r.headers["Content-Type"].endswith("v=v2beta1;as=APIGroupDiscoveryList")
        body = await r.json(content_type=None)
    assert body["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert body["items"][0]["metadata"] == {}
    core = {res["resource"] for res in body["items"][0]["versions"][0]["resources"]}
    assert {"pods", "configmaps", "namespaces"} <= core


async def test_path_errors(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    async with http.get(url + "/api/v1/namespaces/default/widgets") as r:
        assert r.status == 404
        assert (await r.json())["message"] == "the server could not find the requested resource"
    async with http.post(url + "/api/v1/configmaps", json={}) as r:
        assert r.status == 405 and (await r.json())["reason"] == "MethodNotAllowed"
    async with http.post(url + "/api/v1/namespaces/default/configmaps", data=b"{nope",
                         headers={"Content-Type": "application/json"}) as r:
        assert r.status == 400 and (await r.json())["reason"] == "BadRequest"


async def test_openapi_endpoints(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    accept = {"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
    async with http.get(url + "/openapi/v2", headers=accept) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == \
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        assert (await r.read()).startswith(b"\x0a\x032.0")
    async with http.get(url + "/openapi/v3") as r:
        index = await r.json()
    assert "api/v1" in index["paths"] and "apis/apps/v1" in index["paths"]
    async with http.get(url + "/openapi/v3/apis/apps/v1") as r:
        assert r.status == 200


async def test_kubelet_subresources_fail_loudly(apiserver_no_sim: ApiServer,
                                                http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + "/api/v1/namespaces/default/pods/p/exec?command=ls"
    async with http.post(url) as r:
        assert r.status == 400
        assert "pods/exec is not supported" in (await r.json())["message"]
