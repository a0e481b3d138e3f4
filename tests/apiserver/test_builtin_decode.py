"""Built-in kinds are decoded as kube-apiserver decodes them into their Go types, over real
HTTP: unknown and duplicate fields under each `fieldValidation` mode, Go's type errors, and
the words of the patch and apply paths. Each test names the kube code it pins."""

from __future__ import annotations

import copy
from typing import Any

import aiohttp
import orjson
import pytest

from asyncop.apiserver import ApiServer
from asyncop.apiserver.builtin import decode as decode_module
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call

http = httpkit.http
NS = "/api/v1/namespaces/default"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
PREFIX = 'Deployment in version "v1" cannot be handled as a Deployment: '
JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
JSONPATCH = {"Content-Type": "application/json-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def deployment(name: str = "d", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "a"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}},
                     **spec}}


def with_typos() -> dict[str, Any]:
    """Unknown fields at the root of the spec, inside a list item and inside a struct that
    is a map value's sibling (selector)."""
    body = deployment()
    body["spec"]["template"]["spec"]["containrs"] = []
    body["spec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    body["spec"]["selector"]["matchLabelz"] = {"a": "b"}
    return body


TYPO_ERRORS = ['unknown field "spec.selector.matchLabelz"',
               'unknown field "spec.template.spec.containers[0].imagee"',
               'unknown field "spec.template.spec.containrs"']


def warnings_of(r: aiohttp.ClientResponse) -> list[str]:
    return list(r.headers.getall("Warning", []))


def header(text: str) -> str:
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


async def stored(http: aiohttp.ClientSession, url: str) -> tuple[int, dict[str, Any]]:
    return await call(http, "GET", url)


async def test_unknown_fields_under_each_mode_on_create(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    # kube: handlers/create.go (Strict/Warn use the strict serializer; strict errors become
    # a 400 via transformDecodeError, or warnings via addStrictDecodingWarnings);
    # sigs.k8s.io/json names the paths with [i] indexes, in document order
    url = apiserver_no_sim.url + DEPLOY
    code, body = await call(http, "POST", url + "?fieldValidation=Strict", json=with_typos())
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == PREFIX + "strict decoding error: " + ", ".join(TYPO_ERRORS)
    assert (await stored(http, url + "/d"))[0] == 404  # nothing stored

    async with http.post(url, json=with_typos()) as r:  # no parameter: Warn
        assert r.status == 201
        assert warnings_of(r) == [header(e) for e in TYPO_ERRORS]
    code, obj = await stored(http, url + "/d")
    assert "containrs" not in obj["spec"]["template"]["spec"]
    assert "imagee" not in obj["spec"]["template"]["spec"]["containers"][0]
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "a"}}

    body = with_typos()
    body["metadata"]["name"] = "e"
    async with http.post(url + "?fieldValidation=Ignore", json=body) as r:
        assert r.status == 201 and warnings_of(r) == []
    code, obj = await stored(http, url + "/e")
    assert "containrs" not in obj["spec"]["template"]["spec"]  # dropped silently


