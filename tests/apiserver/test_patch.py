"""JSON patch (RFC 6902), merge patch (RFC 7386) and strategic merge patch."""

from __future__ import annotations

import contextlib
import copy
import random
from typing import Any

import pytest

from asyncop.apiserver.merge.apply import ApplyConflict, record_update, server_side_apply
from asyncop.apiserver.merge.patch import PatchError, json_patch, merge_patch, strategic_merge_patch

# ------------------------------------------------------------------ RFC 6902


def test_json_patch_rfc_examples() -> None:
    doc = {"foo": "bar", "baz": ["a", "c"]}
    out = json_patch(doc, [
        {"op": "add", "path": "/qux", "value": 1},
        {"op": "add", "path": "/baz/1", "value": "b"},
        {"op": "add", "path": "/baz/-", "value": "d"},
        {"op": "replace", "path": "/foo", "value": "BAR"},
        {"op": "test", "path": "/baz", "value": ["a", "b", "c", "d"]},
        {"op": "move", "from": "/qux", "path": "/moved"},
        {"op": "copy", "from": "/baz/0", "path": "/first"},
        {"op": "remove", "path": "/baz/3"},
    ])
    assert out == {"foo": "BAR", "baz": ["a", "b", "c"], "moved": 1, "first": "a"}
    assert doc == {"foo": "bar", "baz": ["a", "c"]}


def test_json_patch_pointer_escapes() -> None:
    doc = {"metadata": {"labels": {"app.kubernetes.io/name": "x", "a~b": "y"}}}
    out = json_patch(doc, [
        {"op": "replace", "path": "/metadata/labels/app.kubernetes.io~1name", "value": "z"},
        {"op": "remove", "path": "/metadata/labels/a~0b"},
    ])
    assert out == {"metadata": {"labels": {"app.kubernetes.io/name": "z"}}}


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "remove", "path": "/missing"}],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "test", "path": "/a", "value": 2}],
        [{"op": "test", "path": "/a", "value": True}],
        [{"op": "add", "path": "/list/5", "value": 1}],
        [{"op": "add", "path": "/list/01", "value": 1}],
        [{"op": "add", "path": "no-slash", "value": 1}],
        [{"op": "move", "from": "/m", "path": "/m/x"}],
        [{"op": "frobnicate", "path": "/a"}],
        [{"op": "add", "path": "/a"}],
        [{"op": "add", "path": "", "value": [1]}],
    ],
)
def test_json_patch_errors(ops: list[Any]) -> None:
    with pytest.raises(PatchError):
        json_patch({"a": 1, "list": [1], "m": {}}, ops)


def test_json_patch_body_must_be_a_list() -> None:
    with pytest.raises(PatchError, match="cannot unmarshal object"):
        json_patch({}, {"op": "add"})  # type: ignore[arg-type]


def test_json_patch_failed_op_leaves_input_untouched() -> None:
    doc = {"a": {"b": 1}}
    with pytest.raises(PatchError):
        json_patch(doc, [{"op": "remove", "path": "/a/b"}, {"op": "remove", "path": "/zz"}])
    assert doc == {"a": {"b": 1}}


# ------------------------------------------------------------------ RFC 7386


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_rfc7386_examples(
    target: dict[str, Any], patch: dict[str, Any], result: dict[str, Any]
) -> None:
    before = copy.deepcopy(target)
    assert merge_patch(target, patch) == result
    assert target == before


def test_merge_patch_result_shares_nothing_with_patch() -> None:
    patch = {"spec": {"tags": ["a"]}}
    out = merge_patch({}, patch)
    out["spec"]["tags"].append("b")
    assert patch == {"spec": {"tags": ["a"]}}


# ------------------------------------------------------------------ strategic merge


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "finalizers": ["a"], "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "nginx:1",
                            "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                            "ports": [{"containerPort": 80}],
                        },
                        {"name": "side", "image": "busybox"},
                    ],
                    "tolerations": [{"key": "a"}],
                }
            },
        },
    }


