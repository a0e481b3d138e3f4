"""Watches and predicates: which events put which keys on a real WorkQueue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from asyncop.api import Kind, RawObject, Request
from asyncop.api.kinds import CONFIGMAP, DEPLOYMENT, NAMESPACE
from asyncop.api.labels import parse_selector
from asyncop.runtime.handlers import (
    Predicate,
    annotation_changed,
    for_,
    generation_changed,
    label_selector,
    owns,
    resource_version_changed,
    watches,
)
from asyncop.runtime.workqueue import WorkQueue
from asyncop.testing import FakeClock

FOO = Kind("samplecontroller.k8s.io", "v1alpha1", "foos", "Foo")
CLUSTER_THING = Kind("example.com", "v1", "things", "Thing", namespaced=False)


def obj(
    name: str,
    namespace: str = "ns",
    *,
    rv: str = "1",
    generation: int | None = 1,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
) -> RawObject:
    meta: dict[str, Any] = {"name": name, "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    if generation is not None:
        meta["generation"] = generation
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    if owners is not None:
        meta["ownerReferences"] = owners
    result: RawObject = {"apiVersion": "v1", "kind": "X", "metadata": meta}  # type: ignore[typeddict-item]
    return result


def owner_ref(name: str, *, api_version: str = "samplecontroller.k8s.io/v1alpha1",
              kind: str = "Foo", controller: bool = True) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}",
            "controller": controller}


async def queued(q: WorkQueue[Request]) -> set[str]:
    """The keys (`namespace/name`) of the Requests on the queue."""
    keys = set()
    while len(q):
        request = await q.get()
        keys.add(request.key)
        q.done(request)
    return keys


@pytest.fixture(autouse=True)
def _capture_logs() -> Iterator[None]:
    """Keep logs in memory: rendering tracebacks to the terminal is slow and noisy."""
    with capture_logs():
        yield


@pytest.fixture
def q() -> WorkQueue[Request]:
    return WorkQueue(clock=FakeClock())


async def test_for_enqueues_the_objects_own_key_on_every_event(q: WorkQueue[Request]) -> None:
    h = for_(FOO).handler(q)
    h.on_add(obj("a"))
    h.on_update(obj("b"), obj("b", rv="2"))
    h.on_delete(obj("c"))
    h.on_add(obj("cluster-wide", namespace=""))
    assert await queued(q) == {"ns/a", "ns/b", "ns/c", "cluster-wide"}


async def test_owns_enqueues_the_controller_owner_of_the_primary_kind(
        q: WorkQueue[Request]) -> None:
    h = owns(DEPLOYMENT).handler(q, primary=FOO)
    h.on_add(obj("d1", owners=[owner_ref("other", controller=False), owner_ref("foo1")]))
    h.on_add(obj("d2", owners=[owner_ref("foo2", api_version="samplecontroller.k8s.io/v2")]))
    h.on_add(obj("d3", owners=[owner_ref("wrong-group", api_version="other.io/v1alpha1")]))
    h.on_add(obj("d4", owners=[owner_ref("wrong-kind", kind="Bar")]))
    h.on_add(obj("d5", owners=[owner_ref("not-controller", controller=False)]))
    h.on_add(obj("d6"))
    assert await queued(q) == {"ns/foo1", "ns/foo2"}


async def test_owns_core_group_and_cluster_scoped_owners(q: WorkQueue[Request]) -> None:
    core = owns(CONFIGMAP).handler(q, primary=NAMESPACE)
    core.on_add(obj("cm", owners=[owner_ref("team-a", api_version="v1", kind="Namespace")]))
    cluster = owns(CONFIGMAP).handler(q, primary=CLUSTER_THING)
    cluster.on_add(obj("cm", owners=[owner_ref("t1", api_version="example.com/v1",
                                               kind="Thing")]))
    assert await queued(q) == {"team-a", "t1"}


async def test_owns_update_reconciles_old_and_new_owner(q: WorkQueue[Request]) -> None:
    h = owns(DEPLOYMENT).handler(q, primary=FOO)
    h.on_update(obj("d", owners=[owner_ref("old")]), obj("d", rv="2", owners=[owner_ref("new")]))
    assert await queued(q) == {"ns/old", "ns/new"}


async def test_owns_without_primary_kind_is_an_error(q: WorkQueue[Request]) -> None:
    with pytest.raises(ValueError):
        owns(DEPLOYMENT).handler(q)


async def test_watches_maps_through_the_mapper(q: WorkQueue[Request]) -> None:
    def by_label(o: RawObject) -> list[Request]:
        target = o["metadata"].get("labels", {}).get("target")
        return [Request(target, "ns")] if target else []

    h = watches(CONFIGMAP, by_label).handler(q)
    h.on_add(obj("cm1", labels={"target": "foo-a"}))
    h.on_add(obj("cm2", labels={}))
    h.on_delete(obj("cm3", labels={"target": "foo-b"}))
    assert await queued(q) == {"ns/foo-a", "ns/foo-b"}


async def test_a_failing_mapper_does_not_raise_into_the_informer(q: WorkQueue[Request]) -> None:
    def broken(o: RawObject) -> list[Request]:
        raise KeyError("boom")

    watches(CONFIGMAP, broken).handler(q).on_add(obj("cm"))
    for_(CONFIGMAP).handler(q).on_add(obj("ok"))
    assert await queued(q) == {"ns/ok"}


async def test_generation_changed_drops_status_only_updates(q: WorkQueue[Request]) -> None:
    h = for_(FOO, generation_changed).handler(q)
    h.on_update(obj("status-only", generation=3), obj("status-only", rv="9", generation=3))
    h.on_update(obj("spec", generation=3), obj("spec", rv="9", generation=4))
    h.on_add(obj("added"))
    h.on_delete(obj("deleted"))
    assert await queued(q) == {"ns/spec", "ns/added", "ns/deleted"}


async def test_resource_version_changed_drops_resyncs(q: WorkQueue[Request]) -> None:
    h = for_(FOO, resource_version_changed).handler(q)
    h.on_update(obj("resync", rv="5"), obj("resync", rv="5"))
    h.on_update(obj("real", rv="5"), obj("real", rv="6"))
    assert await queued(q) == {"ns/real"}


async def test_annotation_changed(q: WorkQueue[Request]) -> None:
    h = for_(FOO, annotation_changed).handler(q)
    h.on_update(obj("same", annotations={"a": "1"}), obj("same", rv="2", annotations={"a": "1"}))
    h.on_update(obj("diff", annotations={"a": "1"}), obj("diff", rv="2", annotations={"a": "2"}))
    assert await queued(q) == {"ns/diff"}


async def test_label_selector_predicate_string_and_dict(q: WorkQueue[Request]) -> None:
    h = for_(FOO, label_selector("app=web,tier!=db")).handler(q)
    h.on_add(obj("web", labels={"app": "web"}))
    h.on_add(obj("db", labels={"app": "web", "tier": "db"}))
    h.on_add(obj("other", labels={"app": "api"}))
    h.on_add(obj("none"))
    # leaving the selection is still seen (old matched)
    h.on_update(obj("leaving", labels={"app": "web"}), obj("leaving", rv="2", labels={}))
    d = for_(FOO, label_selector({"matchLabels": {"app": "api"}})).handler(q)
    d.on_add(obj("api", labels={"app": "api"}))
    d.on_add(obj("not-api", labels={"app": "web"}))
    assert await queued(q) == {"ns/web", "ns/leaving", "ns/api"}


async def test_predicates_are_anded(q: WorkQueue[Request]) -> None:
    h = for_(FOO, generation_changed, label_selector({"app": "x"})).handler(q)
    h.on_update(obj("a", labels={"app": "x"}), obj("a", rv="2", generation=2, labels={"app": "x"}))
    h.on_update(obj("b", labels={"app": "y"}), obj("b", rv="2", generation=2, labels={"app": "y"}))
    h.on_update(obj("c", labels={"app": "x"}), obj("c", rv="2", labels={"app": "x"}))
    assert await queued(q) == {"ns/a"}


async def test_custom_predicates_default_to_letting_events_through(q: WorkQueue[Request]) -> None:
    not_system = Predicate("not-system", create=lambda o: o["metadata"]["name"] != "sys")
    h = for_(FOO, not_system).handler(q)
    h.on_add(obj("sys"))
    h.on_add(obj("app"))
    h.on_update(obj("sys"), obj("sys", rv="2"))  # only `create` was customised
    assert await queued(q) == {"ns/app", "ns/sys"}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("", {}, True),
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "api"}, False),
        ("app!=web", {}, True),
        ("env in (prod, staging)", {"env": "staging"}, True),
        ("env in (prod,staging)", {"env": "dev"}, False),
        ("env notin (prod)", {}, True),
        ("env notin (prod)", {"env": "prod"}, False),
        ("owner", {"owner": "x"}, True),
        ("owner", {}, False),
        ("!legacy", {"legacy": "1"}, False),
        ("app=web, !legacy, env in (a,b)", {"app": "web", "env": "b"}, True),
        ({"matchExpressions": [{"key": "env", "operator": "Exists"}]}, {"env": ""}, True),
        ({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}, {"env": ""}, False),
        ({"matchExpressions": [{"key": "e", "operator": "NotIn", "values": ["a"]}]}, {}, True),
    ],
)
def test_label_selector_parsing(selector: Any, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(selector).matches(labels) is expected


@pytest.mark.parametrize("bad", ["app in web", "=x", "a b", "env in (a", "app=web,,"])
def test_label_selector_rejects_garbage(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_selector(bad)
