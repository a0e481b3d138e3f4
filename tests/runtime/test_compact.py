"""Compact cached objects (runtime/compact.py) and the informer's default transform.

`share` is lossless (equal value, same JSON types, same key order), shares equal subtrees and
interns short strings; the informer shares with an object's previous version and with the
object stored before it; `compact=False` stores what it received.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from asyncop.api import Kind, deep_copy
from asyncop.runtime.compact import Compactor
from asyncop.runtime.informer import Informer
from asyncop.testing import FakeClock

KIND = Kind("", "v1", "pods", "Pod")


def share(new: Any, old: Any) -> Any:
    return Compactor().share(new, old)


def pod(name: str, *, env: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    text = orjson.dumps({
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                     "resourceVersion": "1", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                 "env": env or [{"name": "A", "value": "1"},
                                                {"name": "B", "value": "2"}],
                                 "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
                 "tolerations": [{"key": "k", "operator": "Exists"}], **extra}})
    fresh: dict[str, Any] = orjson.loads(text)  # a freshly parsed object, as from the wire
    return fresh


def test_equal_subtrees_are_shared_and_the_result_is_unchanged() -> None:
    a = share(pod("a"), None)
    b_text = orjson.dumps(pod("b"))
    b = share(pod("b"), a)
    assert orjson.dumps(b) == b_text  # lossless, key order included
    assert b["spec"]["tolerations"] is a["spec"]["tolerations"]
    assert b["spec"]["containers"] is a["spec"]["containers"]
    assert b["metadata"]["labels"] is a["metadata"]["labels"]
    assert b["metadata"] is not a["metadata"]


def test_parts_of_a_changed_list_are_shared_item_by_item() -> None:
    a = share(pod("a"), None)
    b = share(pod("b", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "other"}]), a)
    env_a, env_b = a["spec"]["containers"][0]["env"], b["spec"]["containers"][0]["env"]
    assert env_b is not env_a and env_b[0] is env_a[0] and env_b[1] is not env_a[1]
    assert env_b[1]["value"] == "other"
    assert b["spec"]["containers"][0]["ports"] is a["spec"]["containers"][0]["ports"]


def test_json_types_are_kept_where_python_equality_would_mix_them() -> None:
    # 1 == True and 1 == 1.0 in Python; the cache must still return what the server sent
    a = share({"spec": {"x": {"v": True}, "y": [1.0]}}, None)
    b = share({"spec": {"x": {"v": 1}, "y": [1]}}, a)
    assert type(b["spec"]["x"]["v"]) is int and type(b["spec"]["y"][0]) is int
    assert b["spec"]["x"] is not a["spec"]["x"]


def test_short_strings_are_interned_unique_versions_are_not() -> None:
    a = share(pod("a"), None)
    b = share(pod("b", nodeName="node-7"), None)  # no exemplar: interning alone
    assert a["spec"]["containers"][0]["image"] is b["spec"]["containers"][0]["image"]
    c = share(pod("c", nodeName="node-7"), a)
    assert c["spec"]["nodeName"] is b["spec"]["nodeName"]
    text = orjson.dumps({"metadata": {"uid": "u-1", "annotations": {"k": "x" * 200}}})
    d1, d2 = share(orjson.loads(text), None), share(orjson.loads(text), None)
    assert d1["metadata"]["annotations"]["k"] is not d2["metadata"]["annotations"]["k"]
    assert d1["metadata"]["uid"] is not d2["metadata"]["uid"]  # unique per object


def test_an_equal_object_is_the_old_one() -> None:
    a = share(pod("a"), None)
    assert share(pod("a"), a) is a


class OneList:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    async def list(self, kind: Kind, **_: Any) -> dict[str, Any]:
        return {"items": [deep_copy(i) for i in self.items],  # type: ignore[arg-type]
                "metadata": {"resourceVersion": "5"}}

    async def watch(self, kind: Kind, **_: Any) -> Any:
        await asyncio.Event().wait()
        yield {}


async def synced(compact: bool) -> Informer:
    clock = FakeClock()
    managed = {"managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]}
    items = [pod(f"p{i}") for i in range(3)]
    for item in items:
        item["metadata"].update(deep_copy(managed))  # type: ignore[arg-type]
    inf = Informer(OneList(items), KIND, clock=clock, watch_list=False,  # type: ignore[arg-type]
                   compact=compact)
    task = asyncio.create_task(inf.run())
    await inf.wait_for_sync()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return inf


async def test_informer_objects_of_one_template_share_their_spec() -> None:
    inf = await synced(compact=True)
    p0, p1, p2 = (inf.store.get(f"default/p{i}") for i in range(3))
    assert p0 is not None and p1 is not None and p2 is not None
    assert p0["spec"] is p1["spec"] is p2["spec"]
    assert "managedFields" not in p1["metadata"]  # the default transform
    # a reconciler's copy is its own: changing it changes no cached object
    mine = deep_copy(p1)
    mine["spec"]["containers"][0]["image"] = "changed"
    assert p0["spec"]["containers"][0]["image"] == "nginx:1.27"


async def test_compact_off_keeps_objects_apart() -> None:
    inf = await synced(compact=False)
    p0, p1 = inf.store.get("default/p0"), inf.store.get("default/p1")
    assert p0 is not None and p1 is not None
    assert p0["spec"] == p1["spec"] and p0["spec"] is not p1["spec"]


def test_label_maps_are_stored_once_per_content_in_key_order() -> None:
    compactor = Compactor()
    a = compactor.share(pod("a"), None)
    apart = compactor.share(orjson.loads(b'{"metadata": {"labels": {"x": "y"}}}'), a)
    b = compactor.share(pod("b"), apart)  # its exemplar has other labels: the table has them
    assert b["metadata"]["labels"] is a["metadata"]["labels"]
    swapped = compactor.share(orjson.loads(b'{"metadata": {"labels": {"y": "1", "x": "2"}}}'),
                              None)
    other = compactor.share(orjson.loads(b'{"metadata": {"labels": {"x": "2", "y": "1"}}}'),
                            None)
    assert list(swapped["metadata"]["labels"]) == ["y", "x"]  # order kept: not the same map
    assert list(other["metadata"]["labels"]) == ["x", "y"]
    mixed = compactor.share(orjson.loads(b'{"spec": {"selector": {"replicas": 1}}}'), None)
    assert mixed["spec"]["selector"] == {"replicas": 1}  # not a label map: shared as usual
