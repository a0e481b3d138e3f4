"""The review APIs tell the truth of the server's authentication mode, tokens are compared
in constant time, and the kubeconfig that holds a token is the owner's alone.

Regressions (adversarial review): with a token configured, a TokenReview of `garbage`
answered `authenticated: true` as system:anonymous in system:masters; in RBAC mode a
SelfSubjectAccessReview said "allowed" for `delete pods` while the DELETE got 403. kube:
the TokenReview is answered by the same authenticators that guard requests, and
SelfSubjectAccessReview by the authorizer that decides them (pkg/registry/authorization).
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.apiserver.http import auth
from asyncop.apiserver.http.rbac import ADMIN_RULES, Authorizer, Subject, rules
from tests.apiserver.httpkit import call

AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"
READER = rules([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}])


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _ssar(verb: str, resource: str, namespace: str = "default") -> dict[str, object]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": verb, "resource": resource,
                                            "namespace": namespace}}}


@pytest_asyncio.fixture
async def rbac_server() -> AsyncIterator[ApiServer]:
    authz = Authorizer({"admin-token": Subject("admin", ADMIN_RULES),
                        "reader-token": Subject("reader", READER)})
    async with ApiServer(simulators=False, authorizer=authz) as srv:
        yield srv


async def test_token_mode_token_reviews_authenticate_only_the_token() -> None:
    async with ApiServer(simulators=False, token="s3cret") as srv, \
            aiohttp.ClientSession() as http:
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
        code, body = await call(http, "POST", srv.url + AUTHN + "/tokenreviews",
                                json={**review, "spec": {"token": "garbage"}},
                                headers=_as("s3cret"))
        assert code == 201 and body["status"]["authenticated"] is False
        assert body["status"]["user"] == {}
        code, body = await call(http, "POST", srv.url + AUTHN + "/tokenreviews",
                                json={**review, "spec": {"token": "s3cret"}},
                                headers=_as("s3cret"))
        assert body["status"] == {"authenticated": True, "user": {
            "username": "system:admin", "groups": ["system:masters", "system:authenticated"]}}
        code, body = await call(http, "POST", srv.url + AUTHN + "/selfsubjectreviews",
                                json={"apiVersion": "authentication.k8s.io/v1",
                                      "kind": "SelfSubjectReview"}, headers=_as("s3cret"))
        assert body["status"]["userInfo"]["username"] == "system:admin"


async def test_rbac_access_reviews_agree_with_what_the_server_does(
        rbac_server: ApiServer) -> None:
    base = rbac_server.url
    async with aiohttp.ClientSession() as http:
        code, body = await call(http, "POST", base + AUTHZ + "/selfsubjectaccessreviews",
                                json=_ssar("delete", "pods"), headers=_as("reader-token"))
        assert code == 201 and body["status"]["allowed"] is False
        code, _ = await call(http, "DELETE", base + "/api/v1/namespaces/default/pods/p",
                             headers=_as("reader-token"))
        assert code == 403
        code, body = await call(http, "POST", base + AUTHZ + "/selfsubjectaccessreviews",
                                json=_ssar("list", "configmaps"), headers=_as("reader-token"))
        assert body["status"]["allowed"] is True
        code, _ = await call(http, "GET", base + "/api/v1/namespaces/default/configmaps",
                             headers=_as("reader-token"))
        assert code == 200
        # whoami is the authenticated user
        code, body = await call(http, "POST", base + AUTHN + "/selfsubjectreviews",
                                json={"apiVersion": "authentication.k8s.io/v1",
                                      "kind": "SelfSubjectReview"},
                                headers=_as("reader-token"))
        assert code == 201
        assert body["status"]["userInfo"] == {"username": "reader",
                                              "groups": ["system:authenticated"]}
        # the rules review lists what the reader may do, not everything
        code, body = await call(http, "POST", base + AUTHZ + "/selfsubjectrulesreviews",
                                json={"apiVersion": "authorization.k8s.io/v1",
                                      "kind": "SelfSubjectRulesReview",
                                      "spec": {"namespace": "default"}},
                                headers=_as("reader-token"))
        resources = {r for rule in body["status"]["resourceRules"]
                     for r in rule["resources"]}
        assert "configmaps" in resources and "*" not in resources


async def test_rbac_token_and_subject_reviews_need_permission_and_tell_the_truth(
        rbac_server: ApiServer) -> None:
    base = rbac_server.url
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    async with aiohttp.ClientSession() as http:
        code, _ = await call(http, "POST", base + AUTHN + "/tokenreviews",
                             json={**review, "spec": {"token": "admin-token"}},
                             headers=_as("reader-token"))
        assert code == 403  # creating TokenReviews is not basic-user's
        code, body = await call(http, "POST", base + AUTHN + "/tokenreviews",
                                json={**review, "spec": {"token": "garbage"}},
                                headers=_as("admin-token"))
        assert code == 201 and body["status"]["authenticated"] is False
        code, body = await call(http, "POST", base + AUTHN + "/tokenreviews",
                                json={**review, "spec": {"token": "reader-token"}},
                                headers=_as("admin-token"))
        assert body["status"]["user"]["username"] == "reader"
        sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "spec": {"user": "reader", "resourceAttributes": {
                   "verb": "delete", "resource": "pods", "namespace": "default"}}}
        code, body = await call(http, "POST", base + AUTHZ + "/subjectaccessreviews",
                                json=sar, headers=_as("admin-token"))
        assert code == 201 and body["status"]["allowed"] is False
        sar["spec"]["user"] = "admin"  # type: ignore[index]
        code, body = await call(http, "POST", base + AUTHZ + "/subjectaccessreviews",
                                json=sar, headers=_as("admin-token"))
        assert body["status"]["allowed"] is True


def test_tokens_are_compared_in_constant_time() -> None:
    assert auth.same_secret("abc", "abc")
    assert not auth.same_secret("abd", "abc")
    assert not auth.same_secret("", "abc")


async def test_the_kubeconfig_holding_the_token_is_written_0600(tmp_path: Path) -> None:
    target = tmp_path / "kubeconfig"
    target.write_text("old")
    os.chmod(target, 0o644)  # an existing file loses its wider mode too
    async with ApiServer(simulators=False, token="t0ken") as srv:
        srv.write_kubeconfig(target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert "t0ken" in target.read_text()


async def test_an_ipv6_host_is_bracketed_in_the_url() -> None:
    async with ApiServer(simulators=False, host="::1") as srv:
        assert srv.url.startswith("http://[::1]:")
        async with aiohttp.ClientSession() as http:
            code, body = await call(http, "GET", srv.url + "/version")
            assert code == 200 and body["major"] == "1"
