"""The RBAC-enforcing mode over real HTTP: bearer tokens name users, PolicyRules decide, and
denials carry kube-apiserver's 403 wording; usage and denials are recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import orjson
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.apiserver.http.rbac import ADMIN_RULES, Authorizer, Rule, Subject, rules
from tests.apiserver.httpkit import call

READER = rules([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
                {"apiGroups": ["apps"], "resources": ["deployments/status"],
                 "verbs": ["update"]}])


@pytest_asyncio.fixture
async def rbac_server() -> AsyncIterator[ApiServer]:
    authz = Authorizer({
        "admin-token": Subject("admin", ADMIN_RULES),
        "reader-token": Subject("reader", READER, namespaced={
            "team": rules([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"],
                            "resourceNames": ["mine"]}])}),
    })
    async with ApiServer(simulators=False, authorizer=authz) as srv:
        yield srv


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_forbidden_answers_are_worded_like_kube(rbac_server: ApiServer) -> None:
    base = rbac_server.url
    async with aiohttp.ClientSession() as http:
        code, body = await call(http, "GET", base + "/api/v1/namespaces/default/pods",
                                headers=_as("reader-token"))
        assert code == 403
        assert body == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'pods is forbidden: User "reader" cannot list resource "pods" in API '
                       'group "" in the namespace "default"',
            "reason": "Forbidden", "details": {"kind": "pods"}, "code": 403}
        code, body = await call(http, "DELETE",
                                base + "/apis/apps/v1/namespaces/default/deployments/web",
                                headers=_as("reader-token"))
        assert code == 403 and body["details"] == {"name": "web", "group": "apps",
                                                   "kind": "deployments"}
        assert body["message"] == (
            'deployments.apps "web" is forbidden: User "reader" cannot delete resource '
            '"deployments" in API group "apps" in the namespace "default"')
        code, body = await call(http, "GET", base + "/api/v1/nodes",
                                headers=_as("reader-token"))
        assert body["message"] == ('nodes is forbidden: User "reader" cannot list resource '
                                   '"nodes" in API group "" at the cluster scope')
        code, body = await call(http, "GET", base + "/api/v1/configmaps?watch=1",
                                headers=_as("reader-token"))
        assert code == 403 and "cannot watch resource \"configmaps\"" in body["message"]
        code, body = await call(http, "GET", base + "/metrics", headers=_as("reader-token"))
        assert (code, body["message"]) == (
            403, 'forbidden: User "reader" cannot get path "/metrics"')
        code, body = await call(http, "PUT",
                                base + "/apis/apps/v1/namespaces/default/deployments/web/scale",
                                json={}, headers=_as("reader-token"))
        assert code == 403 and 'cannot update resource "deployments/scale"' in body["message"]


async def test_rules_allow_what_they_name_and_usage_is_recorded(
        rbac_server: ApiServer) -> None:
    base = rbac_server.url
    authz = rbac_server.authorizer
    assert authz is not None
    async with aiohttp.ClientSession() as http:
        code, _ = await call(http, "POST", base + "/api/v1/namespaces",
                             json={"metadata": {"name": "team"}}, headers=_as("admin-token"))
        assert code == 201
        code, _ = await call(http, "GET", base + "/api/v1/namespaces/default/configmaps",
                             headers=_as("reader-token"))
        assert code == 200
        for path in ("/api", "/apis", "/api/v1", "/apis/apps/v1", "/version", "/openapi/v2",
                     "/openapi/v3"):  # open to every authenticated user
            code, _ = await call(http, "GET", base + path, headers={
                **_as("reader-token"), "Accept": "application/json"})
            assert code == 200, path
        secret = {"metadata": {"name": "mine"}, "stringData": {"a": "b"}}
        code, _ = await call(http, "POST", base + "/api/v1/namespaces/team/secrets",
                             json=secret, headers=_as("reader-token"))
        assert code == 403  # resourceNames cannot allow a create (it has no name yet)
        code, _ = await call(http, "POST", base + "/api/v1/namespaces/team/secrets",
                             json=secret, headers=_as("admin-token"))
        assert code == 201
        code, _ = await call(http, "GET", base + "/api/v1/namespaces/team/secrets/mine",
                             headers=_as("reader-token"))
        assert code == 200  # a Role-like rule in its namespace
        code, _ = await call(http, "GET", base + "/api/v1/namespaces/default/secrets/mine",
                             headers=_as("reader-token"))
        assert code == 403  # and only there
    assert authz.used("reader") == {("", "configmaps", "list"), ("", "secrets", "get")}
    assert [(d.verb, d.resource, d.namespace) for d in authz.denied] == [
        ("create", "secrets", "team"), ("get", "secrets", "default")]


async def test_unknown_or_missing_tokens_are_401_except_public_paths(
        rbac_server: ApiServer) -> None:
    async with aiohttp.ClientSession() as http:
        for headers in ({}, _as("nope"), {"Authorization": "Basic eDp5"}):
            code, body = await call(http, "GET", rbac_server.url + "/api/v1/namespaces",
                                    headers=headers)
            assert (code, body["reason"]) == (401, "Unauthorized")
        async with http.get(rbac_server.url + "/healthz") as r:
            assert r.status == 200
        code, _ = await call(http, "GET", rbac_server.url + "/version")
        assert code == 200


def test_rule_matching() -> None:
    rule = Rule(("apps",), ("deployments", "replicasets/*"), ("get",), ("web",))
    assert rule.allows("get", "apps", "deployments", "web")
    assert not rule.allows("get", "apps", "deployments", "other")
    assert not rule.allows("get", "apps", "deployments/status", "web")
    assert rule.allows("get", "apps", "replicasets/scale", "web")
    assert not rule.allows("list", "apps", "deployments", "web")
    assert not rule.allows("get", "", "deployments", "web")
    star = Rule(("*",), ("*/status",), ("*",))
    assert star.allows("patch", "x.io", "widgets/status", "")
    assert not star.allows("patch", "x.io", "widgets", "")
    path = Rule(verbs=("get",), non_resource_urls=("/metrics", "/logs/*"))
    assert path.allows_path("get", "/metrics") and path.allows_path("get", "/logs/a/b")
    assert not path.allows_path("post", "/metrics") and not path.allows_path("get", "/x")


async def test_without_an_authorizer_nothing_changes(apiserver_no_sim: ApiServer) -> None:
    assert apiserver_no_sim.authorizer is None
    async with aiohttp.ClientSession() as http:
        code, _ = await call(http, "GET", apiserver_no_sim.url + "/api/v1/pods")
        assert code == 200


async def test_no_read_path_around_the_rules(rbac_server: ApiServer) -> None:
    """RBAC round 2: selectors, other representations, the /watch/ prefix and subresources
    never widen what a rule allows. kube's RequestInfo authorises a list or watch with a
    `metadata.name` field selector as a request for that name, so `resourceNames` apply to
    it (and only to it); everything else is authorised by verb, resource and namespace."""
    base = rbac_server.url
    team = base + "/api/v1/namespaces/team/secrets"
    async with aiohttp.ClientSession() as http:
        code, _ = await call(http, "POST", base + "/api/v1/namespaces",
                             json={"metadata": {"name": "team"}}, headers=_as("admin-token"))
        assert code == 201
        for name in ("mine", "theirs"):
            code, _ = await call(http, "POST", team, headers=_as("admin-token"),
                                 json={"metadata": {"name": name}, "data": {"k": "dg=="}})
            assert code == 201
        reader = _as("reader-token")
        code, got = await call(http, "GET", team + "/mine", headers=reader)
        assert code == 200 and got["data"] == {"k": "dg=="}
        code, _ = await call(http, "GET", team + "/theirs", headers=reader)
        assert code == 403
        code, _ = await call(http, "GET", team, headers=reader)
        assert code == 403  # a list is not a get of each name
        code, listed = await call(http, "GET", team + "?fieldSelector=metadata.name%3Dmine",
                                  headers=reader)
        assert code == 200 and [o["metadata"]["name"] for o in listed["items"]] == ["mine"]
        for query in ("fieldSelector=metadata.name%3Dtheirs",
                      "fieldSelector=metadata.name%21%3Dmine",
                      "labelSelector=a%3Db", "watch=1", "watch=1&labelSelector=x",
                      "limit=1"):
            code, _ = await call(http, "GET", f"{team}?{query}", headers=reader)
            assert code == 403, query
        for accept in ("application/json;as=Table;v=v1;g=meta.k8s.io",
                       "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"):
            code, _ = await call(http, "GET", team, headers={**reader, "Accept": accept})
            assert code == 403, accept
        code, _ = await call(http, "GET", base + "/api/v1/watch/namespaces/team/secrets",
                             headers=reader)
        assert code == 403
        async with http.get(team + "?watch=1&fieldSelector=metadata.name%3Dmine&"
                            "timeoutSeconds=1", headers=reader) as r:
            assert r.status == 200
            events = [orjson.loads(line) for line in (await r.read()).splitlines() if line]
        assert [e["object"]["metadata"]["name"] for e in events] == ["mine"]
        # a status-only rule writes status, not the object, and not through scale
        dep = base + "/apis/apps/v1/namespaces/default/deployments"
        code, _ = await call(http, "PUT", dep + "/web", headers=reader, json={})
        assert code == 403
        code, _ = await call(http, "PATCH", dep + "/web/scale", headers={
            **reader, "Content-Type": "application/merge-patch+json"}, data=b"{}")
        assert code == 403
