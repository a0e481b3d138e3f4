"""Recalled pod specs (asyncop/apiserver/builtin/specrecall.py): a Pod's spec, or a workload's
pod template spec, like one defaulted and found valid before but for the values of its plain
env vars is recalled whole instead of defaulted and validated again. What kube pins here is
that nothing changes: the object stored (or the 422 and its causes) is the one kube's
defaults (pkg/apis/core/v1/defaults.go) and ValidatePodSpec / ValidatePodTemplateSpec
(pkg/apis/core/validation) give the write on its own — the properties compare every recalled
answer with the full path's on a store whose memories were emptied.
"""

from __future__ import annotations

import copy as deepcopy_module
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from asyncop.api import ApiError
from asyncop.apiserver.builtin import specrecall
from asyncop.apiserver.storage.store import Store
from tests.apiserver.podkit import (
    causes,
    container,
    copy,
    create,
    deployment,
    job,
    new_store,
    pod,
    rejected,
    rt_of,
    template,
    unique,
)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)
_FIELD_SOURCE = {"fieldRef": {"fieldPath": "metadata.name"}}
_NAMES = st.sampled_from(["A", "B", "POD_NAME", "A=B", "", 1, None])
_SOURCES = st.sampled_from([{}, None, "x", _FIELD_SOURCE,
                            {"secretKeyRef": {"name": "s", "key": "k"}},
                            {"fieldRef": {"fieldPath": "spec.nope"}}])
_VARS = st.one_of(
    st.fixed_dictionaries({"name": _NAMES}, optional={
        "value": st.sampled_from(["", "x", "y", 1]), "valueFrom": _SOURCES}),
    st.sampled_from(["A", None]))
_ENVS = st.lists(st.one_of(st.lists(_VARS, max_size=4), st.sampled_from([None, "x"])),
                 min_size=2, max_size=2)
_KINDS = st.sampled_from(["Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
                          "Job", "CronJob"])


def _plain(var: Any) -> bool:
    return isinstance(var, dict) and set(var) == {"name", "value"} and \
        isinstance(var["name"], str) and isinstance(var["value"], str)


def _with_values(env: Any, value: str) -> Any:
    """`env` with every plain var's value replaced."""
    if not isinstance(env, list):
        return env
    return [{**var, "value": f"{value}-{i}"} if _plain(var) else var
            for i, var in enumerate(env)]


def _object(kind: str, envs: list[Any], value: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container(env=_with_values(envs[0], value))],
            "initContainers": [container(name="init", env=_with_values(envs[1], value))]}
    if kind == "Pod":
        return pod(**spec)
    if kind == "Job":
        return job(template={"spec": {"restartPolicy": "Never", **spec}})
    if kind == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob",
                "metadata": {"name": unique("cj"), "namespace": "default"},
                "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {
                    "spec": {"restartPolicy": "Never", **spec}}}}}}
    workload = deployment(template=template(**spec))  # (apps/v1: the same shape for all)
    workload["kind"] = kind
    return workload


