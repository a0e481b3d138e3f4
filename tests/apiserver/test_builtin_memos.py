"""More shortcuts of built-in writes, each pinned against the rule it stands for.

`tests/apiserver/test_builtin_fastpaths.py` holds the first ones; these are the answers
remembered across writes (a pod's QoS class by its containers' resources) and the walks
that take a shortcut on parts replicas repeat (the typed decode of a container outside its
env). Each test compares the shortcut with the full computation on the same input, first
and repeated, and on inputs that differ only where the shortcut's key must tell them apart.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any
from unittest.mock import patch

import aiohttp
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncop.api import ApiError
from asyncop.apiserver import ApiServer
from asyncop.apiserver.builtin import (
    decode,
    fastwalk,
    fields,
    gotypes,
    poddefaults,
    pods,
    podspec,
    quantity,
    specmemo,
    volumes,
    workloads,
)
from asyncop.apiserver.storage import writer
from asyncop.webhook import AdmissionRequest, WebhookServer
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call
from tests.apiserver.podkit import (
    causes,
    container,
    create,
    deployment,
    new_store,
    pod,
    rejected,
    rt_of,
    template,
)

http = httpkit.http
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None)

_QUANTITIES: st.SearchStrategy[Any] = st.sampled_from([
    "100m", "0.1", "1", "1.0", "0", "-1", "1Gi", "1024Mi", "1e3", "abc", "",
    1, 1.0, 0, -1, 0.5, True, None])
_RESOURCE_LIST: st.SearchStrategy[Any] = st.one_of(
    st.dictionaries(st.sampled_from(["cpu", "memory", "example.com/gpu"]), _QUANTITIES,
                    max_size=3),
    st.sampled_from([None, "cpu", [], 1]))
_RESOURCES = st.one_of(
    st.fixed_dictionaries({}, optional={"requests": _RESOURCE_LIST, "limits": _RESOURCE_LIST}),
    st.sampled_from([None, "x", []]))
_CONTAINER = st.one_of(st.fixed_dictionaries({"name": st.just("c")},
                                             optional={"resources": _RESOURCES}),
                       st.sampled_from([None, "c", 1]))
_SPEC = st.fixed_dictionaries({}, optional={
    "containers": st.one_of(st.lists(_CONTAINER, max_size=3), st.just("x")),
    "initContainers": st.lists(_CONTAINER, max_size=2)})


@SETTINGS
@given(_SPEC)
def test_remembered_qos_class_is_the_computed_one(spec: dict[str, Any]) -> None:
    # kube: ComputePodQOS (pkg/apis/core/helper/qos), remembered by the resources' JSON text
    expected = pods.computed_qos_class(copy.deepcopy(spec))
    assert pods.qos_class(spec) == expected
    assert pods.qos_class(spec) == expected  # a second time: from memory when rememberable


def test_qos_class_tells_apart_resources_that_only_look_alike() -> None:
    # kube: ComputePodQOS — limits equal to requests only when the quantities are equal
    def spec(requests: Any, limits: Any) -> dict[str, Any]:
        return {"containers": [{"name": "c", "resources": {"requests": requests,
                                                            "limits": limits}}]}
    guaranteed = spec({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})
    assert pods.qos_class(guaranteed) == "Guaranteed"
    for requests in ({"cpu": "1", "memory": "1G"}, {"cpu": "1", "memory": 1}):
        assert pods.qos_class(spec(requests, {"cpu": "1", "memory": "1Gi"})) == "Burstable"
    assert pods.qos_class(spec({"cpu": 1, "memory": 1.0}, {"cpu": 1, "memory": 1.0})) == \
        "Guaranteed"
    # a bool is no quantity: no cpu limit, so not Guaranteed (the same text with 1 is)
    same = {"cpu": True, "memory": "1Gi"}
    assert pods.qos_class(spec(same, same)) == "Burstable"
    same = {"cpu": 1, "memory": "1Gi"}
    assert pods.qos_class(spec(same, same)) == "Guaranteed"
    # an init container's resources count as a container's do
    with_init = {**guaranteed, "initContainers": [{"name": "i", "resources": {}}]}
    assert pods.qos_class(with_init) == "Burstable"


_LABEL_TEXT = st.one_of(st.sampled_from(["app", "tier", "example.com/app", "a" * 63, "a" * 64,
                                         "-x", "x_y", "web", ""]),
                        st.text(alphabet="az09-._/", max_size=8))


@SETTINGS
@given(st.one_of(st.dictionaries(_LABEL_TEXT, st.one_of(_LABEL_TEXT, st.sampled_from([1, None])),
                                 max_size=3),
                 st.sampled_from([None, "app", [], 1])))
def test_remembered_labels_answer_as_the_rule(value: Any) -> None:
    # kube: ValidateLabels (apimachinery pkg/apis/meta/v1/validation), remembered when valid
    rule = fields.labels.__wrapped__  # type: ignore[attr-defined]
    expected = rule(copy.deepcopy(value), "metadata.labels")
    assert fields.labels(value, "metadata.labels") == expected
    assert fields.labels(value, "metadata.labels") == expected  # again: from memory if valid
    # the path is the caller's: a remembered set answers [] wherever it is, and an invalid
    # one is validated again with the new path
    assert fields.labels(value, "spec.selector") == rule(value, "spec.selector")


# --- a remembered container: only its env, its name's uniqueness and restartPolicy again -------

def test_a_remembered_container_is_checked_against_its_pods_grace_period() -> None:
    # kube: validateSleepAction (pkg/apis/core/validation) — a preStop sleep lasts at most the
    # pod's terminationGracePeriodSeconds; the same container is valid with 30 s, not with 10
    store = new_store()
    ctr = container(lifecycle={"preStop": {"sleep": {"seconds": 20}}})
    create(store, pod(containers=[ctr], terminationGracePeriodSeconds=30))
    create(store, pod(containers=[ctr], terminationGracePeriodSeconds=30))  # from memory
    status = rejected(store, pod(containers=[ctr], terminationGracePeriodSeconds=10))
    assert causes(status) == [(
        "spec.containers[0].lifecycle.preStop.sleep",
        "Invalid value: 20: must be non-negative and less than terminationGracePeriodSeconds "
        "(10)")]


def test_a_remembered_container_still_has_its_env_name_and_restart_policy_checked() -> None:
    # kube: validateContainers — names unique across the pod's containers, restartPolicy only
    # on init containers; ValidateEnv on every var, whatever the rest of the container
    store = new_store()
    ctr = container(env=[{"name": "A", "value": "1"}])
    create(store, pod(containers=[ctr]))
    assert causes(rejected(store, pod(containers=[ctr, ctr]))) == [
        ("spec.containers[1].name", 'Duplicate value: "c"')]
    bad_env = {**ctr, "env": [{"name": "A=B", "value": "1"}]}
    assert causes(rejected(store, pod(containers=[bad_env]))) == [
        ("spec.containers[0].env[0].name", "Invalid value: \"A=B\": a valid environment "
         "variable name must consist only of printable ASCII characters other than '='")]
    sidecar_policy = {**ctr, "restartPolicy": "Always"}
    create(store, pod(initContainers=[{**sidecar_policy, "name": "i"}], containers=[ctr]))
    for _ in range(2):  # the second time, from memory
        assert causes(rejected(store, pod(containers=[sidecar_policy]))) == [
            ("spec.containers[0].restartPolicy",
             "Forbidden: may not be set for non-init containers")]


# --- fastwalk: a container outside its env, and an env var with a source, walked once per
# distinct text ---------------------------------------------------------------------------------

_ENV_VARIANTS: list[Any] = [
    [], [{"name": "A", "value": "1"}], [{"name": "A", "value": "2"}],
    [{"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
    [{"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
     {"name": "A", "value": "1"}, {"name": "P", "valueFrom": {"fieldRef": None}}],
    [{"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu",
                                                      "divisor": "1000m"}}}],
    [{"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu",
                                                      "divisor": 1}}}],
    [{"name": "P", "valueFrom": {"fieldReff": {}}}], [{"name": "P", "valueFrom": "x"}],
    [{"name": "A", "value": None}], [{"name": "A", "valuee": "x"}], [{"name": 1}], [None],
    None, "x", {"name": "A"}]
_REST_VARIANTS: list[dict[str, Any]] = [
    {"name": "c", "image": "nginx"},
    {"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}},
    {"name": "c", "image": "nginx", "resources": {"limits": {"cpu": 1}}},
    {"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]},
    {"name": "c", "image": "nginx", "imagee": "typo"},
    {"name": "c", "image": "nginx", "tty": None}]


def _walk(ctr: Any) -> tuple[Any, Any]:
    """What the fast walk answers for a pod with this container: its key count or Slow, and
    the container as the walk left it. The whole-spec memory is emptied first, so what may
    answer from memory is the container's (a remembered spec never reaches it)."""
    node = gotypes.compiled(33, "", "v1", "Pod")
    assert node is not None
    fastwalk._SPECS.clear()
    body = {"spec": {"containers": [ctr]}}
    try:
        answer: Any = fastwalk.fast(body, node)
    except fastwalk.Slow:
        answer = "slow"
    return answer, body


