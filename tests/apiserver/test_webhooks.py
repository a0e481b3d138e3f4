"""Admission webhooks through the embedded server, as on a real cluster: configurations are
created over HTTP, the server calls an asyncop WebhookServer over HTTPS (trusting the
caBundle), and the end state is read back from the server."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.webhook import AdmissionRequest, Denied, WebhookServer
from tests.apiserver import httpkit
from tests.apiserver.crdkit import simple_crd
from tests.apiserver.httpkit import call, install_crd

http = httpkit.http
CM = "/api/v1/namespaces/default/configmaps"
VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
CM_RULE = {"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": [""],
           "apiVersions": ["v1"], "resources": ["configmaps"]}


@pytest_asyncio.fixture
async def hooks() -> AsyncIterator[WebhookServer]:
    server = WebhookServer()
    calls: list[AdmissionRequest] = []

    async def guard(req: AdmissionRequest) -> list[str] | None:
        calls.append(req)
        obj = req.object if req.operation != "DELETE" else req.old_object
        labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
        if req.operation == "DELETE" and labels.get("protected") == "true":
            raise Denied("configmap is protected")
        if labels.get("bad") == "true":
            raise Denied("bad configmaps are not allowed", code=422, reason="Invalid")
        if req.operation == "UPDATE" and (req.old_object or {}).get("data", {}).get("fixed") \
                != (req.object or {}).get("data", {}).get("fixed"):
            raise Denied("data.fixed is immutable")
        return ["looked at by guard"] if labels.get("warn") else None

    async def stamp(req: AdmissionRequest) -> dict[str, Any] | None:
        calls.append(req)
        obj = dict(req.object or {})
        meta = dict(obj.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), "stamped": "yes"}
        obj["metadata"] = meta
        return obj

    server.validating("/guard", guard)
    server.mutating("/stamp", stamp)
    server.calls = calls  # type: ignore[attr-defined]
    async with server:
        yield server


def _calls(server: WebhookServer) -> list[AdmissionRequest]:
    return server.calls  # type: ignore[attr-defined,no-any-return]


async def _configure(http: aiohttp.ClientSession, base: str, path: str,
                     config: dict[str, Any]) -> None:
    code, body = await call(http, "POST", base + path, json=config)
    assert code == 201, body


def _cm(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "data": {"fixed": "1"}}


async def test_validating_webhook_allows_denies_and_stores_nothing_denied(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, hooks: WebhookServer) -> None:
    base = apiserver_no_sim.url
    await _configure(http, base, VWC, hooks.validating_configuration(
        "guard", [{"name": "guard.example.com", "path": "/guard", "rules": [CM_RULE]}]))
    code, body = await call(http, "POST", base + CM, json=_cm("good"))
    assert code == 201, body
    code, body = await call(http, "POST", base + CM, json=_cm("evil", bad="true"))
    assert code == 422
    assert body["message"] == ('admission webhook "guard.example.com" denied the request: '
                               "bad configmaps are not allowed")
    assert body["reason"] == "Invalid"
    code, _ = await call(http, "GET", base + CM + "/evil")
    assert code == 404
    seen = [c for c in _calls(hooks) if c.name == "good"]
    assert seen and seen[0].operation == "CREATE" and seen[0].namespace == "default"
    assert seen[0].resource == ("", "v1", "configmaps") and seen[0].kind == "ConfigMap"
    assert seen[0].raw["userInfo"]["username"] == "system:admin"
    assert seen[0].object is not None and seen[0].object["metadata"]["uid"]
    stored = await call(http, "GET", base + CM + "/good")
    assert stored[1]["metadata"]["uid"] == seen[0].object["metadata"]["uid"]


async def test_update_and_delete_are_admitted_with_the_old_object(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, hooks: WebhookServer) -> None:
    base = apiserver_no_sim.url
    code, _ = await call(http, "POST", base + CM, json=_cm("keep", protected="true"))
    assert code == 201
    await _configure(http, base, VWC, hooks.validating_configuration(
        "guard", [{"name": "guard.example.com", "path": "/guard", "rules": [CM_RULE]}]))
    code, body = await call(http, "PATCH", base + CM + "/keep", data=b'{"data":{"fixed":"2"}}',
                            headers={"Content-Type": "application/merge-patch+json"})
    assert code == 403
    assert body["message"] == ('admission webhook "guard.example.com" denied the request: '
                               "data.fixed is immutable")
    code, body = await call(http, "PATCH", base + CM + "/keep", data=b'{"data":{"other":"x"}}',
                            headers={"Content-Type": "application/merge-patch+json"})
    assert code == 200 and body["data"] == {"fixed": "1", "other": "x"}
    update = next(c for c in reversed(_calls(hooks)) if c.operation == "UPDATE")
    assert update.old_object is not None and "other" not in update.old_object["data"]
    code, body = await call(http, "DELETE", base + CM + "/keep")
    assert code == 403 and body["message"].endswith("configmap is protected")
    delete = next(c for c in reversed(_calls(hooks)) if c.operation == "DELETE")
    assert delete.object is None and delete.raw["options"]["kind"] == "DeleteOptions"
    code, body = await call(http, "GET", base + CM + "/keep")
    assert code == 200 and body["data"] == {"fixed": "1", "other": "x"}


async def test_mutating_webhook_patches_before_validation_and_commit(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, hooks: WebhookServer) -> None:
    base = apiserver_no_sim.url
    await _configure(http, base, MWC, hooks.mutating_configuration(
        "stamp", [{"name": "stamp.example.com", "path": "/stamp", "rules": [CM_RULE]}]))
    await _configure(http, base, VWC, hooks.validating_configuration(
        "guard", [{"name": "guard.example.com", "path": "/guard", "rules": [CM_RULE]}]))
    code, body = await call(http, "POST", base + CM, json=_cm("plain"))
    assert code == 201 and body["metadata"]["labels"] == {"stamped": "yes"}
    validated = next(c for c in _calls(hooks) if c.raw.get("object") and
                     c.object and c.object["metadata"]["labels"].get("stamped")
                     and c.raw["uid"] and c.name == "plain")
    assert validated.object is not None
    code, stored = await call(http, "GET", base + CM + "/plain")
    assert stored["metadata"]["labels"] == {"stamped": "yes"}
    # generateName: webhooks see no name, the validated name is the stored one
    code, body = await call(http, "POST", base + CM,
                            json={"metadata": {"generateName": "gen-"}, "data": {"fixed": "1"}})
    assert code == 201 and body["metadata"]["name"].startswith("gen-")
    names = {c.name for c in _calls(hooks) if c.operation == "CREATE"}
    assert "" in names and body["metadata"]["name"] in names


async def test_reinvocation_if_needed_sees_later_changes(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    base = apiserver_no_sim.url
    server = WebhookServer()
    runs: list[str] = []

    async def count_labels(req: AdmissionRequest) -> dict[str, Any]:
        runs.append("a")
        obj = req.object or {}
        meta = obj.setdefault("metadata", {})
        meta.setdefault("annotations", {})["labels-seen"] = str(len(meta.get("labels") or {}))
        return obj

    async def add_label(req: AdmissionRequest) -> dict[str, Any]:
        runs.append("b")
        obj = req.object or {}
        obj.setdefault("metadata", {}).setdefault("labels", {})["team"] = "blue"
        return obj

    server.mutating("/a", count_labels)
    server.mutating("/b", add_label)
    async with server:
        await _configure(http, base, MWC, server.mutating_configuration("m", [
            {"name": "a.example.com", "path": "/a", "rules": [CM_RULE],
             "reinvocationPolicy": "IfNeeded"},
            {"name": "b.example.com", "path": "/b", "rules": [CM_RULE]}]))
        code, body = await call(http, "POST", base + CM, json=_cm("again"))
    assert code == 201, body
    assert runs == ["a", "b", "a"]
    assert body["metadata"]["annotations"] == {"labels-seen": "1"}
    assert body["metadata"]["labels"] == {"team": "blue"}


async def test_selectors_and_match_conditions_choose_requests(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, hooks: WebhookServer) -> None:
    base = apiserver_no_sim.url
    code, _ = await call(http, "POST", base + "/api/v1/namespaces",
                         json={"metadata": {"name": "free", "labels": {"webhooks": "off"}}})
    assert code == 201
    await _configure(http, base, VWC, hooks.validating_configuration("guard", [{
        "name": "guard.example.com", "path": "/guard", "rules": [CM_RULE],
        "namespaceSelector": {"matchExpressions": [
            {"key": "webhooks", "operator": "NotIn", "values": ["off"]}]},
        "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
        "matchConditions": [{"name": "not-system",
                             "expression": "!object.metadata.name.startsWith('system-')"}],
    }]))
    code, _ = await call(http, "POST", base + "/api/v1/namespaces/free/configmaps",
                         json=_cm("evil", bad="true"))
    assert code == 201  # namespace not selected
    code, _ = await call(http, "POST", base + CM, json=_cm("evil2", bad="true", skip="1"))
    assert code == 201  # object not selected
    code, _ = await call(http, "POST", base + CM, json=_cm("system-evil", bad="true"))
    assert code == 201  # match condition false
    code, _ = await call(http, "POST", base + CM, json=_cm("evil3", bad="true"))
    assert code == 422


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_unreachable_webhook_follows_failure_policy(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, policy: str) -> None:
    base = apiserver_no_sim.url
    server = WebhookServer()
    async with server:
        bundle, dead = server.ca_bundle, server.url("/guard")
    await _configure(http, base, VWC, {
        "metadata": {"name": "dead"},
        "webhooks": [{"name": "dead.example.com", "rules": [CM_RULE], "sideEffects": "None",
                      "admissionReviewVersions": ["v1"], "failurePolicy": policy,
                      "clientConfig": {"url": dead, "caBundle": bundle}}]})
    code, body = await call(http, "POST", base + CM, json=_cm("x"))
    if policy == "Ignore":
        assert code == 201
        return
    assert code == 500 and body["reason"] == "InternalError"
    assert body["message"].startswith(
        'Internal error occurred: failed calling webhook "dead.example.com": failed to call '
        f'webhook: Post "{dead}?timeout=10s": dial tcp')
    assert (await call(http, "GET", base + CM + "/x"))[0] == 404


async def test_timeout_and_malformed_answers_are_failures(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    base = apiserver_no_sim.url
    server = WebhookServer()
    never = asyncio.Event()

    async def hang(req: AdmissionRequest) -> None:
        await never.wait()

    server.validating("/hang", hang)

    async def wrong_uid(review: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": "not-it", "allowed": True}}

    server._add("/wrong", wrong_uid)
    async with server:
        await _configure(http, base, VWC, server.validating_configuration("slow", [
            {"name": "slow.example.com", "path": "/hang", "rules": [CM_RULE],
             "timeoutSeconds": 1}]))
        code, body = await call(http, "POST", base + CM, json=_cm("late"))
        assert code == 500
        assert body["message"].endswith(
            f'Post "{server.url("/hang")}?timeout=1s": context deadline exceeded')
        code, _ = await call(http, "DELETE", base + VWC + "/slow")
        assert code == 200
        await _configure(http, base, VWC, server.validating_configuration("wrong", [
            {"name": "wrong.example.com", "path": "/wrong", "rules": [CM_RULE]}]))
        code, body = await call(http, "POST", base + CM, json=_cm("odd"))
        never.set()
    assert code == 500
    assert 'received invalid webhook response: expected response.uid="' in body["message"]
    assert body["message"].endswith('got "not-it"')


async def test_dry_run_warnings_and_service_reference(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    base = apiserver_no_sim.url
    server = WebhookServer(service=("webhooks", "asyncop-webhook"))
    seen: list[AdmissionRequest] = []

    async def note(req: AdmissionRequest) -> list[str]:
        seen.append(req)
        return ["configmaps are looked at"]

    server.validating("/note", note)
    async with server:
        for path, obj in (
                ("/api/v1/namespaces", {"metadata": {"name": "webhooks"}}),
                ("/api/v1/namespaces/webhooks/services",
                 {"metadata": {"name": "asyncop-webhook"},
                  "spec": {"ports": [{"port": 443, "targetPort": 9443}]}}),
                ("/api/v1/namespaces/webhooks/endpoints",
                 {"metadata": {"name": "asyncop-webhook"},
                  "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                               "ports": [{"port": server.port}]}]})):
            code, body = await call(http, "POST", base + path, json=obj)
            assert code == 201, body
        config = server.validating_configuration("note", [
            {"name": "note.example.com", "path": "/note", "rules": [CM_RULE]}])
        assert "service" in config["webhooks"][0]["clientConfig"]
        await _configure(http, base, VWC, config)
        async with http.post(base + CM + "?dryRun=All", json=_cm("dry")) as r:
            assert r.status == 201
            assert r.headers.getall("Warning") == ['299 - "configmaps are looked at"']
    assert seen and seen[0].dry_run
    assert (await call(http, "GET", base + CM + "/dry"))[0] == 404


async def test_custom_resource_defaulted_by_webhook_then_validated(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    base = apiserver_no_sim.url
    crd = simple_crd("sizers", "Sizer", spec_schema={"type": "object", "required": ["size"],
                                  "properties": {"size": {"type": "integer", "minimum": 1}}})
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    version = crd["spec"]["versions"][0]["name"]
    path = f"/apis/{group}/{version}/namespaces/default/{plural}"
    await install_crd(http, base, crd, path)
    server = WebhookServer()

    async def default_size(req: AdmissionRequest) -> dict[str, Any]:
        obj = req.object or {}
        obj.setdefault("spec", {}).setdefault("size", 3)
        return obj

    server.mutating("/default", default_size)
    async with server:
        await _configure(http, base, MWC, server.mutating_configuration("d", [
            {"name": "default.example.com", "path": "/default",
             "rules": [{"operations": ["CREATE"], "apiGroups": [group], "apiVersions": ["*"],
                        "resources": [plural]}]}]))
        code, body = await call(http, "POST", base + path, json={
            "apiVersion": f"{group}/{version}", "kind": crd["spec"]["names"]["kind"],
            "metadata": {"name": "w"}, "spec": {}})
    assert code == 201, body
    assert body["spec"] == {"size": 3}


async def test_configurations_are_validated_and_defaulted(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    base = apiserver_no_sim.url
    code, body = await call(http, "POST", base + VWC, json={
        "metadata": {"name": "bad"},
        "webhooks": [{"name": "short", "clientConfig": {"url": "http://x"},
                      "rules": [{"operations": ["MAKE"], "apiGroups": [""],
                                 "apiVersions": ["v1"], "resources": ["pods"]}],
                      "timeoutSeconds": 60}]})
    assert code == 422
    fields = {c["field"] for c in body["details"]["causes"]}
    assert fields == {"webhooks[0].name", "webhooks[0].admissionReviewVersions",
                      "webhooks[0].sideEffects", "webhooks[0].timeoutSeconds",
                      "webhooks[0].rules[0].operations", "webhooks[0].clientConfig.url"}
    code, body = await call(http, "POST", base + VWC, json={
        "metadata": {"name": "ok"},
        "webhooks": [{"name": "ok.example.com", "sideEffects": "None",
                      "admissionReviewVersions": ["v1"],
                      "clientConfig": {"url": "https://127.0.0.1:1/x",
                                       "caBundle": base64.b64encode(b"x").decode()}}]})
    assert code == 201, body
    hook = body["webhooks"][0]
    assert (hook["failurePolicy"], hook["matchPolicy"], hook["timeoutSeconds"]) == \
        ("Fail", "Equivalent", 10)
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}


async def test_a_broken_webhook_for_everything_can_still_be_removed(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    """kube never sends its admission configuration kinds to webhooks, so a webhook that
    matches every request and always fails can still be deleted."""
    base = apiserver_no_sim.url
    server = WebhookServer()
    async with server:
        dead, bundle = server.url("/gone"), server.ca_bundle
    everything = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
                  "resources": ["*/*"]}
    for path, name in ((VWC, "all-v"), (MWC, "all-m")):
        await _configure(http, base, path, {"metadata": {"name": name}, "webhooks": [
            {"name": f"{name}.example.com", "rules": [everything], "sideEffects": "None",
             "admissionReviewVersions": ["v1"],
             "clientConfig": {"url": dead, "caBundle": bundle}}]})
    code, body = await call(http, "POST", base + CM, json=_cm("blocked"))
    assert code == 500 and "failed calling webhook" in body["message"]  # it does apply
    code, body = await call(http, "DELETE", base + VWC + "/all-v")
    assert code == 200, body
    code, body = await call(http, "DELETE", base + MWC + "/all-m")
    assert code == 200, body
    code, body = await call(http, "POST", base + CM, json=_cm("free"))
    assert code == 201, body


async def test_webhooks_see_the_user_the_rbac_mode_authenticated(
        http: aiohttp.ClientSession) -> None:
    from asyncop.apiserver.http.rbac import ADMIN_RULES, Authorizer, Subject

    authz = Authorizer({"t-alice": Subject("alice", ADMIN_RULES)})
    server = WebhookServer()
    users: list[str] = []

    async def who(req: AdmissionRequest) -> None:
        users.append(req.username)

    server.validating("/who", who)
    async with ApiServer(simulators=False, authorizer=authz) as api, server:
        alice = {"Authorization": "Bearer t-alice"}
        code, body = await call(http, "POST", api.url + VWC, headers=alice,
                                json=server.validating_configuration("who", [
                                    {"name": "who.example.com", "path": "/who",
                                     "rules": [CM_RULE]}]))
        assert code == 201, body
        code, body = await call(http, "POST", api.url + CM, headers=alice, json=_cm("mine"))
        assert code == 201, body
        code, _ = await call(http, "DELETE", api.url + CM + "/mine", headers=alice)
        assert code == 200
    assert users == ["alice", "alice"]


def _two_version_crd() -> dict[str, Any]:
    schema = {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "knobs.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "knobs", "singular": "knob", "kind": "Knob"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": schema},
                                  {"name": "v2", "served": True, "storage": False,
                                   "schema": schema}]}}


async def test_match_policy_equivalent_sends_the_version_the_rule_names(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    base = apiserver_no_sim.url
    v2 = "/apis/example.com/v2/namespaces/default/knobs"
    await install_crd(http, base, _two_version_crd(), v2)
    server = WebhookServer()
    seen: list[AdmissionRequest] = []

    async def tag(req: AdmissionRequest) -> dict[str, Any]:
        seen.append(req)
        obj = req.object or {}
        obj.setdefault("metadata", {}).setdefault("labels", {})["seen-as"] = \
            req.raw["kind"]["version"]
        return obj

    server.mutating("/tag", tag)
    rule = {"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"],
            "resources": ["knobs"]}
    async with server:
        await _configure(http, base, MWC, server.mutating_configuration("tag", [
            {"name": "tag.example.com", "path": "/tag", "rules": [rule]}]))
        code, body = await call(http, "POST", base + v2, json={
            "apiVersion": "example.com/v2", "kind": "Knob", "metadata": {"name": "k"},
            "spec": {"turn": 3}})
        assert code == 201, body
        assert body["apiVersion"] == "example.com/v2"
        assert body["metadata"]["labels"] == {"seen-as": "v1"}
        assert seen[0].object is not None and seen[0].object["apiVersion"] == "example.com/v1"
        assert seen[0].raw["requestKind"]["version"] == "v2"
        assert seen[0].raw["resource"] == {"group": "example.com", "version": "v1",
                                           "resource": "knobs"}
        # Exact: a rule for v1 does not see a v2 request at all
        code, _ = await call(http, "DELETE", base + MWC + "/tag")
        assert code == 200
        await _configure(http, base, MWC, server.mutating_configuration("tag", [
            {"name": "tag.example.com", "path": "/tag", "rules": [rule],
             "matchPolicy": "Exact"}]))
        code, body = await call(http, "POST", base + v2, json={
            "apiVersion": "example.com/v2", "kind": "Knob", "metadata": {"name": "k2"}})
        assert code == 201 and "labels" not in body["metadata"]
    assert len(seen) == 1


async def test_a_patch_is_admitted_again_when_the_object_changed_meanwhile(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    """While the mutating webhook runs, another client changes the object: a patch (no
    resourceVersion named) is admitted again against the new object, as kube's
    GuaranteedUpdate does; an update that named the old resourceVersion gets 409."""
    base = apiserver_no_sim.url
    code, created = await call(http, "POST", base + CM, json=_cm("raced"))
    assert code == 201
    server = WebhookServer()
    calls: list[dict[str, Any]] = []

    async def race(req: AdmissionRequest) -> dict[str, Any]:
        calls.append(req.object or {})
        if len(calls) == 1:  # someone else writes while this request is being admitted
            code, _ = await call(http, "PATCH", base + CM + "/raced",
                                 data=b'{"data":{"other":"writer"}}',
                                 headers={"Content-Type": "application/merge-patch+json"})
            assert code == 200
        obj = req.object or {}
        obj.setdefault("metadata", {}).setdefault("annotations", {})["admitted"] = "yes"
        return obj

    server.mutating("/race", race)
    rule = {"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["configmaps"]}
    async with server:
        # only requests carrying this label go to the webhook (not the concurrent writer's)
        await _configure(http, base, MWC, server.mutating_configuration("race", [
            {"name": "race.example.com", "path": "/race", "rules": [rule],
             "objectSelector": {"matchLabels": {"race": "on"}}}]))
        code, body = await call(http, "PATCH", base + CM + "/raced",
                                data=b'{"metadata":{"labels":{"race":"on"}},"data":{"mine":"1"}}',
                                headers={"Content-Type": "application/merge-patch+json"})
        assert code == 200, body
        assert body["data"] == {"fixed": "1", "other": "writer", "mine": "1"}
        assert body["metadata"]["annotations"] == {"admitted": "yes"}
        assert len(calls) == 2 and "other" in calls[1]["data"]  # admitted again
        stale = dict(body, data={"fixed": "2"})
        stale["metadata"] = {**body["metadata"], "resourceVersion":
                             created["metadata"]["resourceVersion"]}
        code, status = await call(http, "PUT", base + CM + "/raced", json=stale)
        assert code == 409 and status["reason"] == "Conflict"
