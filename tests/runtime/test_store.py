"""Store: keyed by namespace/name, built-in and custom indexes kept in step with every write."""

from __future__ import annotations

import pytest

from asyncop.api import RawObject
from asyncop.runtime.store import Store


def obj(name: str, ns: str | None = "default", *, rv: str = "1", owners: tuple[str, ...] = (),
        labels: dict[str, str] | None = None) -> RawObject:
    meta: dict[str, object] = {"name": name, "resourceVersion": rv}
    if ns:
        meta["namespace"] = ns
    if owners:
        meta["ownerReferences"] = [{"uid": u, "name": "o", "kind": "K", "apiVersion": "v1"}
                                   for u in owners]
    if labels:
        meta["labels"] = labels
    return {"metadata": meta}  # type: ignore[typeddict-item]


def names(objs: list[RawObject]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_get_list_keys_and_cluster_scoped_keys() -> None:
    s = Store()
    s.add(obj("a"))
    s.add(obj("b", "other"))
    s.add(obj("node", None))
    assert sorted(s.keys()) == ["default/a", "node", "other/b"]
    assert s.get("default/a") is not None
    assert s.get("node")["metadata"]["name"] == "node"  # type: ignore[index]
    assert s.get("a") is None
    assert len(s) == 3 and "other/b" in s
    assert names(s.list()) == ["a", "b", "node"]


def test_returns_the_cached_dict_itself() -> None:
    s = Store()
    o = obj("a")
    s.add(o)
    assert s.get("default/a") is o
    assert s.by_index("namespace", "default")[0] is o


def test_namespace_and_owner_indexes_follow_updates_and_deletes() -> None:
    s = Store()
    s.add(obj("a", owners=("u1",)))
    s.add(obj("b", owners=("u1", "u2")))
    s.add(obj("c", "kube-system"))
    assert names(s.by_index("namespace", "default")) == ["a", "b"]
    assert names(s.by_index("owner_uid", "u1")) == ["a", "b"]
    assert names(s.by_index("owner_uid", "u2")) == ["b"]
    # an update moves b off u1 (old index values are removed)
    old = s.update(obj("b", rv="2", owners=("u2",)))
    assert old is not None and old["metadata"]["resourceVersion"] == "1"
    assert names(s.by_index("owner_uid", "u1")) == ["a"]
    assert names(s.by_index("owner_uid", "u2")) == ["b"]
    assert s.delete("default/a") is not None
    assert s.by_index("owner_uid", "u1") == []
    assert s.delete(obj("b")) is not None
    assert s.by_index("namespace", "default") == []
    assert s.delete("default/zzz") is None
    assert s.keys_by_index("namespace", "kube-system") == ["kube-system/c"]
    with pytest.raises(KeyError):
        s.by_index("nope", "x")


def test_custom_indexers_and_late_indexer() -> None:
    s = Store(indexers={"app": lambda o: [o["metadata"].get("labels", {}).get("app", "")]})
    s.add(obj("a", labels={"app": "web"}))
    s.add(obj("b", labels={"app": "db"}))
    assert names(s.by_index("app", "web")) == ["a"]
    s.add_indexer("first-letter", lambda o: [o["metadata"]["name"][0]])
    assert names(s.by_index("first-letter", "b")) == ["b"]
    s.add(obj("bb"))
    assert names(s.by_index("first-letter", "b")) == ["b", "bb"]
    with pytest.raises(ValueError):
        s.add_indexer("app", lambda o: [])


def test_replace_resets_contents_and_indexes() -> None:
    s = Store()
    s.add(obj("a", owners=("u1",)))
    s.add(obj("b"))
    s.replace([obj("c", owners=("u9",))])
    assert s.keys() == ["default/c"]
    assert s.by_index("owner_uid", "u1") == []
    assert names(s.by_index("owner_uid", "u9")) == ["c"]
    assert names(s.by_index("namespace", "default")) == ["c"]