def _forget_walks() -> None:
    """Empty the decoding walk's memories (specs, containers, repeated items)."""
    fastwalk._SPECS.clear()
    fastwalk._CONTAINERS.clear()
    fastwalk._CLEAN.clear()


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(range(len(_REST_VARIANTS))),
                          st.sampled_from(range(len(_ENV_VARIANTS) + 1))), min_size=1,
                max_size=6))
def test_remembered_container_walk_answers_as_the_walk(picks: list[tuple[int, int]]) -> None:
    # kube: the JSON decode into v1.Container (unknown fields, types, nulls dropped); the
    # memory of a container outside env must give the walk's own answer and key count
    for rest_at, env_at in picks:
        ctr = copy.deepcopy(_REST_VARIANTS[rest_at])
        if env_at < len(_ENV_VARIANTS):
            ctr["env"] = copy.deepcopy(_ENV_VARIANTS[env_at])
        _forget_walks()  # (patching `_container` would not reach its compiled caller)
        expected = _walk(copy.deepcopy(ctr))  # the walk itself: nothing remembered yet
        assert _walk(copy.deepcopy(ctr)) == expected
        assert _walk(copy.deepcopy(ctr)) == expected  # again, from memory when remembered


def test_a_container_changed_by_the_walk_is_not_remembered() -> None:
    # kube: null fields are Go zero values (dropped here): a container with one is walked
    # every time, so its count always includes the dropped key
    ctr: dict[str, Any] = {"name": "c", "image": "nginx", "tty": None, "env": []}
    first, second = _walk(copy.deepcopy(ctr)), _walk(copy.deepcopy(ctr))
    assert first == second and first[0] == 6  # spec, containers, its 4 keys: tty counted
    assert first[1]["spec"]["containers"][0] == {"name": "c", "image": "nginx", "env": []}


