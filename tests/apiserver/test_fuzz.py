"""Hypothesis fuzzing of the write path over real HTTP: random objects and random merge,
strategic-merge, JSON and apply patches against a schema-rich CRD (structural schema,
formats, enums, bounds, list-map keys, int-or-string, embedded and preserved fields, a CEL
rule) and built-in kinds (Deployment, Pod, Service, ConfigMap, Secret).

Properties: no answer is a 5xx; every error is a metav1.Status; a rejected request leaves
the stored object and its resourceVersion as they were; whatever is stored can be read back
and listed. The server runs on its own event loop in a thread, the test talks to it with
http.client; examples are bounded and derandomized, so CI runs the same cases every time.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asyncop.apiserver import ApiServer

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "x-kubernetes-validations": [{"rule": "!has(self.size) || self.size <= 50",
                                  "message": "size must be at most 50"}],
    "properties": {
        "size": {"type": "integer", "minimum": 0, "maximum": 100},
        "color": {"type": "string", "enum": ["red", "green", "blue"]},
        "name": {"type": "string", "maxLength": 12, "pattern": "^[a-z]+$"},
        "ratio": {"type": "number", "exclusiveMaximum": True, "maximum": 1.0},
        "when": {"type": "string", "format": "date-time"},
        "port": {"x-kubernetes-int-or-string": True},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5,
                 "x-kubernetes-list-type": "set"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"], "properties": {
                      "name": {"type": "string"}, "port": {"type": "integer"}}}},
        "nested": {"type": "object", "properties": {
            "deep": {"type": "object", "properties": {"leaf": {"type": "boolean"}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True},
    },
}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.fuzz.example.com"},
    "spec": {"group": "fuzz.example.com", "scope": "Namespaced",
             "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": SPEC_SCHEMA,
                               "status": {"type": "object",
                                          "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}
GADGETS = "/apis/fuzz.example.com/v1/namespaces/default/gadgets"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
SERVICES = "/api/v1/namespaces/default/services"
SECRETS = "/api/v1/namespaces/default/secrets"
DATA_KINDS = (CONFIGMAPS, SECRETS)  # data, no spec, no status subresource


class Server:
    """An ApiServer on its own event loop in a thread (hypothesis drives sync tests)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = ApiServer(simulators=False)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(30)
        self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> tuple[int, Any]:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        headers = {"Content-Type": content_type} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None

    def close(self) -> None:
        self.conn.close()
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = Server()
    code, body = srv.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                             CRD)
    assert code == 201, body
    for _ in range(200):
        code, _ = srv.request("POST", GADGETS, gadget("warmup", {"size": 1}))
        if code == 201:
            break  # served; and the CEL rule is compiled (celpy raises the recursion limit)
        threading.Event().wait(0.05)
    assert code == 201
    try:
        yield srv
    finally:
        srv.close()


# --- strategies -----------------------------------------------------------------------------

FIELDS = ["size", "color", "name", "ratio", "when", "port", "tags", "ports", "nested", "deep",
          "leaf", "labels", "free", "embedded", "apiVersion", "kind", "metadata", "spec",
          "status", "replicas", "template", "containers", "image", "env", "value", "args",
          "selector", "matchLabels", "data", "binaryData", "$patch", "$retainKeys",
          "$setElementOrder/containers", "$deleteFromPrimitiveList/args", "x", ""]
scalars = (st.none() | st.booleans() | st.integers(-2**63, 2**64)
           | st.floats(allow_nan=False, allow_infinity=False)
           | st.sampled_from(["red", "blue", "abc", "", "1", "80", "2024-01-01T00:00:00Z",
                              "delete", "replace", "merge", "retainKeys", "ü", "a" * 300])
           | st.text(max_size=20))
keys = st.sampled_from(FIELDS) | st.text(max_size=8)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(keys, inner, max_size=5), max_leaves=25)
bodies = st.dictionaries(keys, values, max_size=6)
schema_fields = st.dictionaries(st.sampled_from(sorted(SPEC_SCHEMA["properties"])), values,
                                min_size=1, max_size=4)