def _spec(kind: str, stored: dict[str, Any]) -> Any:
    if kind == "Pod":
        return stored["spec"]
    if kind == "CronJob":
        return stored["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return stored["spec"]["template"]["spec"]


def _memory(kind: str) -> specrecall.SpecRecall:
    return specrecall.PODS if kind == "Pod" else specrecall.TEMPLATES


def _outcome(store: Store, kind: str, obj: dict[str, Any]) -> Any:
    """What a create stores of the pod spec (and a Pod's status), or why it was refused."""
    try:
        stored = create(store, obj)
    except ApiError as err:  # (a 400 of the decode has no causes: its message then)
        return "refused", causes(err.status) if "details" in err.status else \
            err.status["message"]
    return "stored", _spec(kind, stored), stored.get("status") if kind == "Pod" else None


def _forget() -> None:
    specrecall.PODS.clear()
    specrecall.TEMPLATES.clear()


def _renamed(envs: list[Any], name: str | None) -> list[Any]:
    """`envs` with the first plain var of the first list renamed (`name` None: as is)."""
    envs = deepcopy_module.deepcopy(envs)
    if name is not None and isinstance(envs[0], list):
        for var in envs[0]:
            if _plain(var):
                var["name"] = name
                break
    return envs


@SETTINGS
@given(_KINDS, _ENVS, st.booleans(), st.sampled_from([None, "B", "A=B", ""]))
def test_a_recalled_spec_stores_what_the_full_path_stores(
        kind: str, envs: list[Any], with_plain: bool, rename: str | None) -> None:
    # a spec, then its twin: the same but for its plain vars' values (and maybe a plain
    # var's name); the twin must store, or be refused with, what the full path gives it
    envs = deepcopy_module.deepcopy(envs)
    if with_plain:  # (valid specs with plain vars are rare among the sampled envs)
        envs = [[{"name": "PLAIN", "value": "v"}, *env] if isinstance(env, list) else env
                for env in envs]
    twin = _object(kind, _renamed(envs, rename), "twin")
    _forget()
    expected = _outcome(new_store(), kind, copy(twin))  # defaulted and validated in full
    _forget()
    store = new_store()
    first = _outcome(store, kind, _object(kind, envs, "first"))
    recalled = _memory(kind).recalled
    assert _outcome(store, kind, twin) == expected
    event(f"{kind}: {expected[0]}")  # (--hypothesis-show-statistics: what was sampled)
    if rename is None:
        assert first[0] == expected[0]  # the values the key leaves out decide nothing
        # a valid spec with a key is recalled: the memory is used, not just consistent
        if expected[0] == "stored" and kind != "StatefulSet" and \
                specrecall.key_of(_spec(kind, twin)) is not None:
            assert _memory(kind).recalled == recalled + 1


def _app_env(value: str) -> list[dict[str, Any]]:
    return [{"name": f"SETTING_{k}", "value": f"{value}-{k}"} for k in range(5)] + [
        {"name": "POD_NAME", "valueFrom": deepcopy_module.deepcopy(_FIELD_SOURCE)}]


@pytest.mark.parametrize("kind", ["Pod", "Deployment", "ReplicaSet", "StatefulSet",
                                  "DaemonSet", "Job", "CronJob"])
def test_every_kind_with_a_pod_spec_recalls_it(kind: str) -> None:
    # the kinds the property samples store a valid spec and recall its twin (the property
    # would pass without looking at a kind whose every sample was refused). kube does not
    # validate a StatefulSet's pod spec (its claim templates supply volumes): its own writes
    # remember nothing, and it recalls what the others' did
    _forget()
    store = new_store()
    envs: list[Any] = [_app_env("x"), []]
    first_kind = "Deployment" if kind == "StatefulSet" else kind
    first = _outcome(store, first_kind, _object(first_kind, envs, "first"))
    twin = _outcome(store, kind, _object(kind, envs, "twin"))
    assert first[0] == twin[0] == "stored", (first, twin)
    assert _memory(kind).recalled == 1
    env = twin[1]["containers"][0]["env"]
    assert [var.get("value") for var in env[:5]] == [f"twin-{k}" for k in range(5)]
    assert env[5]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"  # defaulted, recalled


def test_a_recalled_template_shares_the_stored_parts_and_mutates_none() -> None:
    # the second Deployment's template spec is the first's but for its plain vars: the
    # parts are the very ones stored with the first (defaults included: fieldRef's
    # apiVersion), and writing the second again (a new image) leaves the first as stored
    _forget()
    store = new_store()
    spec: dict[str, Any] = {"containers": [container(env=_app_env("a"))]}
    first = create(store, deployment(template=template(**spec)))
    before = copy(first)
    second = create(store, deployment(name="second", template=template(
        containers=[container(env=_app_env("b"))])))
    assert specrecall.TEMPLATES.recalled == 1
    ctr_a = first["spec"]["template"]["spec"]["containers"][0]
    ctr_b = second["spec"]["template"]["spec"]["containers"][0]
    assert ctr_b["resources"] is ctr_a["resources"]
    assert ctr_b["env"][5] is ctr_a["env"][5]
    assert ctr_b["env"][5]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"
    assert [v.get("value") for v in ctr_b["env"][:5]] == [f"b-{k}" for k in range(5)]
    changed = copy(second)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    store.writer.update(rt_of(store, changed), changed, namespace="default", name="second")
    assert copy(store.raw_get(("apps", "deployments"), "default", first["metadata"]["name"])
                or {}) == before


def test_a_recalled_pod_gets_its_own_status_and_the_pod_rules() -> None:
    # kube: the Pod's status on create (phase Pending, its QoS class) is its own, and the
    # Pod-only checks outside ValidatePodSpec still run for a recalled spec
    # (ValidatePodCreate: no ephemeral containers on create)
    _forget()
    store = new_store()
    limits = {"limits": {"cpu": "1", "memory": "1Gi"}}
    create(store, pod(containers=[container(env=_app_env("a"), resources=limits)]))
    second = create(store, pod(containers=[container(env=_app_env("b"), resources=limits)]))
    assert specrecall.PODS.recalled == 1
    assert second["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert second["spec"]["containers"][0]["resources"]["requests"] == \
        {"cpu": "1", "memory": "1Gi"}
    ephemeral = [{"name": "debug", "image": "busybox", "env": _app_env("c")}]
    assert ("spec.ephemeralContainers", "Forbidden: cannot be set on create") in causes(
        rejected(store, pod(containers=[container(env=_app_env("d"), resources=limits)],
                            ephemeralContainers=ephemeral)))


@pytest.mark.parametrize("name", ["A=B", "SETTING_0"])
def test_a_twin_with_other_env_names_is_validated_in_full(name: str) -> None:
    # kube: ValidateEnv — a var's name is validated, and a name given twice is fine (kube
    # keeps the last); the names are in the key, so a twin whose plain var names differ
    # is not recalled but validated (and refused, for "A=B", in kube's words)
    _forget()
    store = new_store()
    create(store, pod(containers=[container(env=_app_env("a"))]))
    env = _app_env("b")
    env[1]["name"] = name
    if name == "A=B":
        assert causes(rejected(store, pod(containers=[container(env=env)]))) == [
            ("spec.containers[0].env[1].name",
             "Invalid value: \"A=B\": a valid environment variable name must consist only of "
             "printable ASCII characters other than '='")]
    else:
        create(store, pod(containers=[container(env=env)]))
    assert specrecall.PODS.recalled == 0


def test_nothing_is_recalled_for_a_write_store_admission_hooks_follow() -> None:
    # a hook registered on Pods (as the simulators register theirs on Services) runs between
    # defaults and validation and may change the spec in place: such a write is defaulted
    # and validated in full, and neither recalls nor leaves a spec to recall
    _forget()
    store = new_store()

    def hook(op: str, obj: dict[str, Any], old: Any) -> None:
        obj["spec"]["containers"][0]["env"].append({"name": "A=B", "value": "x"})

    create(store, pod(containers=[container(env=_app_env("a"))]))
    stored = create(store, pod(containers=[container(env=_app_env("b"))]))
    assert specrecall.PODS.recalled == 1
    before = copy(stored)
    store.add_admission(("", "pods"), hook)
    assert causes(rejected(store, pod(containers=[container(env=_app_env("c"))]))) == [
        ("spec.containers[0].env[6].name",
         "Invalid value: \"A=B\": a valid environment variable name must consist only of "
         "printable ASCII characters other than '='")]
    assert specrecall.PODS.recalled == 1
    assert copy(stored) == before  # the hook changed nothing stored


def test_nothing_is_recalled_for_an_update_store_admission_hooks_follow() -> None:
    # the same on update: a Deployment's template like a remembered one is defaulted and
    # validated in full when a hook on Deployments runs next, and what it changes stays its own
    _forget()
    store = new_store()

    def hook(op: str, obj: dict[str, Any], old: Any) -> None:
        obj["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = "hooked"

    first = create(store, deployment(template=template(containers=[container(
        env=_app_env("a"))])))
    before = copy(first)
    second = create(store, deployment(name="second", template=template(containers=[container(
        env=_app_env("b"))])))
    assert specrecall.TEMPLATES.recalled == 1
    store.add_admission(("apps", "deployments"), hook)
    changed = deployment(name="second", template=template(containers=[container(
        env=_app_env("c"))]))  # as written by its author: the first's twin, not defaulted
    changed["metadata"]["resourceVersion"] = second["metadata"]["resourceVersion"]
    updated = store.writer.update(rt_of(store, changed), changed, namespace="default",
                                  name="second")
    assert specrecall.TEMPLATES.recalled == 1
    assert updated["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == "hooked"
    assert copy(store.raw_get(("apps", "deployments"), "default", first["metadata"]["name"])
                or {}) == before
