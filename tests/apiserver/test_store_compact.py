"""Stored objects share their equal parts (storage/compact.py) without any value changing.

kube: none — this is the embedded server's own memory layout; what it must keep is the store's
invariant (a stored object is never changed after it is stored: reads, watch lines, lists
and snapshots see exactly what was written).
"""

from __future__ import annotations

import copy
import gc
import random
from typing import Any

import orjson

from asyncop.apiserver.storage.compact import EARLY, PROBE, WINDOW, Compactor
from asyncop.apiserver.storage.store import Store
from asyncop.clock import RealClock
from tests.apiserver.builtinkit import Kit

Obj = dict[str, Any]


def at(name: str, schedule: str = "2030-01-01T00:00:00Z") -> Obj:
    return {"apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
            "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}",
                         "resourceVersion": name},
            "spec": {"schedule": schedule, "command": "true"},
            "status": {"phase": "PENDING", "message": f"waiting until {schedule}",
                       "observedGeneration": 1}}


def test_equal_parts_become_one_instance_and_nothing_changes() -> None:
    c = Compactor()
    a, b = at("a"), at("b")
    text_a, text_b = orjson.dumps(a), orjson.dumps(b)
    c.share("ats", a)
    c.share("ats", b)
    assert orjson.dumps(a) == text_a and orjson.dumps(b) == text_b
    assert a["spec"] is b["spec"] and a["status"] is b["status"]
    assert a["metadata"]["namespace"] is b["metadata"]["namespace"]
    assert a["apiVersion"] is b["apiVersion"]
    assert a["metadata"] is not b["metadata"]  # unique: never merged


def test_values_of_different_types_are_never_merged() -> None:
    """1, 1.0, True and -0.0/0.0 compare equal in Python; their JSON differs."""
    c = Compactor()
    variants: list[Any] = [1, 1.0, True, 0.0, -0.0, 0, False, None, "1", [1], {"v": 1}]
    objs = [{"metadata": {"name": str(i)}, "spec": {"v": v, "list": [v]}}
            for i, v in enumerate(variants)]
    texts = [orjson.dumps(o) for o in objs]
    for o in objs:
        c.share("things", o)
    assert [orjson.dumps(o) for o in objs] == texts
    again = [{"metadata": {"name": f"again-{i}"}, "spec": {"v": v, "list": [v]}}
             for i, v in enumerate(copy.deepcopy(variants))]
    for o in again:
        c.share("things", o)
    for first, second in zip(objs, again, strict=True):
        assert orjson.dumps(first["spec"]) == orjson.dumps(second["spec"])
        assert first["spec"] is second["spec"]


def test_random_objects_keep_their_json() -> None:
    rng = random.Random(19)
    pool: list[Any] = ["a", "b", "", "x" * 70, 0, 1, -1, 2**63, 1.5, -0.0, True, False, None]

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 4 or roll < 0.5:
            return rng.choice(pool)
        if roll < 0.75:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice("pqrs"): value(depth + 1) for _ in range(rng.randrange(4))}

    c = Compactor()
    objs = [{"metadata": {"name": f"o{i}"}, "spec": value(0), "status": value(0)}
            for i in range(3000)]
    texts = [orjson.dumps(o) for o in objs]
    for o in objs:
        c.share("things", o)
    assert [orjson.dumps(o) for o in objs] == texts


def test_paths_of_unique_values_stop_sharing() -> None:
    c = Compactor()
    objs = [at(f"n{i}") for i in range(2 * WINDOW)]
    for o in objs:
        c.share("ats", o)
    meta = c._roots["ats"].children["metadata"]
    assert not meta.children["name"].on  # names never repeat: not looked up any more
    assert not meta.children["uid"].on
    assert meta.children["namespace"].on
    assert c._roots["ats"].children["spec"].on
    for i in range(2 * WINDOW, 20 * WINDOW):  # off: only short probes now and then
        c.share("ats", at(f"n{i}"))
    names = [s for s in c._strings if s.startswith("n") and s[1:].isdigit()]
    assert len(names) <= 2 * (WINDOW + 20 * PROBE)  # of 20k (name and resourceVersion)


def test_sweep_drops_values_nothing_holds_and_keeps_the_rest() -> None:
    c = Compactor()
    kept = [at(f"k{i}", schedule="2030-01-01T00:00:00Z") for i in range(10)]
    gone = [at(f"g{i}", schedule=f"2031-01-01T00:00:{i % 60:02d}Z") for i in range(500)]
    for o in kept + gone:
        c.share("ats", o)
    spec = kept[0]["spec"]
    del gone, o
    gc.collect()
    c.sweep()
    assert [v for v in c._shapes.values() if "command" in v] == [spec]
    assert c.entries < 40
    newcomer = at("new", schedule="2030-01-01T00:00:00Z")
    c.share("ats", newcomer)
    assert newcomer["spec"] is spec  # the survivor is still the canonical value


