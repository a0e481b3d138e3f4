"""Bad input gets kube's Status answer and leaves the server as it was: bodies over 3 MiB
(413), JSON nested beyond the parser's depth, malformed protobuf and non-JSON bodies."""

from __future__ import annotations

import aiohttp

from asyncop.apiserver import ApiServer
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
