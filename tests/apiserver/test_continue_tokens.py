"""Continue tokens cannot widen a list (issue: RBAC bypass through continue tokens).

kube's continue token holds a start key relative to the requested resource's key prefix
(kube: storage/etcd3 decodeContinue), so whatever a client puts in it, a page never leaves
the resource and namespace the request names — and RBAC authorises that request. Ours hold
a snapshot id; these tests pin that a snapshot serves only lists of the scope it was cut for
and that its id cannot be guessed.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import aiohttp
import orjson
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.apiserver.http.rbac import ADMIN_RULES, Authorizer, Subject, rules
from tests.apiserver.httpkit import call

CONFIGMAP_LISTER = rules([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}])


@pytest_asyncio.fixture
async def server() -> AsyncIterator[ApiServer]:
    authz = Authorizer({
        "admin-token": Subject("admin", ADMIN_RULES),
        "team-token": Subject("team", (), namespaced={"team-a": CONFIGMAP_LISTER}),
    })
    async with ApiServer(simulators=False, authorizer=authz) as srv:
        yield srv


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _token(body: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=")


async def _seed(http: aiohttp.ClientSession, base: str) -> None:
    for ns in ("prod", "team-a"):
        code, _ = await call(http, "POST", base + "/api/v1/namespaces",
                             json={"metadata": {"name": ns}}, headers=_as("admin-token"))
        assert code == 201
    for i in range(3):
        code, _ = await call(http, "POST", base + "/api/v1/namespaces/prod/secrets",
                             json={"metadata": {"name": f"s{i}"}, "data": {"k": "c2VjcmV0"}},
                             headers=_as("admin-token"))
        assert code == 201
        code, _ = await call(http, "POST", base + "/api/v1/namespaces/team-a/configmaps",
                             json={"metadata": {"name": f"c{i}"}}, headers=_as("admin-token"))
        assert code == 201


async def test_a_token_from_an_admins_secret_list_reads_no_secrets(server: ApiServer) -> None:
    base = server.url
    async with aiohttp.ClientSession() as http:
        await _seed(http, base)
        code, page = await call(http, "GET", base + "/api/v1/namespaces/prod/secrets?limit=1",
                                headers=_as("admin-token"))
        assert code == 200 and page["metadata"]["continue"]
        stolen = page["metadata"]["continue"]
        # the team may list configmaps in team-a: the admin's token on that list is refused
        code, body = await call(
            http, "GET", base + f"/api/v1/namespaces/team-a/configmaps?limit=1&continue={stolen}",
            headers=_as("team-token"))
        assert code == 400, body
        assert body["message"].startswith("continue key is not valid")
        assert "items" not in body
        # and the secrets list itself stays forbidden to the team, token or not
        code, body = await call(
            http, "GET", base + f"/api/v1/namespaces/prod/secrets?limit=1&continue={stolen}",
            headers=_as("team-token"))
        assert code == 403


async def test_forged_snapshot_ids_find_nothing(server: ApiServer) -> None:
    base = server.url
    async with aiohttp.ClientSession() as http:
        await _seed(http, base)
        code, page = await call(http, "GET", base + "/api/v1/namespaces/prod/secrets?limit=1",
                                headers=_as("admin-token"))
        assert code == 200
        issued = orjson.loads(base64.urlsafe_b64decode(
            page["metadata"]["continue"] + "=" * (-len(page["metadata"]["continue"]) % 4)))
        assert len(issued["s"]) >= 16  # random, not a counter
        for guess in ("1", "2", "3", "0"):
            forged = _token({"v": "meta.k8s.io/v1", "rv": issued["rv"], "start": "x",
                             "s": guess, "o": 1})
            code, body = await call(
                http, "GET",
                base + f"/api/v1/namespaces/team-a/configmaps?limit=1&continue={forged}",
                headers=_as("team-token"))
            assert code == 410 and "items" not in body  # unknown: expired, as kube says
        negative = _token({"v": "meta.k8s.io/v1", "rv": issued["rv"], "start": "x",
                           "s": issued["s"], "o": -2})
        code, body = await call(
            http, "GET", base + f"/api/v1/namespaces/prod/secrets?limit=1&continue={negative}",
            headers=_as("admin-token"))
        assert code == 400 and body["message"].startswith("continue key is not valid")


async def test_without_rbac_a_token_stays_with_its_resource_namespace_and_selector(
        server: ApiServer) -> None:
    base = server.url
    admin = _as("admin-token")
    async with aiohttp.ClientSession() as http:
        await _seed(http, base)
        code, page = await call(http, "GET",
                                base + "/api/v1/namespaces/team-a/configmaps?limit=1",
                                headers=admin)
        token = page["metadata"]["continue"]
        for url in ("/api/v1/namespaces/prod/secrets",  # another resource
                    "/api/v1/namespaces/prod/configmaps",  # another namespace
                    "/api/v1/configmaps",  # all namespaces
                    "/api/v1/namespaces/team-a/configmaps?labelSelector=a%3Db"):  # a selector
            sep = "&" if "?" in url else "?"
            code, body = await call(http, "GET", base + url + f"{sep}limit=1&continue={token}",
                                    headers=admin)
            assert code == 400, (url, body)
            assert body["message"].startswith("continue key is not valid")
        # the list it was issued for goes on, and its pages add up to the whole list
        names = [page["items"][0]["metadata"]["name"]]
        while token:
            code, page = await call(
                http, "GET",
                base + f"/api/v1/namespaces/team-a/configmaps?limit=1&continue={token}",
                headers=admin)
            assert code == 200
            names += [o["metadata"]["name"] for o in page["items"]]
            token = page["metadata"].get("continue")
        assert names == ["c0", "c1", "c2"]