# --- poddefaults: a volume's defaults visit only the sources it sets --------------------------

def _volume_defaults_each(volume: dict[str, Any]) -> None:
    """kube's volume defaulters one by one (SetDefaults_Volume, _SecretVolumeSource,
    _ConfigMapVolumeSource, _DownwardAPIVolumeSource, _ProjectedVolumeSource,
    _HostPathVolumeSource, _ServiceAccountTokenProjection, _PersistentVolumeClaimSpec, the
    fieldRef apiVersion), each asking the volume for its own field."""
    def downward(items: Any) -> None:
        for item in items if isinstance(items, list) else []:
            ref = item.get("fieldRef") if isinstance(item, dict) else None
            if isinstance(ref, dict) and ref:
                ref.setdefault("apiVersion", "v1")

    def obj(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}

    if not volumes.sources_of(volume):
        volume["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(volume.get(key), dict):
            volume[key].setdefault("defaultMode", 420)
    if isinstance(volume.get("hostPath"), dict):
        volume["hostPath"].setdefault("type", "")
    downward(obj(volume.get("downwardAPI")).get("items"))
    sources = obj(volume.get("projected")).get("sources")
    for source in sources if isinstance(sources, list) else []:
        source = obj(source)
        if isinstance(source.get("serviceAccountToken"), dict):
            source["serviceAccountToken"].setdefault("expirationSeconds", 3600)
        downward(obj(source.get("downwardAPI")).get("items"))
    claim_spec = obj(obj(volume.get("ephemeral")).get("volumeClaimTemplate")).get("spec")
    if isinstance(claim_spec, dict):
        claim_spec.setdefault("volumeMode", "Filesystem")


_ITEMS: st.SearchStrategy[Any] = st.sampled_from([
    [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}], [], None, "x", [None],
    [{"path": "p", "fieldRef": {}}]])
_SOURCE: st.SearchStrategy[Any] = st.one_of(
    st.fixed_dictionaries({}, optional={"defaultMode": st.just(256), "items": _ITEMS,
                                        "type": st.just("Directory"), "name": st.just("x")}),
    st.sampled_from([None, "x", 1, []]))
_PROJECTED: st.SearchStrategy[Any] = st.one_of(_SOURCE, st.fixed_dictionaries({"sources": st.one_of(
    st.lists(st.one_of(st.fixed_dictionaries({}, optional={
        "serviceAccountToken": st.one_of(_SOURCE, st.just({"expirationSeconds": 600})),
        "downwardAPI": _SOURCE}), st.sampled_from([None, "x"])), max_size=2),
    st.sampled_from([None, "x"]))}))
