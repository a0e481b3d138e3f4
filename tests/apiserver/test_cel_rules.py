"""CEL validation rules (`x-kubernetes-validations`) evaluated by the embedded server like
kube-apiserver: on create and update, transition rules with oldSelf on updates only, kube's
messages, reasons and field paths, messageExpression, evaluation and compile errors."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from tests.apiserver import httpkit
from tests.apiserver.crdkit import simple_crd
from tests.apiserver.httpkit import call, install_crd

http = httpkit.http
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SCALERS = "/apis/example.com/v1/namespaces/default/scalers"

SPEC = {
    "type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.minReplicas <= self.maxReplicas",
         "message": "minReplicas must not exceed maxReplicas"},
        {"rule": "!has(self.mode) || self.mode != 'off' || self.maxReplicas == 0",
         "messageExpression": "'mode off needs maxReplicas 0, not ' + string(self.maxReplicas)",
         "fieldPath": ".maxReplicas", "reason": "FieldValueForbidden"},
    ],
    "properties": {
        "minReplicas": {"type": "integer"},
        "maxReplicas": {"type": "integer"},
        "mode": {"type": "string"},
        "name": {"type": "string",
                 "x-kubernetes-validations": [
                     {"rule": "self == oldSelf", "message": "name is immutable"}]},
        "size": {"type": "string",
                 "x-kubernetes-validations": [{"rule": "self.startsWith('s-')"}]},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"},
                                           "port": {"type": "integer",
                                                    "x-kubernetes-validations": [{
                                                        "rule": "self >= oldSelf",
                                                        "message": "ports only grow"}]}}}},
    },
}
CRD = simple_crd("scalers", "Scaler", SPEC)


def scaler(obj_name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Scaler", "metadata": {"name": obj_name},
            "spec": {"minReplicas": 1, "maxReplicas": 3, **spec}}


@pytest.fixture
async def url(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> str:
    base = apiserver_no_sim.url
    await install_crd(http, base, CRD, SCALERS)
    return base


def causes(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]]


async def test_rules_on_create(url: str, http: aiohttp.ClientSession) -> None:
    code, _ = await call(http, "POST", url + SCALERS, json=scaler("ok", size="s-1"))
    assert code == 201
    code, body = await call(http, "POST", url + SCALERS,
                            json=scaler("bad", minReplicas=5, size="big"))
    assert code == 422 and body["reason"] == "Invalid"
    assert causes(body) == [
        ("FieldValueInvalid", "spec", 'Invalid value: "object": minReplicas must not exceed '
                                      'maxReplicas'),
        ("FieldValueInvalid", "spec.size", 'Invalid value: "string": failed rule: '
                                           "self.startsWith('s-')"),
    ]
    assert body["message"].startswith('Scaler.example.com "bad" is invalid: [spec: Invalid '
                                      'value: "object": minReplicas must not exceed maxReplicas')
    code, body = await call(http, "POST", url + SCALERS, json=scaler("off", mode="off"))
    assert code == 422
    assert causes(body) == [("FieldValueForbidden", "spec.maxReplicas",
                             "Forbidden: mode off needs maxReplicas 0, not 3")]
    code, _ = await call(http, "POST", url + SCALERS,
                         json=scaler("off", mode="off", minReplicas=0, maxReplicas=0))
    assert code == 201


async def test_transition_rules_run_on_updates_only(url: str,
                                                    http: aiohttp.ClientSession) -> None:
    obj = scaler("t", name="first", ports=[{"name": "http", "port": 80}])
    code, created = await call(http, "POST", url + SCALERS, json=obj)
    assert code == 201  # no oldSelf on create: the transition rules did not run
    changed = {**created, "spec": {**created["spec"], "name": "second"}}
    code, body = await call(http, "PUT", url + SCALERS + "/t", json=changed)
    assert code == 422
    assert causes(body) == [("FieldValueInvalid", "spec.name",
                             'Invalid value: "string": name is immutable')]
    shrunk = {**created, "spec": {**created["spec"], "ports": [
        {"name": "http", "port": 79}, {"name": "new", "port": 1}]}}
    code, body = await call(http, "PUT", url + SCALERS + "/t", json=shrunk)
    assert code == 422  # the new item has no old one: only the correlated item is checked
    assert causes(body) == [("FieldValueInvalid", "spec.ports[0].port",
                             'Invalid value: "integer": ports only grow')]
    grown = {**created, "spec": {**created["spec"], "minReplicas": 2, "ports": [
        {"name": "new", "port": 1}, {"name": "http", "port": 81}]}}
    code, body = await call(http, "PUT", url + SCALERS + "/t", json=grown)
    assert code == 200, body
    code, body = await call(http, "PATCH", url + SCALERS + "/t", json={"spec": {"name": "x"}},
                            headers={"Content-Type": "application/merge-patch+json"})
    assert code == 422 and causes(body)[0][1] == "spec.name"


async def test_a_rule_that_cannot_be_evaluated_fails_with_its_error(
        url: str, http: aiohttp.ClientSession) -> None:
    code, body = await call(http, "POST", url + SCALERS, json={
        "apiVersion": "example.com/v1", "kind": "Scaler", "metadata": {"name": "m"},
        "spec": {"maxReplicas": 3}})
    assert code == 422
    ((reason, field, message),) = causes(body)
    assert (reason, field) == ("FieldValueInvalid", "spec")
    assert message.startswith('Invalid value: "object": self.minReplicas <= self.maxReplicas: ')
    assert "minReplicas" in message


def test_compile_errors_and_unit_semantics() -> None:
    from asyncop.apiserver.schema.cel import compile_error, validate_rules

    assert compile_error("self.x ==") is not None
    assert compile_error("self.x == 1") is None
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": "self.x =="}]}
    ((cause,),) = [validate_rules({"x": 1}, schema)]
    assert cause["field"] == "" and "compilation failed" in cause["message"]
    dup = {"type": "object", "x-kubernetes-validations": [
        {"rule": "false", "reason": "FieldValueDuplicate"},
        {"rule": "false", "reason": "FieldValueRequired", "message": "needed"}]}
    assert [(c["reason"], c["message"]) for c in validate_rules({}, dup)] == [
        ("FieldValueDuplicate", 'Duplicate value: "object"'),
        ("FieldValueRequired", "Required value: needed")]
