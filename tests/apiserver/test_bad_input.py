"""Bad input gets kube's Status answer and leaves the server as it was: bodies over 3 MiB
(413), JSON and YAML nested beyond bodylimits.MAX_DEPTH (also when a JSON patch builds the
nesting), malformed protobuf and non-JSON bodies."""

from __future__ import annotations

import aiohttp

from asyncop.apiserver import ApiServer, bodylimits
from asyncop.apiserver.http import TABLE_CT
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call

CM = "/api/v1/namespaces/default/configmaps"
http = httpkit.http
JSON = {"Content-Type": "application/json"}


async def _post(http: aiohttp.ClientSession, url: str, data: bytes,
                headers: dict[str, str]) -> tuple[int, dict[str, object]]:
    async with http.post(url, data=data, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def test_bad_bodies_get_a_status_and_change_nothing(apiserver_no_sim: ApiServer,
                                                          http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    big = b'{"metadata":{"name":"big"},"data":{"a":"' + b"x" * (4 * 1024 * 1024) + b'"}}'
    code, body = await _post(http, url, big, JSON)
    assert (code, body["reason"], body["message"]) == (
        413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
    deep = b'{"metadata":{"name":"deep"},"data":' + b'{"a":' * 5000 + b"1" + b"}" * 5001
    code, body = await _post(http, url, deep, JSON)
    assert code == 400 and body["reason"] == "BadRequest"
    code, body = await _post(http, url, b"[" * 100_000 + b"]" * 100_000, JSON)
    assert code == 400 and body["kind"] == "Status"
    code, body = await _post(http, url, b"{not json", JSON)
    assert code == 400 and body["kind"] == "Status"
    code, body = await _post(http, url, b"k8s\x00\x01\x02garbage",
                             {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert code == 415 and body["reason"] == "UnsupportedMediaType"
    code, listed = await call(http, "GET", url)
    assert code == 200 and listed["items"] == []  # nothing was stored
    code, _ = await call(http, "POST", url, json={"metadata": {"name": "fine"}})
    assert code == 201  # and the server still works


def _nested(depth: int) -> bytes:
    """A ConfigMap whose annotation-free `data.a` holds `depth - 2` nested arrays, so the
    whole body is `depth` levels deep."""
    inner = depth - 2
    return (b'{"metadata":{"name":"x"},"data":{"a":' + b"[" * inner + b"]" * inner + b"}}")


async def test_nesting_beyond_the_limit_is_a_400_and_stores_nothing(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    """Regression: a body 255..1024 levels deep used to be stored, after which every GET and
    LIST of it answered 500 ("Recursion limit reached" from the serializer) for ever."""
    url = apiserver_no_sim.url + CM
    code, created = await call(http, "POST", url, json={"metadata": {"name": "x"}})
    assert code == 201
    rv = created["metadata"]["resourceVersion"]
    too_deep = (bodylimits.MAX_DEPTH + 1, 260, 900, 1024)
    for depth in too_deep:
        code, body = await _post(http, url, _nested(depth).replace(b'"x"', b'"y"'), JSON)
        assert (code, body["reason"], body["message"]) == (400, "BadRequest",
                                                           bodylimits.JSON_TOO_DEEP), depth
        async with http.put(f"{url}/x", data=_nested(depth), headers=JSON) as r:
            assert r.status == 400, depth
    for ct in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        patch = b'{"data":{"a":' + b"[" * 300 + b"]" * 300 + b"}}"
        async with http.patch(f"{url}/x", data=patch, headers={"Content-Type": ct}) as r:
            assert r.status == 400, ct
    code, got = await call(http, "GET", f"{url}/x")
    assert code == 200 and got["metadata"]["resourceVersion"] == rv and "data" not in got
    code, listed = await call(http, "GET", url)
    assert code == 200 and [i["metadata"]["name"] for i in listed["items"]] == ["x"]


async def test_nesting_at_the_limit_is_stored_and_served(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    code, _ = await _post(http, url, _nested(bodylimits.MAX_DEPTH), JSON)
    assert code == 201
    code, got = await call(http, "GET", f"{url}/x")
    assert code == 200 and bodylimits.depth(got) == bodylimits.MAX_DEPTH
    code, table = await call(http, "GET", url, headers={"Accept": TABLE_CT})
    assert code == 200 and len(table["rows"]) == 1
    code, listed = await call(http, "GET", url)
    assert code == 200 and len(listed["items"]) == 1


async def test_json_patch_cannot_nest_an_object_past_the_limit(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    """copy/move ops deepen an object without a deep body: the patched result is checked."""
    url = apiserver_no_sim.url + CM
    code, _ = await _post(http, url, _nested(bodylimits.MAX_DEPTH - 4), JSON)
    assert code == 201
    ops = b'[{"op":"copy","from":"/data","path":"/data/b"}]'
    headers = {"Content-Type": "application/json-patch+json"}
    statuses = []
    for _ in range(8):
        async with http.patch(f"{url}/x", data=ops, headers=headers) as r:
            statuses.append(r.status)
            body = await r.json()
        if r.status != 200:
            assert body["message"] == bodylimits.JSON_TOO_DEEP
            break
    assert statuses[0] == 200 and statuses[-1] == 400, statuses
    code, got = await call(http, "GET", f"{url}/x")
    assert code == 200 and bodylimits.depth(got) <= bodylimits.MAX_DEPTH


async def test_deep_yaml_is_a_400_not_a_recursion_error(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    """Regression: 10,000 levels of YAML flow `[` (not valid JSON, so PyYAML composed it)
    raised RecursionError: a 500, and minutes of event loop spent logging the traceback."""
    url = apiserver_no_sim.url + CM
    yaml_ct = {"Content-Type": "application/yaml"}
    bodies = [b"[" * 10_000 + b"]" * 10_000 + b" #",  # flow style, not JSON
              b"a: " + b"{b: " * 10_000,
              b"a:\n" + b"".join(b"  " * i + b"- \n" for i in range(200)),  # block style
              b"metadata: {name: deep}\ndata: " + b"[" * 200 + b"]" * 200]
    for body in bodies:
        code, status = await _post(http, url, body, yaml_ct)
        message = status["message"]  # libyaml's own flow-level limit (1000) may come first
        assert code == 400 and message.startswith("error decoding YAML: "), status
        assert (f"max depth of {bodylimits.MAX_DEPTH}" in message
                or "maximum nesting depth" in message), message
    apply = {"Content-Type": "application/apply-patch+yaml"}
    async with http.patch(f"{url}/deep?fieldManager=t", data=bodies[0], headers=apply) as r:
        assert r.status == 400
    code, ok = await _post(http, url, b"metadata: {name: shallow}\ndata: {a: b}\n", yaml_ct)
    assert code == 201, ok
    code, listed = await call(http, "GET", url)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["shallow"]


def test_depth_is_counted_without_recursion() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    assert bodylimits.depth(value) == bodylimits.MAX_DEPTH + 1  # stops early
    assert bodylimits.depth(value, limit=10**6) == 100_001
    assert bodylimits.depth({"a": [1, {"b": {}}], "c": 2}) == 4
    assert bodylimits.depth("scalar") == 0