def test_smp_merges_containers_env_and_ports_by_key() -> None:
    doc = _deployment()
    before = copy.deepcopy(doc)
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "main"}, {"name": "side"}],
                    "containers": [
                        {
                            "name": "main",
                            "image": "nginx:2",
                            "env": [{"name": "Y", "$patch": "delete"}, {"name": "Z", "value": "3"}],
                            "ports": [{"containerPort": 443, "name": "https"}],
                        }
                    ],
                    "tolerations": [{"key": "b"}],
                }
            }
        }
    }
    out = strategic_merge_patch(doc, patch, kind="Deployment")
    containers = out["spec"]["template"]["spec"]["containers"]
    assert containers[0] == {
        "name": "main",
        "image": "nginx:2",
        "env": [{"name": "X", "value": "1"}, {"name": "Z", "value": "3"}],
        "ports": [{"containerPort": 80}, {"containerPort": 443, "name": "https"}],
    }
    assert containers[1] == {"name": "side", "image": "busybox"}
    # tolerations have no merge key: replaced whole
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "b"}]
    assert doc == before


def test_smp_null_deletes_and_new_item_is_appended() -> None:
    patch = {
        "spec": {"replicas": None, "template": {"spec": {"containers": [
            {"name": "new", "image": "x", "ports": None},
            {"name": "main", "ports": None},
        ]}}}
    }
    out = strategic_merge_patch(_deployment(), patch, kind="Deployment")
    assert "replicas" not in out["spec"]
    names = [c["name"] for c in out["spec"]["template"]["spec"]["containers"]]
    assert names == ["main", "side", "new"]
    assert "ports" not in out["spec"]["template"]["spec"]["containers"][0]
    assert out["spec"]["template"]["spec"]["containers"][2] == {"name": "new", "image": "x"}


def test_smp_patch_delete_and_replace_directives() -> None:
    doc = _deployment()
    out = strategic_merge_patch(
        doc,
        {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}},
        kind="Deployment",
    )
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["main"]

    out = strategic_merge_patch(
        doc,
        {"spec": {"template": {"spec": {"containers": [
            {"$patch": "replace"}, {"name": "only", "image": "i"}]}}}},
        kind="Deployment",
    )
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "only", "image": "i"}]

    out = strategic_merge_patch(
        doc, {"metadata": {"labels": {"$patch": "replace", "new": "1"}}}, kind="Deployment"
    )
    assert out["metadata"]["labels"] == {"new": "1"}

    out = strategic_merge_patch(
        doc, {"spec": {"template": {"$patch": "delete"}}}, kind="Deployment"
    )
    assert "template" not in out["spec"]


def test_smp_finalizers_are_a_set_and_delete_from_primitive_list() -> None:
    doc = _deployment()
    out = strategic_merge_patch(doc, {"metadata": {"finalizers": ["a", "b"]}}, kind="Deployment")
    assert out["metadata"]["finalizers"] == ["a", "b"]
    out = strategic_merge_patch(
        out, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}, kind="Deployment"
    )
    assert out["metadata"]["finalizers"] == ["b"]


def test_smp_retain_keys() -> None:
    doc = {"kind": "Pod", "spec": {"volumes": [{"name": "v", "emptyDir": {}}]}}
    patch = {"spec": {"volumes": [
        {"name": "v", "hostPath": {"path": "/x"}, "$retainKeys": ["hostPath", "name"]}
    ]}}
    out = strategic_merge_patch(doc, patch, kind="Pod")
    assert out["spec"]["volumes"] == [{"name": "v", "hostPath": {"path": "/x"}}]


def test_smp_service_ports_by_port_and_configmap_data() -> None:
    svc = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}}
    out = strategic_merge_patch(
        svc, {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}, kind="Service"
    )
    assert out["spec"]["ports"] == [{"port": 80, "targetPort": 9090}, {"port": 443}]

    cm = {"data": {"a": "1", "b": "2"}, "metadata": {"annotations": {"x": "y"}}}
    out = strategic_merge_patch(
        cm, {"data": {"b": None, "c": "3"}, "metadata": {"annotations": {"z": "w"}}},
        kind="ConfigMap",
    )
    assert out == {"data": {"a": "1", "c": "3"}, "metadata": {"annotations": {"x": "y", "z": "w"}}}


