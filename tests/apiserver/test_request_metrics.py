"""GET /metrics: apiserver_request_total with kube's labels (verb, group, version, resource,
subresource, scope, code) and requests by the User-Agent's product name."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from asyncop.api.kinds import CONFIGMAP
from asyncop.apiserver import ApiServer
from asyncop.apiserver.http.metrics import client_of, kube_verb
from asyncop.client import Client, ClientConfig

CM = "/api/v1/namespaces/default/configmaps"


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(headers={"User-Agent": "loaddriver/1.0 (bench)"}) as s:
        yield s


def _samples(text: str, name: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        m = re.match(rf"{name}\{{(.*)\}} (\d+)$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


async def test_requests_are_counted_by_verb_resource_scope_and_code(
    apiserver_no_sim: ApiServer, http: aiohttp.ClientSession
) -> None:
    srv = apiserver_no_sim
    for i in range(3):
        async with http.post(srv.url + CM, json={"metadata": {"name": f"c{i}"}}) as r:
            assert r.status == 201
    async with http.post(srv.url + CM, json={"metadata": {"name": "c0"}}) as r:
        assert r.status == 409
    async with http.get(srv.url + CM + "/c1") as r:
        assert r.status == 200
    async with http.get(srv.url + "/api/v1/configmaps") as r:
        assert r.status == 200
    applied = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c2"},"data":{}}'
    async with http.patch(srv.url + CM + "/c2?fieldManager=t", data=applied,
                          headers={"Content-Type": "application/apply-patch+yaml"}) as r:
        assert r.status == 200
    async with Client(ClientConfig(host=srv.url), max_retries=0) as c:
        await c.update(CONFIGMAP, {**await c.get(CONFIGMAP, "c1"), "data": {"x": "y"}})
    async with http.get(srv.url + "/metrics") as r:
        assert r.status == 200 and r.content_type == "text/plain"
        text = await r.text()
    total = _samples(text, "apiserver_request_total")
    base = 'component="apiserver",group="",resource="configmaps"'

    def n(code: str, scope: str, verb: str) -> int:
        return total[f'code="{code}",{base},scope="{scope}",subresource="",verb="{verb}",'
                     'version="v1"']

    assert n("201", "namespace", "POST") == 3
    assert n("409", "namespace", "POST") == 1
    assert n("200", "resource", "GET") == 2
    assert n("200", "cluster", "LIST") == 1
    assert n("200", "resource", "APPLY") == 1
    assert n("200", "resource", "PUT") == 1
    by_client = _samples(text, "asyncop_apiserver_requests_by_client_total")
    assert by_client['client="loaddriver",code="201",resource="configmaps",subresource="",'
                     'verb="POST"'] == 3
    assert by_client['client="asyncop",code="200",resource="configmaps",subresource="",'
                     'verb="GET"'] == 1
    assert by_client['client="asyncop",code="200",resource="configmaps",subresource="",'
                     'verb="PUT"'] == 1
    assert sum(by_client.values()) == sum(total.values())


def test_labels() -> None:
    assert kube_verb("create", "application/json") == "POST"
    assert kube_verb("patch", "application/apply-patch+yaml") == "APPLY"
    assert kube_verb("patch", "application/merge-patch+json") == "PATCH"
    assert kube_verb("deletecollection", "") == "DELETECOLLECTION"
    assert client_of("kubectl/v1.33.0 (linux/amd64) kubernetes/abc") == "kubectl"
    assert client_of("Python/3.11 aiohttp/3.14") == "Python"
    assert client_of("") == "unknown"
