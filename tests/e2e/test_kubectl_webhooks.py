"""Admission webhooks as kubectl users meet them: a WebhookServer behind the embedded server
refuses, patches and warns; kubectl prints kube's messages and exits non-zero on a denial."""

from __future__ import annotations

import json
from typing import Any

import yaml

from asyncop.webhook import AdmissionRequest, Denied, WebhookServer
from tests.e2e.conftest import Kubectl

RULES = [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
          "resources": ["configmaps"]}]


async def test_kubectl_meets_validating_and_mutating_webhooks(kubectl: Kubectl) -> None:
    k = kubectl
    server = WebhookServer()

    async def guard(req: AdmissionRequest) -> list[str] | None:
        data = (req.object or {}).get("data") or {}
        if "forbidden" in data:
            raise Denied("the key 'forbidden' is not allowed")
        return ["configmaps are reviewed"] if "review" in data else None

    async def stamp(req: AdmissionRequest) -> dict[str, Any]:
        obj = req.object or {}
        obj.setdefault("metadata", {}).setdefault("labels", {})["stamped"] = "yes"
        return obj

    server.validating("/guard", guard)
    server.mutating("/stamp", stamp)
    async with server:
        configs = [
            server.validating_configuration("guard", [
                {"name": "guard.example.com", "path": "/guard", "rules": RULES}]),
            server.mutating_configuration("stamp", [
                {"name": "stamp.example.com", "path": "/stamp", "rules": RULES}]),
        ]
        await k.ok("apply", "-f", k.write("hooks.yaml", yaml.safe_dump_all(configs)))
        bad = await k("create", "configmap", "bad", "--from-literal=forbidden=1")
        assert bad.rc != 0
        assert ('admission webhook "guard.example.com" denied the request: the key '
                "'forbidden' is not allowed") in bad.err
        assert (await k("get", "configmap", "bad")).rc != 0
        good = await k("create", "configmap", "good", "--from-literal=review=1")
        assert good.rc == 0, good.err
        assert "Warning: configmaps are reviewed" in good.err
        labels = json.loads(await k.ok("get", "configmap", "good", "-o",
                                       "jsonpath={.metadata.labels}"))
        assert labels == {"stamped": "yes"}
        edit = await k("patch", "configmap", "good", "--type=merge", "-p",
                       '{"data":{"forbidden":"now"}}')
        assert edit.rc != 0 and "denied the request" in edit.err
        shown = yaml.safe_load(await k.ok("get", "validatingwebhookconfiguration", "guard",
                                          "-o", "yaml"))
        assert shown["webhooks"][0]["failurePolicy"] == "Fail"
