"""In-process helpers for the Pod, workload and Job tests: one Store, manifests, and the 422s.

`rejected` writes through the Writer (the path HTTP and the simulators take) and answers
the Status kube would send, failing the test if the write was accepted. Invariant: every
manifest built here is valid as it stands; a test changes one thing to break it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import orjson

from asyncop.api import ApiError
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.storage.store import Store
from asyncop.testing.clock import FakeClock

Obj = dict[str, Any]
_names = itertools.count()


def new_store() -> Store:
    return Store(clock=FakeClock())


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


def container(**fields: Any) -> Obj:
    return {"name": "c", "image": "nginx:1.27", **fields}


def pod(name: str | None = None, **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name or unique("p"), "namespace": "default"},
            "spec": {"containers": [container()], **spec}}


def template(labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    return {"metadata": {"labels": labels or {"app": "web"}},
            "spec": {"containers": [container()], **spec}}


def deployment(name: str | None = None, **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name or unique("d"), "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(),
                     **spec}}


def job(name: str | None = None, **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name or unique("j"), "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [container()]}}, **spec}}


def copy(obj: Obj) -> Obj:
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


def edit(obj: Obj, change: Callable[[Obj], Any]) -> Obj:
    """A copy of `obj` with `change` applied to it."""
    out = copy(obj)
    change(out)
    return out


def rt_of(store: Store, obj: Obj) -> ResourceType:
    group, _, version = obj["apiVersion"].rpartition("/")
    rt = store.type_for_kind(obj["apiVersion"], obj["kind"])
    assert rt is not None, (group, version, obj["kind"])
    return rt


def create(store: Store, obj: Obj) -> Obj:
    return store.writer.create(rt_of(store, obj), copy(obj))


def update(store: Store, obj: Obj) -> Obj:
    meta = obj["metadata"]
    return store.writer.update(rt_of(store, obj), copy(obj), namespace=meta["namespace"],
                               name=meta["name"])


def rejected(store: Store, obj: Obj, *, old: bool = False) -> dict[str, Any]:
    """The Status of a refused create (or update, with `old`)."""
    try:
        update(store, obj) if old else create(store, obj)
    except ApiError as err:
        status: dict[str, Any] = err.status
        return status
    raise AssertionError(f"accepted: {obj}")


def causes(status: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c.get("field", ""), c["message"]) for c in status["details"]["causes"]]
