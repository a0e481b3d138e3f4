"""CRD conversion webhooks: a CRD serving v1 (spec.size, a string) and v2 (spec.replicas, an
integer, the storage version) converts through an asyncop WebhookServer. Objects are stored
once, as v2; reads, writes and watches through v1 go through the webhook."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest_asyncio

from asyncop.apiserver import ApiServer
from asyncop.webhook import WebhookServer
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call, install_crd

http = httpkit.http
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
V1 = "/apis/example.com/v1/namespaces/default/dials"
V2 = "/apis/example.com/v2/namespaces/default/dials"
GR = ("example.com", "dials")


def convert(obj: dict[str, Any], to: str) -> dict[str, Any]:
    spec = dict(obj.get("spec") or {})
    if spec.get("size") == "boom" or spec.get("replicas") == 666:
        raise ValueError("cannot convert the number of the beast")
    if to == "example.com/v2" and "size" in spec:
        spec = {"replicas": int(spec.pop("size"))}
    elif to == "example.com/v1" and "replicas" in spec:
        spec = {"size": str(spec.pop("replicas"))}
    return {**obj, "apiVersion": to, "spec": spec,
            "metadata": {**obj["metadata"], "labels": {"converted-to": to.split("/")[1]}}}


def _crd(server: WebhookServer) -> dict[str, Any]:
    def version(name: str, spec: dict[str, Any], storage: bool) -> dict[str, Any]:
        return {"name": name, "served": True, "storage": storage,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": spec}}}}}

    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "dials.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "dials", "singular": "dial", "kind": "Dial",
                               "listKind": "DialList"},
                     "versions": [
                         version("v1", {"size": {"type": "string", "pattern": "^[0-9a-z]+$"}},
                                 False),
                         version("v2", {"replicas": {"type": "integer", "maximum": 1000}},
                                 True)],
                     "conversion": {"strategy": "Webhook", "webhook": {
                         "conversionReviewVersions": ["v1"],
                         "clientConfig": {"url": server.url("/convert"),
                                          "caBundle": server.ca_bundle}}}}}


@pytest_asyncio.fixture
async def dials(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession,
                ) -> AsyncIterator[WebhookServer]:
    server = WebhookServer()
    server.conversion("/convert", convert)
    async with server:
        await install_crd(http, apiserver_no_sim.url, _crd(server), V1)
        yield server


async def test_writes_store_the_storage_version_and_reads_convert_back(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, dials: WebhookServer) -> None:
    base = apiserver_no_sim.url
    code, body = await call(http, "POST", base + V1, json={
        "apiVersion": "example.com/v1", "kind": "Dial", "metadata": {"name": "a"},
        "spec": {"size": "3"}})
    assert code == 201, body
    assert body["apiVersion"] == "example.com/v1" and body["spec"] == {"size": "3"}
    stored = apiserver_no_sim.store.raw_get(GR, "default", "a")
    assert stored is not None
    assert stored["apiVersion"] == "example.com/v2" and stored["spec"] == {"replicas": 3}
    assert stored["metadata"]["labels"] == {"converted-to": "v2"}  # labels may change
    code, body = await call(http, "GET", base + V2 + "/a")
    assert code == 200 and body["spec"] == {"replicas": 3}  # storage version: no call
    code, body = await call(http, "GET", base + V1)
    assert code == 200 and [i["spec"] for i in body["items"]] == [{"size": "3"}]
    assert body["items"][0]["metadata"]["uid"] == stored["metadata"]["uid"]
    code, body = await call(http, "PATCH", base + V1 + "/a", data=b'{"spec":{"size":"5"}}',
                            headers={"Content-Type": "application/merge-patch+json"})
    assert code == 200 and body["spec"] == {"size": "5"}
    stored = apiserver_no_sim.store.raw_get(GR, "default", "a")
    assert stored is not None and stored["spec"] == {"replicas": 5}
    assert stored["metadata"]["generation"] == 2


async def test_validation_happens_in_the_requested_version(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, dials: WebhookServer) -> None:
    base = apiserver_no_sim.url
    code, body = await call(http, "POST", base + V1, json={
        "metadata": {"name": "bad"}, "spec": {"size": "NOT VALID"}})
    assert code == 422
    assert body["details"]["causes"][0]["field"] == "spec.size"
    code, body = await call(http, "POST", base + V1, json={
        "metadata": {"name": "big"}, "spec": {"size": "2000"}})
    assert code == 422  # the storage version's schema holds too
    assert body["details"]["causes"][0]["field"] == "spec.replicas"
    assert apiserver_no_sim.store.raw_get(GR, "default", "big") is None


async def test_watch_through_another_version_is_converted(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, dials: WebhookServer) -> None:
    base = apiserver_no_sim.url
    code, _ = await call(http, "POST", base + V2, json={
        "metadata": {"name": "w"}, "spec": {"replicas": 7}})
    assert code == 201
    async with http.get(base + V1 + "?watch=true&timeoutSeconds=5") as r:
        first = orjson.loads(await r.content.readline())
        assert first["type"] == "ADDED" and first["object"]["spec"] == {"size": "7"}
        code, _ = await call(http, "PATCH", base + V2 + "/w", data=b'{"spec":{"replicas":8}}',
                             headers={"Content-Type": "application/merge-patch+json"})
        assert code == 200
        second = orjson.loads(await r.content.readline())
    assert second["type"] == "MODIFIED"
    assert second["object"]["apiVersion"] == "example.com/v1"
    assert second["object"]["spec"] == {"size": "8"}


async def test_webhook_failure_is_a_500_and_stores_nothing(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, dials: WebhookServer) -> None:
    base = apiserver_no_sim.url
    code, body = await call(http, "POST", base + V1, json={
        "metadata": {"name": "beast"}, "spec": {"size": "boom"}})
    assert code == 500
    assert body["message"] == (
        "Internal error occurred: conversion webhook for example.com/v2, Kind=Dial returned "
        "failure: cannot convert the number of the beast")
    assert apiserver_no_sim.store.raw_get(GR, "default", "beast") is None
    code, _ = await call(http, "POST", base + V2, json={
        "metadata": {"name": "stored"}, "spec": {"replicas": 666}})
    assert code == 201  # the storage version needs no conversion
    code, body = await call(http, "GET", base + V1 + "/stored")
    assert code == 500 and "example.com/v1, Kind=Dial returned failure" in body["message"]


async def test_crd_conversion_settings_are_validated(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    base = apiserver_no_sim.url
    server = WebhookServer()
    async with server:
        crd = _crd(server)
    crd["spec"]["conversion"] = {"strategy": "Webhook"}
    code, body = await call(http, "POST", base + CRDS, json=crd)
    assert code == 422
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.conversion.webhook", "Required value: required when strategy is set to Webhook")]
    crd["spec"]["conversion"] = {"strategy": "None", "webhook": {"clientConfig": {"url": "x"}}}
    code, body = await call(http, "POST", base + CRDS, json=crd)
    assert code == 422 and body["details"]["causes"][0]["reason"] == "FieldValueForbidden"