async def test_unknown_fields_on_update_and_status(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    # kube: handlers/update.go decodes the whole body, also for the status subresource
    url = apiserver_no_sim.url + DEPLOY
    code, created = await call(http, "POST", url, json=deployment())
    assert code == 201
    body = with_typos()
    body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    code, err = await call(http, "PUT", url + "/d?fieldValidation=Strict", json=body)
    assert (code, err["message"]) == (
        400, PREFIX + "strict decoding error: " + ", ".join(TYPO_ERRORS))
    status_body = copy.deepcopy(created)
    status_body["status"] = {"replicas": 1, "readyReplicaz": 1}
    code, err = await call(http, "PUT", url + "/d/status?fieldValidation=Strict",
                           json=status_body)
    assert (code, err["message"]) == (
        400, PREFIX + 'strict decoding error: unknown field "status.readyReplicaz"')
    async with http.put(url + "/d/status", json=status_body) as r:
        assert r.status == 200
        assert warnings_of(r) == [header('unknown field "status.readyReplicaz"')]
        assert (await r.json())["status"] == {"replicas": 1}
    code, obj = await stored(http, url + "/d")
    assert obj["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert "imagee" not in obj["spec"]["template"]["spec"]["containers"][0]


async def test_duplicate_fields_json_and_yaml(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    # kube: sigs.k8s.io/json DisallowDuplicateFields (`duplicate field "spec.replicas"`, the
    # last value kept); a YAML body is also run through YAMLToJSONStrict, whose go-yaml
    # error comes first (json.go Serializer.unmarshal)
    url = apiserver_no_sim.url + DEPLOY
    raw = orjson.dumps(deployment()).replace(b'"replicas":1', b'"replicas":1,"replicas":3')
    async with http.post(url + "?fieldValidation=Strict", data=raw, headers=JSON) as r:
        body = await r.json()
        assert (r.status, body["message"]) == (
            400, PREFIX + 'strict decoding error: duplicate field "spec.replicas"')
    async with http.post(url, data=raw, headers=JSON) as r:
        assert r.status == 201
        assert warnings_of(r) == [header('duplicate field "spec.replicas"')]
        assert (await r.json())["spec"]["replicas"] == 3  # the last one, as Go keeps it
    # the duplicate-aware parse keeps number literals for messages; what it stores is
    # plain JSON again (a regression: such a float could not be serialized)
    raw = (b'{"metadata":{"name":"p","name":"p"},"spec":{"containers":[{"name":"c",'
           b'"image":"i","resources":{"limits":{"cpu":0.5}}}]}}')
    async with http.post(apiserver_no_sim.url + NS + "/pods", data=raw, headers=JSON) as r:
        assert r.status == 201, await r.text()
        assert warnings_of(r) == [header('duplicate field "metadata.name"')]
    code, pod = await stored(http, apiserver_no_sim.url + NS + "/pods/p")
    assert code == 200 and pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] in (
        0.5, "500m")
    # (not `name: y`: go-yaml reads an unquoted y as YAML 1.1's true, which kube then refuses
    # as a bool where a string goes)
    yaml_body = b"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: yd
spec:
  replicas: 1
  replicas: 2
  selector:
    matchLabels: {app: a}
  template:
    metadata:
      labels: {app: a}
    spec:
      containers: [{name: c, image: i, imagee: x}]
"""
    headers = {"Content-Type": "application/yaml"}
    async with http.post(url + "?fieldValidation=Strict", data=yaml_body,
                         headers=headers) as r:
        body = await r.json()
        assert (r.status, body["message"]) == (400, PREFIX + (
            "strict decoding error: yaml: unmarshal errors:\n  line 7: key \"replicas\" "
            'already set in map, unknown field "spec.template.spec.containers[0].imagee"'))
    async with http.post(url + "?fieldValidation=Ignore", data=yaml_body,
                         headers=headers) as r:
        assert r.status == 201 and (await r.json())["spec"]["replicas"] == 2


@pytest.mark.parametrize(("path", "value", "error"), [
    # kube: encoding/json's UnmarshalTypeError through sigs.k8s.io/json: the innermost struct,
    # then the JSON names from the root (no indexes), then reflect's name of the Go type
    (("spec", "replicas"), "3",
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
     "type int32"),
    (("spec", "replicas"), b"1.5",
     "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of "
     "type int32"),
    (("spec", "replicas"), b"1e3",
     "json: cannot unmarshal number 1e3 into Go struct field DeploymentSpec.spec.replicas of "
     "type int32"),
    (("spec", "replicas"), 99999999999,
     "json: cannot unmarshal number 99999999999 into Go struct field "
     "DeploymentSpec.spec.replicas of type int32"),
    (("spec", "paused"), "yes",
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type "
     "bool"),
    (("spec", "template", "spec", "containers"), "c",
     "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers"
     " of type []v1.Container"),
    (("spec", "template", "spec", "restartPolicy"), 1,
     "json: cannot unmarshal number into Go struct field PodSpec.spec.template.spec."
     "restartPolicy of type v1.RestartPolicy"),
    (("metadata", "labels"), {"a": 1},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type "
     "string"),
    # types with their own UnmarshalJSON: intstr.IntOrString (json.Unmarshal into its int32,
    # the error given the field's context), metav1.Time (time.Parse), resource.Quantity
    (("spec", "strategy"), {"rollingUpdate": {"maxSurge": True}},
     "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy."
     "rollingUpdate.maxSurge of type int32"),
    (("metadata", "creationTimestamp"), "yesterday",
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as '
     '"2006"'),
    (("metadata", "creationTimestamp"), "2024-02-30T00:00:00Z",
     'parsing time "2024-02-30T00:00:00Z": day out of range'),
    (("spec", "template", "spec", "containers"),
     [{"name": "c", "image": "i", "resources": {"limits": {"memory": "64Mo"}}}],
     "quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (("spec", "template", "spec", "containers"),
     [{"name": "c", "image": "i", "resources": {"limits": {"memory": "1Gii"}}}],
     "unable to parse quantity's suffix"),
])
async def test_type_errors_in_go_words(apiserver_no_sim: ApiServer, http: aiohttp.ClientSession,
                                       path: tuple[str, ...], value: Any, error: str) -> None:
    url = apiserver_no_sim.url + DEPLOY
    body = deployment()
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = "__VALUE__"
    raw = orjson.dumps(body)
    literal = value if isinstance(value, bytes) else orjson.dumps(value)
    raw = raw.replace(b'"__VALUE__"', literal)
    for mode in ("Strict", "Warn", "Ignore"):  # type errors are fatal in every mode
        async with http.post(f"{url}?fieldValidation={mode}", data=raw, headers=JSON) as r:
            answer = await r.json()
            assert (r.status, answer["reason"], answer["message"]) == (
                400, "BadRequest", PREFIX + error), mode
    assert (await stored(http, url + "/d"))[0] == 404


async def test_secret_base64_null_and_zero_values(apiserver_no_sim: ApiServer,
                                                  http: aiohttp.ClientSession) -> None:
    # kube: []byte fields decode base64 with Go's StdEncoding (CorruptInputError offsets);
    # null leaves Go's zero value: a struct field absent, a map value ""
    url = apiserver_no_sim.url + NS
    code, body = await call(http, "POST", url + "/secrets",
                            json={"metadata": {"name": "s"}, "data": {"k": "aGVsbG8"}})
    assert (code, body["message"]) == (400, 'Secret in version "v1" cannot be handled as a '
                                            "Secret: illegal base64 data at input byte 4")
    code, body = await call(http, "POST", url + "/configmaps", json={
        "metadata": {"name": "c", "labels": None}, "data": {"a": None, "b": "x"}})
    assert code == 201, body
    assert body["data"] == {"a": "", "b": "x"} and "labels" not in body["metadata"]


async def test_patches_decode_the_patched_object(apiserver_no_sim: ApiServer,
                                                 http: aiohttp.ClientSession) -> None:
    # kube: handlers/patch.go — JSON and merge patches: the patched JSON decoded by the
    # codec, errors a 422 `NewInvalid(GroupKind{}, "", patch: Invalid value: <patched>)`;
    # strategic merge: the unstructured converter (unknown fields sorted, the patch shown as
    # Go's %+v of the map); the patch's own duplicate keys (UnmarshalStrict) come first
    url = apiserver_no_sim.url + DEPLOY
    code, created = await call(http, "POST", url, json=deployment())
    assert code == 201
    rv = created["metadata"]["resourceVersion"]
    patch = {"spec": {"replicaz": 2}}
    code, body = await call(http, "PATCH", url + "/d?fieldValidation=Strict", json=patch,
                            headers=MERGE)
    assert code == 422 and body["reason"] == "Invalid"
    (cause,) = body["details"]["causes"]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    assert cause["message"].startswith('Invalid value: "{\\"apiVersion\\":\\"apps/v1\\"')
    assert cause["message"].endswith('": strict decoding error: unknown field '
                                     '"spec.replicaz"')
    assert body["message"] == ' "" is invalid: patch: ' + cause["message"]
    async with http.patch(url + "/d", json=patch, headers=MERGE) as r:  # Warn
        assert r.status == 200
        assert warnings_of(r) == [header('unknown field "spec.replicaz"')]
        assert "replicaz" not in (await r.json())["spec"]
    code, body = await call(http, "PATCH", url + "/d?fieldValidation=Strict",
                            json={"spec": {"zeta": 1, "alpha": {"x": 1.5}}}, headers=SMP)
    assert (code, body["details"]["causes"][0]["message"]) == (422, (
        'Invalid value: "map[spec:map[alpha:map[x:1.5] zeta:1]]": strict decoding error: '
        'unknown field "spec.alpha", unknown field "spec.zeta"'))
    code, body = await call(http, "PATCH", url + "/d", json={"spec": {"replicas": "2"}},
                            headers=SMP)
    assert (code, body["details"]["causes"][0]["message"]) == (
        422, 'Invalid value: "map[spec:map[replicas:2]]": unrecognized type: int32')
    ops = [{"op": "replace", "path": "/spec/replicas", "value": 2, "valeu": 3}]
    async with http.patch(url + "/d", json=ops, headers=JSONPATCH) as r:
        assert r.status == 200 and (await r.json())["spec"]["replicas"] == 2
        assert warnings_of(r) == [header('json patch unknown field "[0].valeu"')]
    raw = b'{"spec":{"replicas":3,"replicas":4}}'
    async with http.patch(url + "/d?fieldValidation=Strict", data=raw, headers=MERGE) as r:
        body = await r.json()
        assert r.status == 422
        assert body["details"]["causes"][0]["message"].endswith(
            ': strict decoding error: duplicate field "spec.replicas"')
    code, obj = await stored(http, url + "/d")
    assert obj["spec"]["replicas"] == 2 and obj["metadata"]["resourceVersion"] != rv


async def test_apply_types_the_configuration(apiserver_no_sim: ApiServer,
                                             http: aiohttp.ClientSession) -> None:
    # kube: managedfields structuredmerge.go ObjectToTyped — an unknown field of a built-in's
    # apply configuration fails in every mode ("field not declared in schema"; kube answers
    # 500, the embedded server 400); then the YAML body's duplicate keys
    # (applyPatcher: yaml.UnmarshalStrict after the apply)
    url = apiserver_no_sim.url + DEPLOY
    config = deployment("a")
    config["spec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    for mode in ("Strict", "Ignore"):
        code, body = await call(
            http, "PATCH", f"{url}/a?fieldManager=me&fieldValidation={mode}",
            data=orjson.dumps(config), headers=APPLY)
        assert (code, body["message"]) == (400, (
            "failed to create typed patch object (/a; apps/v1, Kind=Deployment): "
            '.spec.template.spec.containers[name="c"].imagee: field not declared in schema'))
    config = deployment("a", replicas="2")
    code, body = await call(http, "PATCH", f"{url}/a?fieldManager=me",
                            data=orjson.dumps(config), headers=APPLY)
    assert body["message"].endswith(
        ".spec.replicas: expected numeric (int or float), got string")
    assert (await stored(http, url + "/a"))[0] == 404
    yaml_body = b"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  name: a
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: c, image: i}]}
"""
    code, body = await call(http, "PATCH", f"{url}/a?fieldManager=me&fieldValidation=Strict",
                            data=yaml_body, headers=APPLY)
    assert (code, body["message"]) == (400, (
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
        '  line 5: key "name" already set in map'))
    async with http.patch(f"{url}/a?fieldManager=me", data=yaml_body, headers=APPLY) as r:
        assert r.status == 201
        assert warnings_of(r) == [header(
            'error converting YAML to JSON: yaml: unmarshal errors:   line 5: key "name" '
            "already set in map")]  # the newline cannot be in a header: a space, as kube


async def test_a_field_newer_than_the_served_minor_is_unknown(
        http: aiohttp.ClientSession) -> None:
    # kube 1.27's Container has no restartPolicy (added in 1.28, for sidecar init
    # containers): a 1.27 server decodes with 1.27's types, so the field is unknown there
    # and known (and valid on an init container) at 1.33
    body = deployment()
    pod = body["spec"]["template"]["spec"]
    pod["initContainers"] = [{"name": "side", "image": "i", "restartPolicy": "Always"}]
    async with ApiServer(simulators=False, version=("1", "27")) as old:
        code, err = await call(http, "POST", old.url + DEPLOY + "?fieldValidation=Strict",
                               json=body)
        assert (code, err["message"]) == (400, PREFIX + (
            'strict decoding error: unknown field "spec.template.spec.initContainers[0]'
            '.restartPolicy"'))
    async with ApiServer(simulators=False) as new:
        code, obj = await call(http, "POST", new.url + DEPLOY + "?fieldValidation=Strict",
                               json=body)
        assert code == 201, obj
        assert obj["spec"]["template"]["spec"]["initContainers"][0]["restartPolicy"] == "Always"


async def test_in_process_writes_decode_too(apiserver_no_sim: ApiServer) -> None:
    # the Writer decodes what the in-process API writes (simulators, tests): unknown fields
    # never reach the store, type errors are kube's 400
    store = apiserver_no_sim.store
    rt = store.resolve("apps", "v1", "deployments")
    created = await store.create(rt, with_typos(), namespace="default")
    assert "containrs" not in created["spec"]["template"]["spec"]
    bad = deployment("b", replicas="x")
    with pytest.raises(Exception) as info:
        await store.create(rt, bad, namespace="default")
    assert getattr(info.value, "code", None) == 400
    assert decode_module.canonical_quantity("1Gi") == "1Gi"  # the hook, not yet wired