def test_smp_kubectl_client_side_apply_of_a_pod() -> None:
    # the body kubectl 1.32 sends for a changed Pod (docs/apiserver.md, "Client-side apply bodies")
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "main", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]}}
    patch = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                     "labels": {"tier": "web"}},
        "spec": {"$setElementOrder/containers": [{"name": "main"}],
                 "containers": [{"image": "nginx:1.26", "name": "main", "ports": None}]},
    }
    out = strategic_merge_patch(pod, patch, kind="Pod")
    assert out["spec"]["containers"] == [{"name": "main", "image": "nginx:1.26"}]
    assert out["metadata"]["labels"] == {"tier": "web"}


@pytest.mark.parametrize(
    "patch",
    [
        {"spec": {"template": {"spec": {"containers": [{"image": "no-name"}]}}}},
        {"spec": {"$patch": "explode"}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
        {"metadata": {"$retainKeys": "name"}},
        {"$patch": "delete"},
    ],
)
def test_smp_malformed(patch: dict[str, Any]) -> None:
    with pytest.raises(PatchError):
        strategic_merge_patch(_deployment(), patch, kind="Deployment")


def test_smp_unknown_kind_replaces_lists() -> None:
    doc = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
    out = strategic_merge_patch(doc, {"spec": {"containers": [{"name": "c"}]}}, kind="Widget")
    assert out["spec"]["containers"] == [{"name": "c"}]


def test_smp_set_element_order_follows_a_reordered_manifest() -> None:
    doc = {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}}
    patch = {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                      "containers": [{"name": "a", "image": "2"}]}}
    out = strategic_merge_patch(doc, patch, kind="Pod")
    assert out["spec"]["containers"] == [{"name": "b", "image": "1"}, {"name": "a", "image": "2"}]


def test_smp_set_element_order_reorders_merged_lists() -> None:
    doc = {"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
           "metadata": {"finalizers": ["x", "y"]}}
    patch = {
        "spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "new"}, {"name": "a"}],
                 "containers": [{"name": "new", "image": "i"}]},
        "metadata": {"$setElementOrder/finalizers": ["y", "x"]},
    }
    out = strategic_merge_patch(doc, patch, kind="Pod")
    # the listed items follow the order; b (only on the server) goes before c, which
    # followed it on the server, as Kubernetes merges the two sorted lists
    assert [c["name"] for c in out["spec"]["containers"]] == ["b", "c", "new", "a"]
    assert out["metadata"]["finalizers"] == ["y", "x"]


# ------------------------------------------------------------------ robustness

_FUZZ_KEYS = ["spec", "template", "containers", "name", "image", "env", "ports",
              "containerPort", "metadata", "finalizers", "labels", "$patch", "$retainKeys",
              "$setElementOrder/containers", "$deleteFromPrimitiveList/finalizers", "value",
              "protocol", "status", "conditions", "type", "managedFields"]


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice([None, 1, "a", "delete", "replace", "merge", True, 2.5, "main"])
    if roll < 0.6:
        return {rng.choice(_FUZZ_KEYS): _random_json(rng, depth + 1)
                for _ in range(rng.randrange(4))}
    return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_random_documents_raise_only_patch_errors() -> None:
    """Malformed bodies end as PatchError/ApplyConflict (4xx), never as a crash (500)."""
    rng = random.Random(7)
    for _ in range(1500):
        doc, patch = _random_json(rng), _random_json(rng)
        doc = doc if isinstance(doc, dict) else {"spec": doc}
        patch = patch if isinstance(patch, dict) else {"spec": patch}
        kind = rng.choice(["Pod", "Deployment", "Service", "Widget"])
        identity = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}}
        with contextlib.suppress(PatchError):
            strategic_merge_patch(doc, patch, kind=kind)
        with contextlib.suppress(PatchError):
            json_patch(doc, [{"op": rng.choice(["add", "remove", "replace", "move", "copy",
                                                "test"]),
                              "path": rng.choice(["", "/spec", "/spec/0", "/a~1b", "/-"]),
                              "from": "/spec", "value": patch}])
        with contextlib.suppress(PatchError, ApplyConflict):
            live = server_side_apply(None, {**doc, **identity}, manager="a", force=False,
                                     now="t")
            server_side_apply(live, {**patch, **identity}, manager="b",
                              force=rng.random() < 0.5, now="t")
        record_update({**doc, "kind": kind}, {**patch, "kind": kind}, manager="m", now="t")
