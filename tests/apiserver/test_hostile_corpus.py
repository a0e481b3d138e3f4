"""A hostile corpus over real HTTP: no 5xx, nothing stored on rejection, every collection
still readable.

At least 150 requests an attacker or a broken client sends — JSON, YAML (anchors, aliases,
tags, documents, merge keys), protobuf, every patch type and apply, headers, paths, query
parameters and tokens — are sent to one server (in token mode for the token cases). For each:
the answer is below 500 and is a metav1.Status when it is an error; a refused request leaves
the server's resourceVersion where it was (nothing was committed, not even half); and at the
end every collection the corpus touched lists with 200 and its items serialise. The corpus is
data, so a new finding becomes one more line.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import orjson
import pytest_asyncio

from asyncop.apiserver import ApiServer
from tests.apiserver.httpkit import call

TOKEN = "corpus-token"
NS = "/api/v1/namespaces/default"
CM = NS + "/configmaps"
DEP = "/apis/apps/v1/namespaces/default/deployments"
JSON_CT = "application/json"
YAML_CT = "application/yaml"
MERGE = "application/merge-patch+json"
SMP = "application/strategic-merge-patch+json"
JSONPATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
PB = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class Req:
    name: str
    method: str
    path: str
    body: bytes | None = None
    content_type: str | None = JSON_CT
    headers: dict[str, str] = field(default_factory=dict)
    auth: bool = True


def j(value: object) -> bytes:
    return orjson.dumps(value)


def _chain(links: int) -> bytes:
    lines = [b"metadata: {name: chain}", b"x0: &a0 [leaf]"]
    lines += [b"x%d: &a%d [*a%d]" % (i, i, i - 1) for i in range(1, links)]
    return b"\n".join(lines) + b"\n"


def _laughs(levels: int) -> bytes:
    lines = [b"metadata: {name: laughs}", b"l0: &l0 [lol]"]
    for i in range(1, levels + 1):
        lines.append(b"l%d: &l%d [" % (i, i) + b", ".join([b"*l%d" % (i - 1)] * 10) + b"]")
    return b"\n".join(lines) + b"\n"


def json_bodies() -> list[Req]:
    cm = {"metadata": {"name": "c"}}
    bad_meta = [("name", 5), ("name", None), ("name", ["a"]), ("namespace", {"a": 1}),
                ("labels", "x"), ("labels", {"a": 1}), ("annotations", [1]),
                ("finalizers", "x"), ("finalizers", [1]), ("ownerReferences", {}),
                ("ownerReferences", [{"kind": "X"}]), ("resourceVersion", 7),
                ("generateName", 1), ("uid", 1), ("creationTimestamp", "yesterday"),
                ("deletionTimestamp", "2020-01-01T00:00:00Z"), ("labels", {"a/b/c": "x"}),
                ("name", "a" * 300), ("name", "\u0000"), ("name", "../x")]
    out = [Req(f"metadata.{k}={v!r}"[:60], "POST", CM, j({"metadata": {"name": "m", k: v}}))
           for k, v in bad_meta]
    out += [
        Req("not json", "POST", CM, b"{not json"),
        Req("empty", "POST", CM, b""),
        Req("array body", "POST", CM, b"[1,2]"),
        Req("string body", "POST", CM, b'"x"'),
        Req("null body", "POST", CM, b"null"),
        Req("number body", "POST", CM, b"1e400"),
        Req("bom", "POST", CM, b"\xef\xbb\xbf" + j(cm)),
        Req("invalid utf-8", "POST", CM, b'{"metadata":{"name":"\xff\xfe"}}'),
        Req("deep json", "POST", CM, b'{"metadata":{"name":"d"},"data":' +
            b'{"a":' * 300 + b"1" + b"}" * 301),
        Req("wide brackets", "POST", CM, b"[" * 50_000 + b"]" * 50_000),
        Req("huge int", "POST", CM, j({"metadata": {"name": "h"}, "data": {"a": 1}})
            .replace(b"1", b"123456789012345678901234567890")),
        Req("wrong kind", "POST", CM, j({"kind": "Secret", **cm})),
        Req("wrong apiVersion", "POST", CM, j({"apiVersion": "v2", **cm})),
        Req("namespace mismatch", "POST", CM, j({"metadata": {"name": "n", "namespace": "x"}})),
        Req("data not strings", "POST", CM, j({"metadata": {"name": "d2"}, "data": {"a": [1]}})),
        Req("binaryData not base64", "POST", CM,
            j({"metadata": {"name": "b"}, "binaryData": {"a": "***"}})),
        Req("duplicate keys", "POST", CM, b'{"metadata":{"name":"x","name":"y"}}'),
        Req("deployment replicas string", "POST", DEP,
            j({"metadata": {"name": "d"}, "spec": {"replicas": "three"}})),
        Req("deployment spec array", "POST", DEP, j({"metadata": {"name": "d"}, "spec": []})),
        Req("deployment template garbage", "POST", DEP,
            j({"metadata": {"name": "d"}, "spec": {"template": "x", "selector": 5}})),
        Req("pod containers null", "POST", NS + "/pods",
            j({"metadata": {"name": "p"}, "spec": {"containers": None}})),
        Req("pod container port huge", "POST", NS + "/pods", j({
            "metadata": {"name": "p"}, "spec": {"containers": [
                {"name": "c", "image": "i", "ports": [{"containerPort": 99999999999}]}]}})),
        Req("secret data not base64", "POST", NS + "/secrets",
            j({"metadata": {"name": "s"}, "data": {"k": "!!"}})),
        Req("namespace bad name", "POST", "/api/v1/namespaces",
            j({"metadata": {"name": "Bad_NS"}})),
        Req("update without body name", "PUT", CM + "/absent", j({"data": {}})),
        Req("update of another name", "PUT", CM + "/absent",
            j({"metadata": {"name": "other"}})),
        Req("put array", "PUT", CM + "/absent", b"[]"),
    ]
    return out


def yaml_bodies() -> list[Req]:
    docs = [
        b"metadata: {name: y1}\ndata: {a: *missing}\n",
        b"metadata: &m {name: y2, labels: *m}\n",
        b"a: &x {b: *x}\n",
        _chain(200),
        _chain(1000),
        _laughs(9),
        _laughs(12),
        b"metadata: {name: y3}\ndata: !!python/object:os.system {a: b}\n",
        b"metadata: {name: y4}\ndata: {a: !!binary '***'}\n",
        b"metadata: {name: y5}\ndata: {a: !!int abc}\n",
        b"metadata: {name: y6}\ndata: {a: .nan}\n",
        b"metadata: {name: y7}\ndata: {a: .inf}\n",
        b"metadata: {name: y8}\n? [a, b]\n: c\n",
        b"metadata: {name: y9}\ndata:\n  <<: 5\n",
        b"metadata: {name: y10}\ndata:\n  <<: [1, 2]\n",
        b"---\n---\n---\n",
        b"metadata: {name: y11}\n---\nmetadata: {name: y12}\n",
        b"\t\tmetadata: {name: tabs}\n",
        b"metadata: {name: y13\n",
        b"- a\n- b\n",
        b"just a string\n",
        b"metadata: {name: y14}\ndata: {a: \x01}\n",
        b"%YAML 1.1\n%TAG ! tag:x,2000:\n---\nmetadata: {name: y15}\n",
        b"metadata: {name: y16}\ndata: {~: null}\n",
        b"metadata: {name: y17}\ndata: {a: 2001-12-14t21:59:43.10-05:00}\n",
        b"{" * 2000,
        b"metadata: {name: y18}\ndata: {a: " + b"x" * 100 + b"}\n" + b"#" * 10_000,
    ]
    return [Req(f"yaml {i}", "POST", CM, body, YAML_CT) for i, body in enumerate(docs)]


def protobuf_bodies() -> list[Req]:
    bodies = [b"", b"k8s", b"k8s\x00", b"k8s\x00\x0a", b"k8s\x00\x0a\xff\xff\xff\xff\x0f",
              b"k8s\x00\x12\x05hello", b"k8s\x00" + b"\x0a\x80" * 100, b"\x00" * 64,
              b"k8s\x00\x0a\x02v1\x12\x09ConfigMap\x1a\x03\xff\xfe\xfd",
              b"k8s\x00" + bytes(range(256))]
    return [Req(f"protobuf {i}", "POST", CM, body, PB) for i, body in enumerate(bodies)]


def patches() -> list[Req]:
    target = CM + "/victim"
    many = j([{"op": "add", "path": f"/data/k{i}", "value": "v"} for i in range(10_001)])
    json_patches = [
        b"{}", b"[{}]", b'[{"op": "explode", "path": "/data"}]',
        b'[{"op": "add", "path": "data", "value": 1}]',
        b'[{"op": "remove", "path": "/metadata/name"}]',
        b'[{"op": "replace", "path": "/metadata", "value": null}]',
        b'[{"op": "move", "from": "/metadata", "path": "/metadata/x"}]',
        b'[{"op": "copy", "from": "/data", "path": "/data/a/b/c"}]',
        b'[{"op": "test", "path": "/data/a", "value": "no"}]',
        b'[{"op": "add", "path": "/data/~2", "value": "x"}]',
        b'[{"op": "add", "path": "/data/a", "value": {"nested": "object"}}]',
        b'[{"op": "replace", "path": "/kind", "value": "Secret"}]',
        b'[{"op": "add", "path": "/metadata/labels/x", "value": 5}]',
        many,
    ]
    merge_patches = [b"[]", b"null", b'"x"', b'{"metadata": null}',
                     b'{"metadata": {"name": "renamed"}}', b'{"apiVersion": "v2"}',
                     b'{"data": "x"}', b'{"data": {"a": {"b": 1}}}',
                     b'{"metadata": {"labels": {"a b": "c"}}}',
                     b'{"metadata": {"resourceVersion": "1"}}']
    smp = [b'{"$patch": "delete"}', b'{"$patch": "replace"}', b'{"$retainKeys": 5}',
           b'{"metadata": {"$deleteFromPrimitiveList/finalizers": 5}}',
           b'{"$setElementOrder/data": [{"a": 1}]}', b'{"data": {"$patch": "nonsense"}}',
           b'{"metadata": {"finalizers": {"$patch": "merge"}}}', b"[1]"]
    applies = [
        (b"apiVersion: v1\nkind: Secret\nmetadata: {name: victim}\n", "?fieldManager=m"),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n", "?fieldManager=m"),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim}\n", ""),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim}\n",
         "?fieldManager=" + "m" * 200),
        (b"kind: ConfigMap\nmetadata: {name: victim}\n", "?fieldManager=m"),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim}\ndata: [1]\n",
         "?fieldManager=m"),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim, managedFields: 5}\n",
         "?fieldManager=m"),
        (_chain(500), "?fieldManager=m"),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim}\n",
         "?fieldManager=m&force=maybe"),
    ]
    out = [Req(f"json patch {i}", "PATCH", target, p, JSONPATCH)
           for i, p in enumerate(json_patches)]
    out += [Req(f"merge patch {i}", "PATCH", target, p, MERGE) for i, p in enumerate(merge_patches)]
    out += [Req(f"smp {i}", "PATCH", target, p, SMP) for i, p in enumerate(smp)]
    out += [Req(f"apply {i}", "PATCH", target + q, p, APPLY) for i, (p, q) in enumerate(applies)]
    out += [Req("patch unknown type", "PATCH", target, b"{}", "application/x-whatever"),
            Req("patch absent object", "PATCH", CM + "/absent", b"{}", MERGE),
            Req("patch a list", "PATCH", CM, b"{}", MERGE)]
    return out


def headers_and_paths() -> list[Req]:
    out = [
        Req("content-type garbage", "POST", CM, b"{}", "text/x-evil"),
        Req("content-type params", "POST", CM, j({"metadata": {"name": "ct"}}),
            "application/json; charset=utf-16"),
        Req("accept unknown", "GET", CM, None, None, {"Accept": "application/x-evil"}),
        Req("accept table garbage", "GET", CM, None, None,
            {"Accept": "application/json;as=Table;v=v9;g=x"}),
        Req("accept partial garbage", "GET", CM, None, None,
            {"Accept": "application/json;as=PartialObjectMetadataList;g=x"}),
        Req("huge header", "GET", CM, None, None, {"X-Big": "x" * 200_000}),
        Req("dry run garbage", "POST", CM + "?dryRun=Maybe", j({"metadata": {"name": "dr"}})),
        Req("fieldValidation garbage", "POST", CM + "?fieldValidation=Loose",
            j({"metadata": {"name": "fv"}})),
        Req("fieldManager too long", "POST", CM + "?fieldManager=" + "f" * 200,
            j({"metadata": {"name": "fm"}})),
    ]
    paths = ["/api/v1/namespaces/default/configmaps/../secrets", "/api/v1/namespaces/%2e%2e",
             "/api/v1/namespaces/default/configmaps/a%2Fb", "//api//v1//namespaces",
             "/apis/nope.example.com/v1/things", "/api/v2/pods", "/api/v1/namespaces/x/y/z/w/v",
             "/api/v1/namespaces/default/pods/p/exec", "/api/v1/namespaces/default/pods/p/nope",
             "/api/v1/namespaces/default/configmaps/" + "a" * 5000,
             "/api/v1/namespaces/" + "\u00e9" * 10 + "/configmaps",
             "/apis/apps/v1/watch/namespaces/default/deployments/x/status",
             "/openapi/v3/apis/nope/v1", "/openapi/v9", "/metrics/../version",
             "/api/v1/nodes/n/log"]
    out += [Req(f"path {p[:40]}", "GET", p, None, None) for p in paths]
    queries = ["limit=-1", "limit=x", "resourceVersion=abc", "resourceVersion=-5",
               "resourceVersion=99999999999999", "resourceVersionMatch=Exact",
               "resourceVersionMatch=Exact&resourceVersion=0", "continue=%%%",
               "continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwicyI6IjEiLCJvIjotMX0",
               "labelSelector=" + "(" * 1000, "labelSelector=a+in+(b", "fieldSelector=spec.x=1",
               "fieldSelector=metadata.name==x==y", "watch=1&timeoutSeconds=x",
               "watch=1&resourceVersion=abc", "watch=1&sendInitialEvents=true",
               "timeoutSeconds=-1", "shardSelector=garbage"]
    out += [Req(f"query {q[:40]}", "GET", CM + "?" + q, None, None) for q in queries]
    out += [Req("get rv garbage", "GET", CM + "/victim?resourceVersion=abc", None, None)]
    return out


def tokens() -> list[Req]:
    forms = ["", "Bearer", "Bearer ", "Bearer wrong", "bearer " + TOKEN + "x",
             "Basic " + base64.b64encode(b"admin:admin").decode(), "Bearer " + "t" * 10_000,
             "Bearer " + TOKEN[:-1], "Token " + TOKEN]
    return [Req(f"auth {a[:20]!r}", "GET", CM, None, None, {"Authorization": a}, auth=False)
            for a in forms]


CORPUS = json_bodies() + yaml_bodies() + protobuf_bodies() + patches() + headers_and_paths() \
    + tokens()


@pytest_asyncio.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False, token=TOKEN) as srv:
        yield srv


def _kubes_own_5xx(code: int, body: bytes) -> bool:
    """The one 5xx kube itself answers to a client's input: a resourceVersion from the
    future is a 504 Timeout with cause ResourceVersionTooLarge (storage/cacher)."""
    if code != 504:
        return False
    causes = (orjson.loads(body).get("details") or {}).get("causes") or []
    return [c.get("reason") for c in causes] == ["ResourceVersionTooLarge"]


async def _send(http: aiohttp.ClientSession, base: str, req: Req) -> tuple[int, bytes]:
    headers = dict(req.headers)
    if req.content_type is not None:
        headers["Content-Type"] = req.content_type
    if req.auth:
        headers.setdefault("Authorization", f"Bearer {TOKEN}")
    async with http.request(req.method, base + req.path, data=req.body, headers=headers,
                            skip_auto_headers=("Content-Type",)) as resp:
        if "watch=1" in req.path and resp.status == 200:
            return resp.status, await asyncio.wait_for(resp.content.readline(), 5)
        return resp.status, await resp.read()


async def test_the_hostile_corpus(server: ApiServer) -> None:
    assert len(CORPUS) >= 150, len(CORPUS)
    admin = {"Authorization": f"Bearer {TOKEN}"}
    problems: list[str] = []
    async with aiohttp.ClientSession() as http:
        code, _ = await call(http, "POST", server.url + CM, headers=admin,
                             json={"metadata": {"name": "victim"}, "data": {"a": "1"}})
        assert code == 201
        for req in CORPUS:
            before = server.store.resource_version
            code, body = await _send(http, server.url, req)
            if code >= 500 and not _kubes_own_5xx(code, body):
                problems.append(f"{req.name}: {code} {body[:200]!r}")
                continue
            if code >= 400:
                if server.store.resource_version != before:
                    problems.append(f"{req.name}: refused with {code} but something was "
                                    "committed")
                if code != 404 or body.startswith(b"{"):
                    try:
                        status = json.loads(body)
                    except ValueError:
                        problems.append(f"{req.name}: {code} without a Status: {body[:100]!r}")
                        continue
                    if status.get("kind") != "Status":
                        problems.append(f"{req.name}: {code} answered {body[:100]!r}")
        for path in (CM, DEP, NS + "/pods", NS + "/secrets", "/api/v1/namespaces"):
            code, listed = await call(http, "GET", server.url + path, headers=admin)
            if code != 200:
                problems.append(f"LIST {path}: {code}")
                continue
            orjson.dumps(listed)
            for item in listed["items"]:
                code, _ = await call(http, "GET", server.url + path + "/" +
                                     item["metadata"]["name"], headers=admin)
                if code != 200 and path != "/api/v1/namespaces":
                    problems.append(f"GET {path}/{item['metadata']['name']}: {code}")
    assert problems == []