def test_stored_objects_share_parts_and_reads_are_unchanged() -> None:
    kit = Kit(allocator=False)
    labels = {"app": "web", "tier": "front"}
    for i in range(50):
        kit.create("configmaps", {"metadata": {"name": f"cm-{i}", "labels": labels},
                                  "data": {"mode": "fast", "index": str(i)}})
    first = kit.store.raw_get(("", "configmaps"), "default", "cm-0")
    last = kit.store.raw_get(("", "configmaps"), "default", "cm-49")
    assert first is not None and last is not None
    assert first["metadata"]["labels"] is last["metadata"]["labels"]
    assert first["data"]["mode"] is last["data"]["mode"]
    assert last["data"] == {"mode": "fast", "index": "49"}
    # an update builds a new object: the other objects, sharing its old parts, are untouched
    body = copy.deepcopy(first)
    body["metadata"]["labels"] = {"app": "web", "tier": "back"}
    kit.update("configmaps", body)
    assert kit.store.raw_get(("", "configmaps"), "default", "cm-1")["metadata"]["labels"] == \
        labels  # type: ignore[index]


def test_store_keeps_namespaces_apart_and_lists_in_order() -> None:
    store = Store(clock=RealClock(), seed=1)
    kit = Kit(allocator=False)
    kit.store = store
    for ns in ["b", "a", "c"]:
        kit.create("namespaces", {"metadata": {"name": ns}})
        for name in ["z", "x", "y"]:
            kit.create("configmaps", {"metadata": {"name": name}}, namespace=ns)
    gr = ("", "configmaps")
    listed = [(o["metadata"]["namespace"], o["metadata"]["name"])
              for o in store.raw_items(gr)]
    assert listed == sorted(listed)
    assert [o["metadata"]["name"] for o in store.raw_items(gr, "a")] == ["x", "y", "z"]
    assert store.count(gr) == 9 and store.count(gr, "c") == 3 and store.count(gr, "q") == 0
    store.writer.delete(kit.rt("configmaps"), "c", "x", grace_period_seconds=0)
    assert store.count(gr, "c") == 2 and store.raw_get(gr, "c", "x") is None
    for name in ["y", "z"]:
        store.writer.delete(kit.rt("configmaps"), "c", name, grace_period_seconds=0)
    assert store.raw_items(gr, "c") == [] and "c" not in store._objects[gr]


def container(i: int) -> Obj:
    return {"name": "app", "image": "registry.example.com/app:1.2.3",
            "imagePullPolicy": "IfNotPresent", "args": ["--port", "8080"],
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m"}},
            "terminationMessagePath": "/dev/termination-log",
            "env": [{"name": "INDEX", "value": f"value-{i}"}]}


def test_a_dict_whose_other_children_repeat_shares_them_as_one_group() -> None:
    """Containers that differ only in env values: once env stops being shared (unique), the
    container's other fields are found as one group and become the canonical instances;
    env stays each container's own, and no value changes."""
    c = Compactor()
    objs = [{"metadata": {"name": f"p{i}"}, "spec": {"containers": [container(i)]}}
            for i in range(3 * WINDOW)]
    texts = [orjson.dumps(o) for o in objs]
    for o in objs:
        c.share("pods", o)
    assert [orjson.dumps(o) for o in objs] == texts
    items = c._roots["pods"].children["spec"].children["containers"].children["[]"]
    assert not items.children["env"].on and items.group is not None and items.group.on
    assert c._groups  # the group of a container's fields but env is known
    last, before = objs[-1]["spec"]["containers"][0], objs[-2]["spec"]["containers"][0]
    for key in ("ports", "resources", "args", "image"):
        assert last[key] is before[key]
    assert last["env"] is not before["env"] and last["env"][0]["value"] == \
        f"value-{3 * WINDOW - 1}"
    c.sweep()
    assert not c._groups  # a sweep forgets groups (they may hold what nothing else does)


def test_a_path_with_no_repeat_stops_after_the_early_window() -> None:
    """A path none of whose first `EARLY` values repeated stops looking them up then."""
    c = Compactor()
    for i in range(EARLY + 1):
        c.share("ats", at(f"n{i}"))
    meta = c._roots["ats"].children["metadata"]
    assert not meta.children["name"].on and not meta.children["uid"].on
    assert meta.children["namespace"].on  # repeats: decides after a whole window
