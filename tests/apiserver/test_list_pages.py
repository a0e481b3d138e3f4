"""Paginated LIST: every object once, in order, with kube's remainingItemCount.

kube: k8s.io/apiserver storage (etcd3 store GetList) — with `limit`, a page holds at most
`limit` items and, when more remain, a `continue` token and `remainingItemCount`, the number
of items after this page; the last page has neither.
"""

from __future__ import annotations

import aiohttp

from asyncop.apiserver import ApiServer
from tests.apiserver.httpkit import call

CM = "/api/v1/namespaces/default/configmaps"


async def test_pages_hold_every_object_once_with_the_count_remaining(
        apiserver_no_sim: ApiServer) -> None:
    store = apiserver_no_sim.store
    rt = store.resolve("", "v1", "configmaps")
    names = sorted(f"cm-{i:04d}" for i in range(1201))
    for name in names:
        store.writer.create(rt, {"metadata": {"name": name}}, namespace="default")
    seen: list[str] = []
    remaining: list[int | None] = []
    token = ""
    async with aiohttp.ClientSession() as http:
        for _ in range(10):
            url = apiserver_no_sim.url + CM + "?limit=500" + (f"&continue={token}" if token else "")
            code, body = await call(http, "GET", url)
            assert code == 200
            seen += [item["metadata"]["name"] for item in body["items"]]
            remaining.append(body["metadata"].get("remainingItemCount"))
            token = body["metadata"].get("continue") or ""
            if not token:
                break
    assert seen == names
    assert remaining == [701, 201, None]
