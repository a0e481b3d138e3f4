"""Wire answers the adversarial review found different from kube's (each pinned to kube).

- a JSON patch of more than 10,000 operations: 413 RequestEntityTooLarge, `The allowed
  maximum operations in a JSON patch is 10000, got N` (kube: handlers/patch.go,
  NewRequestEntityTooLargeError) — we answered 422;
- `fieldManager` over 128 bytes or with a non-printable character: 422 on the request's
  options (kube: ValidateFieldManager in CreateOptions/UpdateOptions/PatchOptions
  validation), on create, update, patch and apply alike — apply accepted a 200-byte manager,
  the others answered 400;
- `resourceVersion=abc` on a GET is refused as on a LIST (a GET accepted it).
"""

from __future__ import annotations

import aiohttp
import orjson

from asyncop.apiserver import ApiServer
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call

CM = "/api/v1/namespaces/default/configmaps"
http = httpkit.http


async def test_a_json_patch_over_10000_operations_is_413(apiserver_no_sim: ApiServer,
                                                         http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    code, _ = await call(http, "POST", url, json={"metadata": {"name": "p"}})
    assert code == 201
    ops = [{"op": "add", "path": f"/metadata/labels/k{i}", "value": "v"} for i in range(10_001)]
    async with http.patch(url + "/p", data=orjson.dumps(ops),
                          headers={"Content-Type": "application/json-patch+json"}) as r:
        body = await r.json()
    assert (r.status, body["reason"], body["message"]) == (
        413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum "
        "operations in a JSON patch is 10000, got 10001")


async def test_field_manager_limits_on_every_write(apiserver_no_sim: ApiServer,
                                                   http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    long = "m" * 129
    too_long = "fieldManager: Too long: may not be more than 128 bytes"
    code, body = await call(http, "POST", url + f"?fieldManager={long}",
                            json={"metadata": {"name": "f"}})
    assert (code, body["message"]) == (422, f'CreateOptions.meta.k8s.io "" is invalid: '
                                            f"{too_long}")
    code, _ = await call(http, "POST", url, json={"metadata": {"name": "f"}})
    assert code == 201
    code, body = await call(http, "PUT", url + f"/f?fieldManager={long}",
                            json={"metadata": {"name": "f"}})
    assert (code, body["message"]) == (422, f'UpdateOptions.meta.k8s.io "" is invalid: '
                                            f"{too_long}")
    async with http.patch(url + f"/f?fieldManager={long}", data=b"{}",
                          headers={"Content-Type": "application/merge-patch+json"}) as r:
        body = await r.json()
    assert (r.status, body["message"]) == (422, f'PatchOptions.meta.k8s.io "" is invalid: '
                                                f"{too_long}")
    apply = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\n"
    async with http.patch(url + f"/f?fieldManager={'a' * 200}", data=apply,
                          headers={"Content-Type": "application/apply-patch+yaml"}) as r:
        body = await r.json()
    assert (r.status, body["message"]) == (422, 'PatchOptions.meta.k8s.io "" is invalid: '
                                                "fieldManager: Too long: may not be more than "
                                                "128 bytes")
    async with http.patch(url + "/f?fieldManager=a%07b", data=apply,
                          headers={"Content-Type": "application/apply-patch+yaml"}) as r:
        body = await r.json()
    assert (r.status, body["message"]) == (422, 'PatchOptions.meta.k8s.io "" is invalid: '
                                                'fieldManager: Invalid value: "a\\ab": invalid '
                                                "character U+0007 (at position 1)")
    code, _ = await call(http, "PATCH", url + f"/f?fieldManager={'a' * 128}",
                         data=apply, headers={"Content-Type": "application/apply-patch+yaml"})
    assert code == 200  # exactly 128 bytes is fine


async def test_a_get_refuses_a_resource_version_that_is_not_a_number(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    code, _ = await call(http, "POST", url, json={"metadata": {"name": "g"}})
    assert code == 201
    code, listed = await call(http, "GET", url + "?resourceVersion=abc")
    code_get, got = await call(http, "GET", url + "/g?resourceVersion=abc")
    assert (code_get, got["message"]) == (code, listed["message"]) == (
        400, 'invalid resource version "abc"')
    code, _ = await call(http, "GET", url + "/g?resourceVersion=0")
    assert code == 200