aimed = (schema_fields.map(lambda d: {"spec": d})  # at the Gadget schema and Deployment spec
         | st.dictionaries(st.sampled_from(["replicas", "selector", "template", "paused"]),
                           values, min_size=1).map(lambda d: {"spec": d})
         | st.dictionaries(st.text(max_size=5), values, min_size=1).map(lambda d: {"data": d}))
patch_bodies = bodies | aimed

pointer_parts = st.sampled_from(["spec", "metadata", "labels", "size", "ports", "0", "1", "-",
                                 "tags", "nested", "deep", "containers", "data", "a~1b", "~0",
                                 "name", "status", "free", "x"])
pointers = st.lists(pointer_parts, max_size=4).map(lambda ps: "/" + "/".join(ps)) | st.just("")
json_ops = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
     "path": pointers},
    optional={"value": values, "from": pointers})
json_patches = st.lists(json_ops, max_size=5) | values

PATCH_TYPES = ["application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json", "application/apply-patch+yaml"]


def gadget(name: str, spec: Any) -> dict[str, Any]:
    return {"apiVersion": "fuzz.example.com/v1", "kind": "Gadget",
            "metadata": {"name": name, "labels": {"a": "b"}}, "spec": spec}


def deployment(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {
                         "containers": [{"name": "c", "image": "x", "args": ["a", "b"],
                                         "env": [{"name": "E", "value": "1"}]}]}}}}


BASES = {GADGETS: gadget("base", {"size": 3, "color": "red", "ports": [{"name": "a"}],
                                  "tags": ["x"], "nested": {"deep": {"leaf": True}}}),
         DEPLOYMENTS: deployment("base"),
         CONFIGMAPS: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base"},
                      "data": {"a": "b"}},
         PODS: {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "base"},
                "spec": {"containers": [{"name": "c", "image": "x", "ports": [
                    {"containerPort": 80, "protocol": "TCP"}]}]}},
         SERVICES: {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "base"},
                    "spec": {"ports": [{"port": 80, "name": "http"}], "selector": {"a": "b"}}},
         SECRETS: {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "base"},
                   "stringData": {"a": "b"}}}


def ensure_base(srv: Server, collection: str) -> dict[str, Any]:
    code, obj = srv.request("GET", f"{collection}/base")
    if code == 404:
        code, obj = srv.request("POST", collection, BASES[collection])
        assert code == 201, obj
    assert code == 200 or code == 201, obj
    return dict(obj)


def check_answer(code: int, body: Any) -> None:
    assert code < 500, body
    if code >= 400:
        assert isinstance(body, dict) and body.get("kind") == "Status", body
        assert body.get("code") == code and body.get("status") == "Failure", body


def check_readable(srv: Server, collection: str) -> None:
    code, listed = srv.request("GET", collection)
    assert code == 200, listed


# --- properties -----------------------------------------------------------------------------

def test_fuzzed_creates_and_updates(server: Server) -> None:
    outcomes: Counter[int] = Counter()
    run_creates_and_updates(server, outcomes)
    assert outcomes[2] and outcomes[4], outcomes  # the fuzz reached both answers


