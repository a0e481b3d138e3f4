"""POST pods/NAME/binding: the scheduler's way of assigning a pod to a node.

The rules are `builtin/binding.py` (kube's BindingREST); the write is `Store.bind`, one
commit below the pod update rules, so `metadata.generation` does not move. The answer is
kube's: 201 with a Status of Success. Invariant: nothing is committed on a dry run or when
a rule refuses the Binding.
"""

from __future__ import annotations

from aiohttp import web

from asyncop.apiserver.builtin.binding import success
from asyncop.apiserver.http.wire import Target, dry_run, json_response, read_body
from asyncop.apiserver.storage.store import Store


async def create(store: Store, request: web.Request, t: Target) -> web.Response:
    assert t.name is not None
    body = await read_body(request)
    await store.bind(t.rt, t.namespace or "", t.name, body, dry_run=dry_run(request))
    return json_response(success(), status=201)