_CLAIM: st.SearchStrategy[Any] = st.fixed_dictionaries(
    {"spec": st.one_of(_SOURCE, st.just({}))})
_EPHEMERAL: st.SearchStrategy[Any] = st.one_of(
    _SOURCE, st.fixed_dictionaries({"volumeClaimTemplate": st.one_of(_SOURCE, _CLAIM)}))


@SETTINGS
@given(st.fixed_dictionaries({"name": st.just("v")}, optional={
    "secret": _SOURCE, "configMap": _SOURCE, "downwardAPI": _SOURCE, "hostPath": _SOURCE,
    "emptyDir": _SOURCE, "nfs": _SOURCE, "projected": _PROJECTED, "ephemeral": _EPHEMERAL}))
def test_volume_defaults_visiting_its_sources_match_the_defaulters(volume: Any) -> None:
    # kube: SetDefaults_Volume and the volume sources' defaulters (pkg/apis/core/v1)
    expected = copy.deepcopy(volume)
    _volume_defaults_each(expected)
    poddefaults.volume_defaults(volume)
    assert volume == expected


def test_env_sources_are_found_at_their_indexes_among_plain_vars() -> None:
    # kube: validateEnvVarValueFrom, called for each var with a valueFrom (ValidateEnv); the
    # vars with a source are picked out of the plain ones, each cause at its own index
    store = new_store()
    env: list[Any] = [{"name": f"V{i}", "value": "x"} for i in range(6)]
    env[0] = {"name": "OK", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    env[3] = {"name": "EMPTY", "valueFrom": {}}
    env[5] = {"name": "BOTH", "value": "x", "valueFrom": {"secretKeyRef": {"name": "s",
                                                                          "key": "k"}}}
    assert causes(rejected(store, pod(containers=[container(env=env)]))) == [
        ("spec.containers[0].env[3].valueFrom", 'Invalid value: "": must specify one of: '
         "`fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"),
        ("spec.containers[0].env[5].valueFrom", 'Invalid value: "": may not be specified '
         "when `value` is not empty")]


# --- canonical: a body decoded with every Quantity canonical skips the canonical walk ---------

_Q_TEXTS = ["100m", "0.1", "1", "1.0", "1Gi", "1024Mi", "1000Mi", "1e3", "1k", "500m", "0.5",
            "128974848", "129e6", "129M", "123Mi", "5G", "1.5Gi", " 1Gi", "0", "-1"]


@SETTINGS
@given(st.one_of(st.sampled_from(_Q_TEXTS), st.text(alphabet="0123456789.eEkMGTPmunKi+-",
                                                    min_size=1, max_size=8)))
def test_rounded_default_quantities_are_canonical(text: str) -> None:
    # kube: SetDefaults_ResourceList rounds up to milli and the result is serialised by
    # resource.Quantity's MarshalJSON: what the default writes needs no canonical walk
    rounded = quantity.milli_rounded(text)
    if rounded is not None:
        assert quantity.canonical(rounded) == rounded
    if fastwalk.quantity_state(text) == fastwalk.STABLE:
        try:
            assert quantity.canonical(text) == text
        except quantity.QuantityError:
            pass  # canonicalize leaves what it cannot write as it is


_Q_OR_NUMBER = st.one_of(st.sampled_from(_Q_TEXTS), st.sampled_from([1, 0.5, 2048]))


@SETTINGS
@given(limits=st.dictionaries(st.sampled_from(["cpu", "memory"]), _Q_OR_NUMBER, max_size=2),
       requests=st.dictionaries(st.sampled_from(["cpu", "memory"]), _Q_OR_NUMBER, max_size=2),
       divisor=st.one_of(st.none(), _Q_OR_NUMBER), size=st.one_of(st.none(), _Q_OR_NUMBER),
       kind=st.sampled_from(["pod", "deployment"]), hook=st.booleans())
def test_skipping_the_canonical_walk_stores_what_the_walk_stores(
        limits: dict[str, Any], requests: dict[str, Any], divisor: Any, size: Any, kind: str,
        hook: bool) -> None:
    # kube: resource.Quantity's MarshalJSON on every Quantity of a stored object; the same
    # body is stored identically whether the walk ran (decode_canonical disabled) or not,
    # the second time from the decode's memories of containers and parts
    env: list[Any] = [{"name": "A", "value": "a"}]
    if divisor is not None:
        env.append({"name": "M", "valueFrom": {"resourceFieldRef": {
            "resource": "limits.memory", "divisor": divisor}}})
    volumes = [{"name": "d", "emptyDir": {} if size is None else {"sizeLimit": size}}]
    ctr = container(env=env, resources={"limits": limits, "requests": requests})
    spec: dict[str, Any] = {"containers": [ctr], "volumes": volumes}
    body = pod(**spec) if kind == "pod" else deployment(template={
        "metadata": {"labels": {"app": "web"}}, "spec": spec})

    def stored(skip: bool) -> Any:
        store = new_store()
        if hook:  # an in-process admission hook that writes a non-canonical quantity
            def admit(operation: str, obj: dict[str, Any], old: Any) -> None:
                specs = obj["spec"] if kind == "pod" else obj["spec"]["template"]["spec"]
                specs["containers"][0]["resources"].setdefault("limits", {})["x/y"] = "1024Mi"
            store.add_admission(rt_of(store, body).gr, admit)
        answers = []
        for i in range(2):
            named = copy.deepcopy(body)
            named["metadata"]["name"] = f"same-{i}"
            if skip:
                made = create(store, named)
            else:
                with patch.object(writer, "decode_canonical", _never_canonical):
                    made = create(store, named)
            made["metadata"].pop("uid")
            answers.append(made)
        return answers

    try:
        expected = stored(skip=False)
    except ApiError as exc:  # refused either way, with the same status
        with pytest.raises(ApiError) as again:
            stored(skip=True)
        assert again.value.status == exc.status
        return
    assert stored(skip=True) == expected


def _never_canonical(*args: Any, **kwargs: Any) -> tuple[Any, bool]:
    return decode.decode_canonical(*args, **kwargs)[0], False


async def test_a_quantity_a_mutating_webhook_writes_is_stored_canonically(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    # kube: mutating admission runs on the decoded object and the result is serialised by
    # resource.Quantity's MarshalJSON: a webhook's `1024Mi` is stored as `1Gi` although the
    # body as sent was canonical (its decode would have let the canonical walk be skipped)
    server = WebhookServer()

    async def limit(req: AdmissionRequest) -> dict[str, Any] | None:
        obj = copy.deepcopy(req.object or {})
        obj["spec"]["containers"][0]["resources"] = {"limits": {"memory": "1024Mi"}}
        return obj

    server.mutating("/limit", limit)
    base = apiserver_no_sim.url
    async with server:
        code, body = await call(http, "POST", base + "/apis/admissionregistration.k8s.io/v1/"
                                "mutatingwebhookconfigurations", json=server.mutating_configuration(
            "limit", [{"name": "limit.example.com", "path": "/limit", "rules": [{
                "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["pods"]}]}]))
        assert code == 201, body
        for name in ("m-0", "m-1"):  # the second body from the decode's memories
            sent = pod(name, containers=[container(resources={"limits": {"memory": "1Gi"}})])
            code, made = await call(http, "POST", base + "/api/v1/namespaces/default/pods",
                                    json=sent)
            assert code == 201, made
            assert made["spec"]["containers"][0]["resources"]["limits"] == {"memory": "1Gi"}


# --- the writer: a new object's uid written without a UUID object -----------------------------

@SETTINGS
@given(st.one_of(st.integers(0, 2**128 - 1), st.sampled_from([0, 2**128 - 1, 2**64, 2**76])))
def test_uid_text_is_the_version_4_uuid_of_the_random_bits(bits: int) -> None:
    # kube: a create's uid is uuid.NewUUID() (random, RFC 4122 variant, version 4); the
    # server's seeded random bits give the same text as Python's uuid module writes
    assert writer.uuid4_text(bits) == str(uuid.UUID(int=bits, version=4))


# --- a whole pod spec remembered by its skeleton (env reduced to names and sourced vars) -------

_FIELD_SOURCE = {"fieldRef": {"fieldPath": "metadata.name"}}
_ENV_MSG = ("Invalid value: \"A=B\": a valid environment variable name must consist only of "
            "printable ASCII characters other than '='")


def _env(value: str) -> list[Any]:
    """Ten plain vars whose values differ per replica, and one var with a source."""
    return [{"name": f"V{k}", "value": f"{value}-{k}"} for k in range(10)] + [
        {"name": "POD_NAME", "valueFrom": copy.deepcopy(_FIELD_SOURCE)}]


def _replica(value: str, **spec: Any) -> dict[str, Any]:
    return pod(containers=[container(env=_env(value))],
               initContainers=[container(name="init", env=_env(value))], **spec)


def test_a_remembered_spec_still_refuses_what_its_env_and_init_containers_break() -> None:
    # kube: ValidateEnv and validateEnvVarValueFrom (pkg/apis/core/validation) on every var of
    # every container; validateInitContainers. A replica that differs from a valid one only in
    # its plain vars' values is valid; one that differs in anything a rule reads is refused
    # with kube's own message, however many valid replicas came before
    store = new_store()
    for value in ("a", "b", "c"):  # the second and third from memory
        create(store, _replica(value))

    def broken(change: Any) -> dict[str, Any]:
        obj = _replica("d")
        change(obj["spec"])
        return obj

    def rename(spec: dict[str, Any]) -> None:  # one plain var's name made invalid
        spec["containers"][0]["env"][3]["name"] = "A=B"
    assert causes(rejected(store, broken(rename))) == [
        ("spec.containers[0].env[3].name", _ENV_MSG)]

    def empty_source(spec: dict[str, Any]) -> None:  # a plain var gains `valueFrom: {}`
        spec["containers"][0]["env"][2]["valueFrom"] = {}
    assert causes(rejected(store, broken(empty_source))) == [
        ("spec.containers[0].env[2].valueFrom", 'Invalid value: "": must specify one of: '
         "`fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")]

    def with_value(spec: dict[str, Any]) -> None:  # the sourced var gains a value
        spec["containers"][0]["env"][10]["value"] = "x"
    assert causes(rejected(store, broken(with_value))) == [
        ("spec.containers[0].env[10].valueFrom", 'Invalid value: "": may not be specified '
         "when `value` is not empty")]

    def init_env(spec: dict[str, Any]) -> None:  # the same, in the init container
        spec["initContainers"][0]["env"][0]["name"] = "A=B"
    assert causes(rejected(store, broken(init_env))) == [
        ("spec.initContainers[0].env[0].name", _ENV_MSG)]

    def init_policy(spec: dict[str, Any]) -> None:  # an init container outside its env
        spec["initContainers"][0]["restartPolicy"] = "Never"
    assert causes(rejected(store, broken(init_policy))) == [
        ("spec.initContainers[0].restartPolicy",
         'Unsupported value: "Never": supported values: "Always"')]

    def init_name(spec: dict[str, Any]) -> None:  # a name shared across the two lists
        spec["initContainers"][0]["name"] = "c"
    assert causes(rejected(store, broken(init_name))) == [
        ("spec.initContainers[0].name", 'Duplicate value: "c"')]
    create(store, _replica("e"))  # and the valid shape is still answered valid


def test_a_remembered_template_spec_refuses_the_same_in_a_deployment() -> None:
    # kube: ValidatePodTemplateSpec (pkg/apis/core/validation) through
    # ValidateDeploymentSpec (pkg/apis/apps/validation): the template's pod spec is
    # validated as a pod's, its causes under spec.template.spec
    store = new_store()

    def replica(value: str) -> dict[str, Any]:
        obj = deployment()
        obj["spec"]["template"]["spec"]["containers"][0]["env"] = _env(value)
        return obj
    for value in ("a", "b", "c"):  # the third from memory
        create(store, replica(value))
    obj = replica("d")
    obj["spec"]["template"]["spec"]["containers"][0]["env"][10]["valueFrom"] = {
        **_FIELD_SOURCE, "secretKeyRef": {"name": "s", "key": "k"}}
    assert causes(rejected(store, obj)) == [
        ("spec.template.spec.containers[0].env[10].valueFrom", 'Invalid value: "": may not '
         "have more than one field specified at a time")]


def test_a_spec_remembered_in_a_template_is_validated_again_as_a_pods() -> None:
    # kube: validatePodMetadataAndSpec (pkg/apis/core/validation) adds rules for Pods that
    # templates do not have: an image with surrounding whitespace is a valid template
    store = new_store()
    spaced = container(image="nginx:1.27 ")
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"] = [spaced]
    create(store, obj)
    assert causes(rejected(store, pod(containers=[spaced]))) == [
        ("spec.containers[0].image",
         'Invalid value: "nginx:1.27 ": must not have leading or trailing whitespace')]


_NAMES = st.sampled_from(["A", "B", "POD_NAME", "A=B", "", 1, None, {"name": "A"}])
_SOURCES = st.sampled_from([{}, None, "x", _FIELD_SOURCE,
                            {**_FIELD_SOURCE, "configMapKeyRef": {"name": "c", "key": "k"}},
                            {"secretKeyRef": {"name": "s", "key": "k"}},
                            {"fieldRef": {"fieldPath": "spec.nope"}}])
_VARS = st.one_of(
    st.fixed_dictionaries({"name": _NAMES}, optional={
        "value": st.sampled_from(["", "x", "y", 1]), "valueFrom": _SOURCES}),
    st.sampled_from(["A", 1, None, []]))
_SPEC_ENVS = st.lists(st.one_of(st.lists(_VARS, max_size=4), st.sampled_from([None, "x"])),
                      min_size=2, max_size=2)


def _skeleton(spec: dict[str, Any]) -> tuple[Any, Any]:
    return specmemo.outside_text(spec), specmemo.containers_text(spec)


@SETTINGS
@given(_SPEC_ENVS, st.booleans())
def test_a_remembered_spec_answers_as_the_full_rules_whatever_the_env(
        envs: list[Any], is_pod: bool) -> None:
    # kube: ValidatePodSpec (pkg/apis/core/validation). Whatever the env of a container and
    # an init container, `pod_spec` answers what the full rules answer, after a spec of the
    # same skeleton (its plain vars' values changed) was answered three times (seen,
    # remembered, answered from memory), and the twin is valid exactly when the variant
    # is: the values the skeleton drops decide nothing
    def spec(container_env: Any, init_env: Any) -> dict[str, Any]:
        made = {"containers": [container(env=container_env)],
                "initContainers": [container(name="i", env=init_env)]}
        poddefaults.pod_spec_defaults(made)
        return made

    def full(value: dict[str, Any]) -> list[Any]:
        out = podspec._pod_spec(copy.deepcopy(value), "spec", None, is_pod=is_pod,
                                strict_node_values=True)
        return out + (pods._pod_only(value) if is_pod else [])

    def answer(value: dict[str, Any]) -> list[Any]:
        return podspec.pod_spec(value, "spec", is_pod=is_pod,
                                pod_rules=pods._pod_only if is_pod else None)

    envs = copy.deepcopy(envs)  # (defaults fill the sampled sources)
    variant = spec(*envs)
    twin = spec(*[[{**v, "value": "other"} if isinstance(v, dict) and "valueFrom" not in v
                   else v for v in env] if isinstance(env, list) else env for env in envs])
    assert _skeleton(twin) == _skeleton(variant)
    expected = full(variant)
    for _ in range(3):
        assert answer(twin) == full(twin)
    assert (answer(twin) == []) == (expected == [])  # the skeleton decides validity
    assert answer(variant) == expected
    assert answer(variant) == expected  # again


def test_a_valid_spec_is_answered_from_memory_from_its_third_replica() -> None:
    # the memory the tests above rely on is used: the first replica's text outside its
    # containers is remembered, the second's skeleton, the third is a lookup — and the
    # full rules are not run for it
    spec = {"containers": [container(env=_env("a"))]}
    poddefaults.pod_spec_defaults(spec)
    outside, inside = _skeleton(spec)
    context = (True, True, pods._pod_only)
    for value in ("a", "b"):
        replica = copy.deepcopy(spec)
        replica["containers"][0]["env"] = _env(value)
        poddefaults.pod_spec_defaults(replica)
        assert podspec.pod_spec(replica, "spec", is_pod=True, pod_rules=pods._pod_only) == []
    assert (outside, context) in podspec._OUTSIDE_SEEN
    assert (outside, inside, context) in podspec._WHOLE_VALID
    replica["containers"][0]["env"] = _env("c")
    poddefaults.pod_spec_defaults(replica)
    # the full rules leave a trace a compiled podspec cannot hide (a patched `_pod_spec`
    # would not be seen by its compiled caller): they remember the spec outside its
    # containers as valid
    podspec._SPEC_VALID.clear()
    assert podspec.pod_spec(replica, "spec", is_pod=True, pod_rules=pods._pod_only) == []
    assert len(podspec._SPEC_VALID) == 0  # answered from memory: the rules did not run
    # a spec with another context (a template's) is validated in full — first seen in
    # that context here (another test on this worker may have taught it this spec)
    podspec._WHOLE_VALID.clear()
    podspec._OUTSIDE_SEEN.clear()
    assert podspec.pod_spec(replica, "spec") == []
    assert len(podspec._SPEC_VALID) == 1


def test_skeletons_tell_apart_what_the_env_rules_read() -> None:
    # kube: ValidateEnv reads a var's name, its valueFrom and, with a source, its value; a
    # plain var's value is read by no rule — the skeleton drops it and keeps the rest apart
    def key(*env: Any) -> Any:
        return specmemo.containers_text({"containers": [{"name": "c", "env": list(env)}]})
    plain = {"name": "A", "value": "1"}
    sourced = {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    assert key(plain) == key({**plain, "value": "2"}) == key({"name": "A"})
    assert key(sourced) != key({**sourced, "value": "1"})
    assert key(plain) != key({**plain, "valueFrom": {}}) != key({**plain, "valueFrom": None})
    # a sourced var's position decides only where a cause is reported, not whether
    assert key(plain, sourced) == key(sourced, plain) != key(sourced, sourced)
    assert key({"name": {"name": "A", "valueFrom": _FIELD_SOURCE}}) != key(sourced)
    assert key("A") is None and key(1) is None  # a var that is not an object: no skeleton
    assert key({"value": "1"}) is None  # nor one without a name

    class Var(dict[str, Any]):
        pass
    assert key(Var(plain)) is None
    assert specmemo.outside_text(Var()) is None
    # absent, empty and other lists are told apart; the outside text is knownvalid's
    assert len({specmemo.containers_text(spec) for spec in (
        {}, {"containers": []}, {"initContainers": []}, {"containers": "x"})}) == 4
    spec = {"containers": [], "initContainers": [], "hostname": "h", "volumes": []}
    assert specmemo.outside_text(spec) == orjson.dumps({"hostname": "h", "volumes": []})
    known = specmemo.KnownTexts()
    known.remember((b'{"name":"null"}', ()))  # a text with `null` is never remembered
    known.remember((b"x" * (specmemo.MAX_SPEC_KEY_BYTES - 1), b"xx", ()))  # too long
    assert not known
    for k in range(specmemo.MAX_SPECS + 1):
        known.remember((str(k).encode(), ()))
    assert 0 < len(known) <= specmemo.MAX_SPECS  # bounded


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
def test_a_remembered_workload_outside_its_template_still_has_its_template_checked(
        kind: str) -> None:
    # kube: ValidateDeploymentSpec / ValidateReplicaSetSpec (pkg/apis/apps/validation): the
    # selector, counts and strategy are remembered valid, the template is validated each
    # time — ValidatePodTemplateSpecForReplicaSet: labels matched by the selector,
    # restartPolicy Always — and a change outside the template is validated again
    store = new_store()

    def workload(**spec: Any) -> dict[str, Any]:
        obj = deployment(**spec)
        obj["kind"] = kind
        return obj
    for _ in range(3):  # the second and third from memory
        create(store, workload())
    assert causes(rejected(store, workload(template=template(restartPolicy="Never")))) == [
        ("spec.template.spec.restartPolicy",
         'Unsupported value: "Never": supported values: "Always"')]
    assert causes(rejected(store, workload(template=template(labels={"app": "db"})))) == [
        ("spec.template.metadata.labels", 'Invalid value: map[string]string{"app":"db"}: '
         "`selector` does not match template `labels`")]
    assert causes(rejected(store, workload(replicas=-1))) == [
        ("spec.replicas", "Invalid value: -1: must be greater than or equal to 0")]
    bad_selector = {"matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "tier", "operator": "Bad"}]}
    assert causes(rejected(store, workload(selector=bad_selector))) == [
        ("spec.selector.matchExpressions[0].operator",
         'Invalid value: "Bad": not a valid selector operator'),
        ("spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
         '"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement{v1.'
         'LabelSelectorRequirement{Key:"tier", Operator:"Bad", Values:[]string(nil)}}}: '
         "invalid label selector")]
    create(store, workload())  # and the valid shape is still accepted


_SELECTOR_TEXT = st.sampled_from(["app", "web", "example.com/app", "-x", "", "a" * 64, 1, None])


@SETTINGS
@given(st.one_of(
    st.fixed_dictionaries({}, optional={
        "matchLabels": st.one_of(st.dictionaries(st.sampled_from(["app", "-x", "a/b/c"]),
                                                 _SELECTOR_TEXT, max_size=2), st.just("x")),
        "matchExpressions": st.lists(st.fixed_dictionaries({}, optional={
            "key": _SELECTOR_TEXT,
            "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", 1]),
            "values": st.one_of(st.lists(_SELECTOR_TEXT, max_size=2), st.just("x"))}),
            max_size=2)}),
    st.sampled_from([None, "x", [], 1])))
def test_remembered_selector_parse_is_the_computed_one(selector: Any) -> None:
    # kube: metav1.LabelSelectorAsSelector (apimachinery pkg/apis/meta/v1/helpers), whose
    # refusal makes ValidateReplicaSetSpec skip the template; remembered by the JSON text
    expected = workloads._selector_parses(copy.deepcopy(selector))
    assert workloads.selector_parses(selector) is expected
    assert workloads.selector_parses(selector) is expected  # again: from memory