@FUZZ
@given(collection=st.sampled_from(sorted(BASES)), spec=values, extra=bodies)
def run_creates_and_updates(server: Server, outcomes: Counter[int], collection: str,
                            spec: Any, extra: dict[str, Any]) -> None:
    body = {**extra, **BASES[collection], "metadata": {"name": "fuzzed"}}
    body["data" if collection in DATA_KINDS else "spec"] = spec
    code, answer = server.request("POST", collection, body)
    check_answer(code, answer)
    if code >= 400:
        code, _ = server.request("GET", f"{collection}/fuzzed")
        assert code == 404  # nothing stored
    else:
        code, _ = server.request("DELETE", f"{collection}/fuzzed")
        assert code == 200
    before = ensure_base(server, collection)
    update = {**extra, **before}
    update["data" if collection in DATA_KINDS else "spec"] = spec
    code, answer = server.request("PUT", f"{collection}/base", update)
    check_answer(code, answer)
    outcomes[code // 100] += 1
    if code >= 400:
        code, after = server.request("GET", f"{collection}/base")
        assert code == 200 and after == before
    check_readable(server, collection)


def test_fuzzed_patches(server: Server) -> None:
    outcomes: Counter[tuple[str, int]] = Counter()
    run_patches(server, outcomes)
    for patch_type in PATCH_TYPES:  # every kind of patch was both applied and refused
        assert outcomes[(patch_type, 2)] and outcomes[(patch_type, 4)], outcomes


@FUZZ
@given(collection=st.sampled_from(sorted(BASES)), patch_type=st.sampled_from(PATCH_TYPES),
       merge=patch_bodies, ops=json_patches, force=st.booleans(),
       sub=st.sampled_from(["", "/status"]))
def run_patches(server: Server, outcomes: Counter[tuple[str, int]], collection: str,
                patch_type: str, merge: dict[str, Any], ops: Any, force: bool,
                sub: str) -> None:
    before = ensure_base(server, collection)
    patch: Any = ops if patch_type == "application/json-patch+json" else merge
    if patch_type == "application/apply-patch+yaml":
        meta = merge.get("metadata")
        patch = {**merge, "apiVersion": before["apiVersion"], "kind": before["kind"],
                 "metadata": {**(meta if isinstance(meta, dict) else {}), "name": "base"}}
    path = f"{collection}/base{sub if collection not in DATA_KINDS else ''}"
    query = "?fieldManager=fuzz" + ("&force=true" if force else "") \
        if patch_type == "application/apply-patch+yaml" else ""
    code, answer = server.request("PATCH", path + query, patch, patch_type)
    check_answer(code, answer)
    outcomes[(patch_type, code // 100)] += 1
    got, after = server.request("GET", f"{collection}/base")
    assert got == 200, after
    if code >= 400:
        assert after == before  # a rejected patch changes nothing, not even the RV
    check_readable(server, collection)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(raw=st.binary(max_size=200), prefix=st.sampled_from([b"", b"k8s\x00", b"{", b"["]),
       content_type=st.sampled_from(["application/json", "application/yaml",
                                     "application/vnd.kubernetes.protobuf",
                                     "application/merge-patch+json",
                                     "application/apply-patch+yaml"]))
def test_fuzzed_raw_bodies(server: Server, raw: bytes, prefix: bytes, content_type: str) -> None:
    before = ensure_base(server, CONFIGMAPS)
    if content_type.endswith(("merge-patch+json", "apply-patch+yaml")):
        code, answer = server.request("PATCH", f"{CONFIGMAPS}/base?fieldManager=fuzz",
                                      prefix + raw, content_type)
    else:
        code, answer = server.request("POST", CONFIGMAPS, prefix + raw, content_type)
    check_answer(code, answer)
    if code >= 400:
        got, after = server.request("GET", f"{CONFIGMAPS}/base")
        assert (got, after) == (200, before)
    check_readable(server, CONFIGMAPS)


# --- YAML bodies: anchors, aliases, tags, merge keys, documents --------------------------------

_YAML_SCALARS = st.sampled_from([
    "a", "b", "x y", "0", "017", "0x1f", "1_000", "1e3", "-.5", ".nan", ".inf", "-.inf", "~",
    "null", "y", "n", "on", "off", "yes", "true", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
    "'quoted'", '"dq \\u00e9"', "!!int 5", "!!int x", "!!str 5", "!!float 1", "!!bool maybe",
    "!!binary aGk=", "!!binary '***'", "!!null ''", "!!timestamp 2001-12-14",
    "!!python/name:os.system", "!local tagged", "!!set {a, b}", "|\n  block\n",
    "99999999999999999999999", "-9223372036854775809"])


def _yaml_node(depth: int) -> st.SearchStrategy[str]:
    """A flow-style YAML node; anchors `&aN` and aliases `*aN` sprinkled in (an alias may
    name an anchor defined later, or never: go-yaml refuses those)."""
    anchor = st.sampled_from(["", "", "", "&a1 ", "&a2 ", "&a3 "])
    alias = st.sampled_from(["*a1", "*a2", "*a3", "*a9"])
    if depth <= 0:
        return st.one_of(_YAML_SCALARS, alias)
    child = _yaml_node(depth - 1)
    keys = st.one_of(st.sampled_from(["a", "b", "c", "1", "true", "~", "<<", "? [k]", "? {k: v}",
                                      "metadata", "data", "spec", "name"]), alias)
    seq = st.tuples(anchor, st.lists(child, max_size=4)).map(
        lambda t: t[0] + "[" + ", ".join(t[1]) + "]")
    mapping = st.tuples(anchor, st.lists(st.tuples(keys, child), max_size=4)).map(
        lambda t: t[0] + "{" + ", ".join(
            (k[2:] + ": " + v if k.startswith("? ") else f"{k}: {v}") for k, v in t[1]) + "}")
    return st.one_of(_YAML_SCALARS, alias, seq, mapping)


yaml_documents = st.tuples(
    st.sampled_from(["", "%YAML 1.1\n---\n", "---\n"]),
    st.sampled_from(["&a1 fuzz-name", "fuzzed", "*a1", "!!str 5"]),
    _yaml_node(3), _yaml_node(2),
    st.sampled_from(["", "\n---\nmetadata: {name: second}\n", "\n...\n", "\n--- *a1\n"]),
)


def test_fuzzed_yaml_bodies(server: Server) -> None:
    outcomes: Counter[tuple[str, int]] = Counter()
    run_yaml_bodies(server, outcomes)
    for target in ("create", "apply"):  # the generator reaches both answers
        assert outcomes[(target, 2)] and outcomes[(target, 4)], outcomes


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(doc=yaml_documents, target=st.sampled_from(["create", "apply-configmap",
                                                    "apply-deployment", "apply-gadget"]))
def run_yaml_bodies(server: Server, outcomes: Counter[tuple[str, int]],
                    doc: tuple[str, str, str, str, str], target: str) -> None:
    """Anchors, aliases (undefined, recursive, chained), tags, merge keys and several
    documents in application/yaml creates and apply patches: no 5xx, a Status for every
    refusal, nothing stored on refusal, the collection readable, and whatever is stored is
    a JSON object of bounded size (no alias expansion past the body limit)."""
    prefix, name, node, extra, tail = doc
    body = f"{prefix}metadata: {{name: {name}}}\ndata: {node}\nextra: {extra}{tail}".encode()
    if target == "create":
        code, answer = server.request("POST", CONFIGMAPS, body, "application/yaml")
        check_answer(code, answer)
        outcomes[("create", code // 100)] += 1
        if code < 300:
            assert len(json.dumps(answer)) < 3 * 1024 * 1024
            server.request("DELETE", f"{CONFIGMAPS}/{answer['metadata']['name']}")
        check_readable(server, CONFIGMAPS)
        return
    collection = {"apply-configmap": CONFIGMAPS, "apply-deployment": DEPLOYMENTS,
                  "apply-gadget": GADGETS}[target]
    before = ensure_base(server, collection)
    head = f"{prefix}apiVersion: {before['apiVersion']}\nkind: {before['kind']}\n"
    # the generated node goes where the kind takes one: a custom resource's preserved
    # `spec.free` takes anything, a ConfigMap's data only strings, a Deployment's labels
    # only label values (anything else in an apply configuration is an unknown field, which
    # apply refuses in every fieldValidation mode)
    if collection == DEPLOYMENTS:
        body_text = f"{head}metadata:\n  name: base\n  labels: {node}\n{tail}"
    elif collection == CONFIGMAPS:
        body_text = f"{head}metadata: {{name: base}}\ndata: {node}\n{tail}"
    else:
        body_text = f"{head}metadata: {{name: base}}\nspec:\n  free: {node}\n{tail}"
    patch = body_text.encode()
    code, answer = server.request("PATCH", f"{collection}/base?fieldManager=fuzz", patch,
                                  "application/apply-patch+yaml")
    check_answer(code, answer)
    outcomes[("apply", code // 100)] += 1
    got, after = server.request("GET", f"{collection}/base")
    assert got == 200, after
    if code >= 400:
        assert after == before
    check_readable(server, collection)
