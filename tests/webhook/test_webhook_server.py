"""WebhookServer on its own: answers echo the review's uid and apiVersion, refusals carry the
Denied status, malformed reviews and unknown paths are 4xx, handler crashes are 500s."""

from __future__ import annotations

import base64
import ssl
from typing import Any

import aiohttp
import orjson

from asyncop.webhook import AdmissionRequest, Denied, WebhookServer


def _review(obj: dict[str, Any], *, api_version: str = "admission.k8s.io/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "AdmissionReview",
            "request": {"uid": "u-1", "operation": "CREATE", "object": obj}}


async def _post(server: WebhookServer, path: str, body: Any) -> tuple[int, Any]:
    ca = base64.b64decode(server.ca_bundle).decode()
    context = ssl.create_default_context(cadata=ca)
    async with aiohttp.ClientSession() as s, s.post(
            server.url(path), data=orjson.dumps(body) if not isinstance(body, bytes) else body,
            ssl=context) as r:
        return r.status, orjson.loads(await r.read())


async def test_answers_refusals_patches_and_errors() -> None:
    server = WebhookServer()

    async def no(req: AdmissionRequest) -> None:
        raise Denied("never", causes=[{"field": "spec", "message": "bad"}])

    async def crash(req: AdmissionRequest) -> None:
        raise RuntimeError("bug")

    async def rename(req: AdmissionRequest) -> dict[str, Any]:
        obj = req.object or {}
        obj["spec"] = {"x": 2}
        return obj

    server.validating("/no", no)
    server.validating("/crash", crash)
    server.mutating("/rename", rename)
    async with server:
        code, answer = await _post(server, "/no", _review({"spec": {}},
                                                          api_version="admission.k8s.io/v1beta1"))
        assert code == 200 and answer["apiVersion"] == "admission.k8s.io/v1beta1"
        assert answer["response"] == {"uid": "u-1", "allowed": False, "status": {
            "status": "Failure", "message": "never", "reason": "Forbidden", "code": 403,
            "details": {"causes": [{"field": "spec", "message": "bad"}]}}}
        code, answer = await _post(server, "/rename", _review({"spec": {"x": 1}}))
        assert code == 200 and answer["response"]["patchType"] == "JSONPatch"
        assert orjson.loads(base64.b64decode(answer["response"]["patch"])) == [
            {"op": "replace", "path": "/spec/x", "value": 2}]
        assert (await _post(server, "/crash", _review({})))[0] == 500
        assert (await _post(server, "/nowhere", _review({})))[0] == 404
        assert (await _post(server, "/no", b"{not json"))[0] == 400
        assert (await _post(server, "/no", {"request": "x"}))[0] == 400


async def test_readme_snippet_with_the_asyncop_client(apiserver_no_sim: Any) -> None:
    from asyncop.api import Invalid
    from asyncop.api.kinds import CONFIGMAP, VALIDATING_WEBHOOK_CONFIGURATION
    from asyncop.client import Client, load_config

    server = WebhookServer()

    async def check(req: AdmissionRequest) -> None:
        if (req.object or {}).get("data", {}).get("replicas", "0") > "9":
            raise Denied("at most 9 replicas", code=422, reason="Invalid")

    server.validating("/validate", check)
    async with server, Client(await load_config(url=apiserver_no_sim.url)) as client:
        await client.create(VALIDATING_WEBHOOK_CONFIGURATION, server.validating_configuration(
            "widgets", [{"name": "widgets.example.com", "path": "/validate", "rules": [
                {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["configmaps"]}]}]))
        try:
            await client.create(CONFIGMAP, {"metadata": {"name": "w", "namespace": "default"},
                                            "data": {"replicas": "99"}})
        except Invalid as err:
            assert err.message.endswith("denied the request: at most 9 replicas")
        else:
            raise AssertionError("the webhook did not refuse")
        created = await client.create(CONFIGMAP, {
            "metadata": {"name": "w", "namespace": "default"}, "data": {"replicas": "3"}})
        assert created["data"] == {"replicas": "3"}
