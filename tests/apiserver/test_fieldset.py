"""Field sets: FieldsV1 round trips, and the fast diff agrees with a leaf-by-leaf comparison."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from asyncop.apiserver.merge import fieldset
from asyncop.apiserver.merge.fieldset import MISSING, Path
from asyncop.apiserver.merge.mergeschema import schema_for

POD = schema_for("Pod")


def pod(**overrides: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u", "resourceVersion": "3",
                     "labels": {"app": "web"}, "finalizers": ["a", "b"]},
        "spec": {
            "containers": [
                {"name": "main", "image": "nginx", "args": ["-x"],
                 "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                 "ports": [{"containerPort": 80}]},
                {"name": "side", "image": "busybox"},
            ],
            "tolerations": [{"key": "k"}],
            "nodeSelector": {},
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    obj.update(overrides)
    return obj


def test_leaves_paths_and_tree_round_trip() -> None:
    leaves = fieldset.leaves(pod(), POD)
    assert ("f:metadata", "f:name") not in leaves
    assert leaves[("f:metadata", "f:labels", "f:app")] == "web"
    assert ("f:metadata", "f:finalizers", 'v:"a"') in leaves
    main = ("f:spec", "f:containers", 'k:{"name":"main"}')
    assert leaves[(*main, "f:args")] == ["-x"]  # atomic list
    assert (*main, "f:env", 'k:{"name":"B"}', "f:value") in leaves
    assert leaves[("f:spec", "f:nodeSelector")] == {}
    tree = fieldset.tree_of(leaves)
    assert tree["f:spec"]["f:containers"]['k:{"name":"side"}'] == {
        ".": {}, "f:image": {}, "f:name": {}}
    assert fieldset.paths_of(tree) == set(leaves)
    assert list(tree) == sorted(tree)


def test_readable_paths() -> None:
    path: Path = ("f:spec", "f:containers", 'k:{"name":"main"}', "f:image")
    assert fieldset.readable(path) == '.spec.containers[name="main"].image'
    assert fieldset.readable(("f:metadata", "f:finalizers", 'v:"a"')) == (
        '.metadata.finalizers[="a"]')


def _mutate(obj: dict[str, Any], rng: random.Random, *, last: bool) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    containers = new["spec"]["containers"]
    choice = rng.randrange(12 if last else 9)
    if choice == 0:
        containers[0]["image"] = f"nginx:{rng.randrange(5)}"
    elif choice == 1:
        containers[0]["env"].pop(rng.randrange(len(containers[0]["env"])))
    elif choice == 2:
        containers.append({"name": f"c{rng.randrange(99)}", "image": "x"})
    elif choice == 3 and len(containers) > 1:
        containers.pop()
    elif choice == 4:
        new["metadata"]["finalizers"] = ["b", "c"]
    elif choice == 5:
        new["metadata"]["labels"] = {}
    elif choice == 6:
        new["spec"]["nodeSelector"] = {"disk": "ssd"}
    elif choice == 7:
        new["spec"]["tolerations"].append({"key": "z"})
    elif choice == 8:
        new["metadata"]["resourceVersion"] = "99"  # not owned: no change at all
    elif choice == 9:
        new["status"] = {"phase": "Failed"}
    elif choice == 10:
        del new["spec"]
    else:
        new["spec"]["containers"] = "not-a-list"
    return new


@pytest.mark.parametrize("seed", range(40))
def test_diff_matches_a_leaf_by_leaf_comparison(seed: int) -> None:
    rng = random.Random(seed)
    old = pod()
    for _ in range(3):
        old = _mutate(old, rng, last=False)
    new = _mutate(old, rng, last=True)
    old_leaves = fieldset.leaves(old, POD)
    new_leaves = fieldset.leaves(new, POD)
    changed, removed = fieldset.diff(old, new, POD)
    expected = {p: v for p, v in new_leaves.items()
                if not fieldset.equal(old_leaves.get(p, MISSING), v)}
    assert set(changed) == set(expected)
    gone = set(old_leaves) - set(new_leaves)
    assert all(any(p[: len(r)] == r for r in removed) for p in gone)
    # whatever survives under a removed root is re-added as changed
    assert all(p in changed for r in removed for p in new_leaves if p[: len(r)] == r)


def test_remove_path_prunes_emptied_containers() -> None:
    obj = pod()
    fieldset.remove_path(obj, ("f:metadata", "f:labels", "f:app"), POD)
    assert "labels" not in obj["metadata"]
    fieldset.remove_path(obj, ("f:spec", "f:containers", 'k:{"name":"side"}'), POD)
    fieldset.remove_path(obj, ("f:metadata", "f:finalizers", 'v:"a"'), POD)
    fieldset.remove_path(obj, ("f:spec", "f:missing", "f:x"), POD)
    port = ("f:spec", "f:containers", 'k:{"name":"main"}', "f:ports",
            'k:{"containerPort":80,"protocol":"TCP"}')
    fieldset.remove_path(obj, port, POD)
    assert "ports" not in obj["spec"]["containers"][0]
    assert [c["name"] for c in obj["spec"]["containers"]] == ["main"]
    assert obj["metadata"]["finalizers"] == ["b"]
