"""The patch a mutating handler's answer carries turns the sent object into the returned one
(checked by applying it with the embedded server's own RFC 6902 implementation)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from asyncop.apiserver.merge.patch import json_patch
from asyncop.webhook.jsonpatch import diff

BASE: dict[str, Any] = {
    "metadata": {"name": "x", "labels": {"a/b": "1", "til~de": "2"}, "annotations": {}},
    "spec": {"replicas": 1, "ports": [1, 2], "flag": True, "nested": {"deep": {"v": None}}},
}


@pytest.mark.parametrize("change", [
    lambda o: o["metadata"]["labels"].update({"new": "3"}),
    lambda o: o["metadata"]["labels"].pop("a/b"),
    lambda o: o["metadata"]["labels"].update({"til~de": "changed"}),
    lambda o: o["spec"].update({"replicas": 2, "ports": [2, 1, 3]}),
    lambda o: o["spec"].update({"flag": 1}),          # bool → int is a change
    lambda o: o["spec"]["nested"].update({"deep": [1]}),
    lambda o: o.pop("spec"),
    lambda o: o.update({"status": {"phase": "Ready"}}),
])
def test_diff_applied_gives_the_new_document(change: Any) -> None:
    new = copy.deepcopy(BASE)
    change(new)
    ops = diff(BASE, new)
    assert ops
    assert json_patch(copy.deepcopy(BASE), ops) == new


def test_equal_documents_give_no_operations() -> None:
    assert diff(BASE, copy.deepcopy(BASE)) == []


def test_keys_are_escaped() -> None:
    new = copy.deepcopy(BASE)
    new["metadata"]["labels"]["a/b"] = "9"
    assert diff(BASE, new) == [{"op": "replace", "path": "/metadata/labels/a~1b", "value": "9"}]
