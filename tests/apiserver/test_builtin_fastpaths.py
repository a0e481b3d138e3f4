"""The shortcuts that make built-in validation cheap answer exactly what the full rules do.

Each shortcut in `asyncop/apiserver/builtin` stands for a rule kube states elsewhere: a
string check's one-match happy path (`checks`), a Quantity's integer nano count
(`quantity`), validators that remember inputs they found valid (`knownvalid`), the
canonical walk compiled per kind (`canonical`). These tests compare each shortcut with the
rule it stands for, and pin through the Writer that a remembered answer never hides an
error kube reports.
"""

from __future__ import annotations

import copy
import math
import re
from fractions import Fraction
from typing import Any
from unittest.mock import patch

import orjson
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from asyncop.api import ApiError, StatusCause
from asyncop.apiserver.builtin import (
    checks,
    containers,
    fastwalk,
    gotypes,
    knownvalid,
    quantity,
    specmemo,
)
from asyncop.apiserver.storage.writer import WriteContext
from tests.apiserver.podkit import causes, container, create, new_store, pod, rejected

SETTINGS = settings(max_examples=400, deadline=None, derandomize=True, database=None)
NEVER = re.compile("(?!)")  # disables a fast path: every value takes the rule-by-rule way


def _names(alphabet: str) -> st.SearchStrategy[str]:
    """Short texts over `alphabet`, and long ones around kube's 63 and 253 byte limits."""
    long = st.builds(lambda a, sep, b: "a" * a + sep + "b" * b, st.integers(0, 260),
                     st.sampled_from(["", "/", ".", "-", "é"]), st.integers(0, 70))
    return st.one_of(st.text(alphabet=alphabet, max_size=12), long)


# --- checks: the happy path of a string check is one match ------------------------------------

@SETTINGS
@given(_names("aZ09-._/é\n"))
def test_qualified_name_fast_path_agrees_with_the_rules(value: str) -> None:
    # kube: IsQualifiedName (apimachinery pkg/util/validation)
    fast = checks.is_qualified_name(value)
    with patch.object(checks, "_QUALIFIED_OK", NEVER):
        assert fast == checks.is_qualified_name(value)


@SETTINGS
@given(_names("az09-A_\n"))
def test_port_name_fast_path_agrees_with_the_rules(value: str) -> None:
    # kube: IsValidPortName (IANA_SVC_NAME)
    fast = checks.is_valid_port_name(value)
    with patch.object(checks, "_PORT_NAME_OK", NEVER):
        assert fast == checks.is_valid_port_name(value)


def test_env_var_names_are_printable_ascii_other_than_equals() -> None:
    # kube: IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, 1.33), every
    # character of the first 256
    for code in range(0x100):
        char = chr(code)
        valid = 0x20 <= code <= 0x7E and char != "="
        for value in (char, f"A{char}B"):
            assert (checks.is_relaxed_env_var_name(value) == []) is valid, repr(value)
            assert bool(checks.valid_relaxed_env_var_name(value)) is valid, repr(value)
    assert checks.is_relaxed_env_var_name("") == ["environment variable name must be non-empty"]


@pytest.mark.parametrize(("check", "limit"), [
    (checks.is_dns1123_label, 63), (checks.is_dns1123_subdomain, 253),
    (checks.is_label_value, 63), (checks.is_config_map_key, 253)])
def test_length_limits_hold_on_the_fast_path(check: Any, limit: int) -> None:
    # kube: the `len(value) > N` checks of IsDNS1123Label/Subdomain, IsValidLabelValue,
    # IsConfigMapKey come before the regex ones (Go's len: bytes)
    assert check("a" * limit) == []
    assert check("a" * (limit + 1)) == [f"must be no more than {limit} characters"]


@pytest.mark.parametrize(("key", "expected"), [
    (".", ["must not be '.'"]), ("..", ["must not be '..'"]),
    ("..a", ["must not start with '..'"]), (".a", []), ("a..b", []), ("a.", [])])
def test_config_map_keys_with_dots(key: str, expected: list[str]) -> None:
    # kube: IsConfigMapKey's `.`/`..` rules
    assert checks.is_config_map_key(key) == expected


_ENV_VARS = st.lists(st.one_of(
    st.fixed_dictionaries({"name": st.one_of(st.sampled_from(["A", "B_1", "x.y", "", "A=B",
                                                             "é", "a b"]), st.integers())},
                          optional={"value": st.sampled_from(["", "v"]),
                                    "valueFrom": st.sampled_from([
                                        {}, {"fieldRef": {"fieldPath": "metadata.name"}},
                                        {"secretKeyRef": {"name": "s", "key": "k"}},
                                        {"secretKeyRef": {"name": "s"}}])}),
    st.sampled_from([{}, "A", None, 3])), max_size=6)


@SETTINGS
@given(_ENV_VARS)
def test_env_quick_test_agrees_with_each_var(items: list[Any]) -> None:
    # kube: ValidateEnv (validateEnvVarValueFrom) — the quick all-names-valid path gives
    # the same causes, in the same order, as the var-by-var loop with its messages
    assert containers.env(items, "p") == containers._each_var(items, "p")


# --- quantity: integer nanos stand for the exact value ----------------------------------------

_QUANTITY_TEXT = st.builds(
    lambda sign, whole, frac, suffix: f"{sign}{whole}{frac}{suffix}",
    st.sampled_from(["", "-", "+"]), st.integers(0, 10**20).map(str),
    st.one_of(st.just(""), st.integers(0, 10**12).map(lambda n: f".{n}")),
    st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti",
                     "Pi", "Ei", "e3", "E-6", "e-12", "e20"]))


@SETTINGS
@given(_QUANTITY_TEXT, _QUANTITY_TEXT)
def test_nano_arithmetic_matches_the_exact_values(a_text: str, b_text: str) -> None:
    # kube: Quantity.Cmp, Quantity.Sign and Quantity.RoundUp are exact (inf.Dec)
    try:
        a, b = quantity.parse_text(a_text), quantity.parse_text(b_text)
    except quantity.QuantityError:
        return
    assert a.nanos == a.value * 10**9  # every parsed value is a whole number of nanos
    assert quantity.compare(a, b) == (a.value > b.value) - (a.value < b.value)
    assert a.signum() == (a.value > 0) - (a.value < 0)
    units = a.value / Fraction(1, 1000)
    milli = math.ceil(abs(units)) * (1 if units > 0 else -1)
    assert a.round_up(-3).value == Fraction(milli, 1000)
    assert (a.round_up(-3) is a) is (units.denominator == 1)


def test_a_value_finer_than_nano_compares_exactly() -> None:
    # a Quantity built by hand (not parsed) may be finer than kube's precision
    fine = quantity.Quantity(Fraction(1, 3 * 10**9), "DecimalSI")
    assert fine.nanos is None
    assert quantity.compare(fine, quantity.parse_text("1n")) == -1
    assert fine.signum() == 1


# --- knownvalid: only "no causes" is remembered -----------------------------------------------

def _counting() -> tuple[Any, list[Any]]:
    seen: list[Any] = []

    @knownvalid.remembers_valid
    def check(value: Any, path: str, limit: int) -> list[StatusCause]:
        seen.append(value)
        number = value.get("n") if isinstance(value, dict) else None
        if isinstance(number, int | float) and number > limit:
            return [{"field": path, "reason": "FieldValueInvalid", "message": "too big"}]
        return []

    return check, seen


def test_a_valid_input_is_validated_once_per_context() -> None:
    check, seen = _counting()
    assert check({"n": 1}, "a", 5) == [] and check({"n": 1}, "b", 5) == []
    assert len(seen) == 1
    # the context is part of the key: the same value under another limit is checked again
    assert check({"n": 1}, "a", 0) == [{"field": "a", "reason": "FieldValueInvalid",
                                        "message": "too big"}]
    assert len(seen) == 2


def test_an_invalid_input_is_validated_every_time_with_its_own_path() -> None:
    check, seen = _counting()
    assert check({"n": 9}, "x", 5)[0]["field"] == "x"
    assert check({"n": 9}, "y", 5)[0]["field"] == "y"
    assert len(seen) == 2


@pytest.mark.parametrize("twins", [
    ({"n": 1}, {"n": 1.0}), ({"n": 1}, {"n": True}), ({"a": 1, "b": 2}, {"b": 2, "a": 1})])
def test_values_with_different_json_texts_are_different_keys(twins: tuple[Any, Any]) -> None:
    check, seen = _counting()
    for value in twins:
        check(value, "p", 5)
    assert len(seen) == 2


class _Str(str):
    pass


@pytest.mark.parametrize("value", [
    {"n": float("nan")}, {"n": float("inf")}, {"s": _Str("x")}, {1: "non-string key"},
    {"n": 2**70}, {"n": None}, {"s": "x" * (knownvalid.MAX_KEY_BYTES + 1)}])
def test_inputs_whose_text_does_not_identify_them_are_never_remembered(value: Any) -> None:
    # orjson writes NaN and infinities as null; subclasses, non-string keys and huge
    # integers are not written; oversized texts are not kept
    assert knownvalid.memory_key(value) is None
    check, seen = _counting()
    check(value, "p", 5)
    check(value, "p", 5)
    assert len(seen) == 2


def test_the_memory_is_bounded() -> None:
    known = knownvalid.KnownValid()
    for i in range(knownvalid.MAX_ENTRIES + 10):
        known.remember(knownvalid.memory_key({"i": i}))
    assert len(known) <= knownvalid.MAX_ENTRIES


# --- through the Writer: a remembered part never hides an error --------------------------------

def test_a_remembered_probe_does_not_hide_an_invalid_one() -> None:
    # kube: validateProbe → ValidateNonnegativeField (pkg/apis/core/validation)
    store = new_store()
    probe = {"tcpSocket": {"port": 80}, "periodSeconds": 5}
    create(store, pod(containers=[container(livenessProbe=probe)]))
    create(store, pod(containers=[container(livenessProbe=probe)]))
    bad = {"tcpSocket": {"port": 80}, "periodSeconds": -5}
    for _ in range(2):  # refused every time, with the same cause
        status = rejected(store, pod(containers=[container(livenessProbe=bad)]))
        assert causes(status) == [("spec.containers[0].livenessProbe.periodSeconds",
                                   "Invalid value: -5: must be greater than or equal to 0")]


def test_a_remembered_value_from_depends_on_the_var_having_a_value() -> None:
    # kube: validateEnvVarValueFrom — a source with a non-empty `value` is refused
    store = new_store()
    source = {"fieldRef": {"fieldPath": "metadata.name"}}
    create(store, pod(containers=[container(env=[{"name": "A", "valueFrom": source}])]))
    status = rejected(store, pod(containers=[container(
        env=[{"name": "A", "value": "x", "valueFrom": source}])]))
    assert causes(status) == [("spec.containers[0].env[0].valueFrom",
                               'Invalid value: "": may not be specified when `value` is not '
                               "empty")]


def test_a_remembered_part_does_not_hide_a_decoding_error() -> None:
    # kube: strict decoding (unknown fields) and Go's type errors inside a part replicas
    # repeat (a probe): the same probe with one more field, or one value of another type,
    # is a different text and is walked again
    store = new_store()
    probe = {"tcpSocket": {"port": 80}, "periodSeconds": 5}
    create(store, pod(containers=[container(livenessProbe=probe)]))
    rt = store.resolve("", "v1", "pods")
    for bad, message in (({**probe, "periodSecond": 5}, 'unknown field "spec.containers[0].'
                          'livenessProbe.periodSecond"'),
                         ({**probe, "periodSeconds": "5"}, "json: cannot unmarshal string into "
                          "Go struct field Probe.spec.containers.livenessProbe.periodSeconds of "
                          "type int32")):
        with pytest.raises(ApiError) as err:
            store.writer.create(rt, pod(containers=[container(livenessProbe=bad)]),
                                ctx=WriteContext(field_validation="Strict"))
        assert err.value.status["code"] == 400
        assert message in err.value.status["message"]


def test_a_part_is_remembered_only_when_the_walk_left_it_unchanged() -> None:
    # the decoding walk drops null fields and passes quantities through the hook: a part
    # it changed is walked again next time (here a hook that rewrites every quantity)
    node = gotypes.compiled(33, "", "v1", "Pod")
    assert node is not None
    text = orjson.dumps({"limits": {"cpu": "7"}})

    def body() -> dict[str, Any]:
        return {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "7"}}}]}}

    def remembered() -> bool:
        return any(key[0] == text for key in fastwalk._CLEAN)  # type: ignore[index]

    changed = body()
    with patch.object(fastwalk, "canonical_quantity", lambda value: f"{value}!"):
        fastwalk.fast(changed, node)
    assert changed["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "7!"}}
    assert not remembered()
    fastwalk.fast(body(), node)
    assert remembered()


def test_a_remembered_container_is_checked_against_the_volumes_of_its_pod() -> None:
    # kube: ValidateVolumeMounts — a mount names a volume of the pod; the same container is
    # valid in a pod with that volume and refused in one without it
    store = new_store()
    ctr = container(volumeMounts=[{"name": "data", "mountPath": "/data"}])
    create(store, pod(containers=[ctr], volumes=[{"name": "data", "emptyDir": {}}]))
    status = rejected(store, pod(containers=[ctr], volumes=[{"name": "other", "emptyDir": {}}]))
    assert causes(status) == [("spec.containers[0].volumeMounts[0].name",
                               'Not found: "data"')]


# --- canonical: the compiled walk reaches every Quantity --------------------------------------

def test_quantities_inside_list_items_are_stored_canonically() -> None:
    # kube: resource.Quantity's MarshalJSON, for the divisors of env vars and downward API
    # volume files and an emptyDir's sizeLimit (lists of structs on the way)
    store = new_store()
    ref = {"resource": "limits.memory", "divisor": "1024Ki"}
    made = create(store, pod(
        containers=[container(env=[{"name": "A", "value": "a"},
                                   {"name": "M", "valueFrom": {"resourceFieldRef": ref}}])],
        volumes=[{"name": "d", "downwardAPI": {"items": [
                     {"path": "m", "resourceFieldRef": {"containerName": "c", **ref}}]}},
                 {"name": "e", "emptyDir": {"sizeLimit": "1024Mi"}}]))
    spec = made["spec"]
    assert spec["containers"][0]["env"][1]["valueFrom"]["resourceFieldRef"]["divisor"] == "1Mi"
    items = spec["volumes"][0]["downwardAPI"]["items"]
    assert items[0]["resourceFieldRef"]["divisor"] == "1Mi"
    assert spec["volumes"][1]["emptyDir"]["sizeLimit"] == "1Gi"


# --- fastwalk: a pod spec remembered by its skeleton (plain env vars left out) ----------------

_ENV_VALUES = st.one_of(st.sampled_from(["", "a", "b"]), st.integers(4, 5), st.none(),
                        st.booleans(), st.just({}),
                        st.just({"fieldRef": {"fieldPath": "metadata.name"}}))
_ENV_VAR = st.one_of(
    st.dictionaries(st.sampled_from(["name", "value", "valueFrom", "valu"]), _ENV_VALUES,
                    max_size=3),
    _ENV_VALUES)
_PLAIN = st.builds(lambda n, v: {"name": n, "value": v}, st.text(max_size=2),
                   st.text(max_size=2))
#: pairs of vars at one position: the same var; two plain vars; a plain var and a lookalike
#: (name and value, one of another type or null), which must never share a skeleton
_VAR_PAIRS = st.one_of(
    _ENV_VAR.map(lambda v: (v, copy.deepcopy(v))),
    st.tuples(_PLAIN, _PLAIN),
    st.tuples(_PLAIN, st.builds(lambda n, v: {"name": n, "value": v},
                                st.one_of(st.text(max_size=2), st.integers(4, 5)),
                                st.one_of(st.none(), st.integers(4, 5), st.just({})))))


def _walked(spec: Any, node: gotypes.Node) -> tuple[Any, Any]:
    """What `fast` answers for a pod spec (its key count, or Slow), and the spec after."""
    try:
        return fastwalk.fast(spec, node), spec
    except fastwalk.Slow:
        return "slow", spec


@SETTINGS
@given(st.lists(_VAR_PAIRS, max_size=5))
def test_specs_with_one_skeleton_decode_alike(pairs: list[tuple[Any, Any]]) -> None:
    # kube: the JSON decoder — two specs the memory cannot tell apart (the same skeleton:
    # they differ only in the strings of plain vars, {"name": str, "value": str}) decode
    # alike; a var of another type or with a null or a third key is never left out
    node = gotypes.compiled(33, "", "v1", "Pod")  # (a pod's spec is where the memory is)
    assert node is not None

    def pod_of(env: list[Any]) -> dict[str, Any]:
        return {"spec": {"containers": [{"name": "c", "image": "nginx", "env": env}]}}

    first, second = pod_of([a for a, _ in pairs]), pod_of([b for _, b in pairs])
    assume(specmemo.skeleton(first["spec"]) == specmemo.skeleton(second["spec"]))
    fastwalk._SPECS.clear()
    _walked(first, node)  # remembered, if it decodes unchanged
    remembered = _walked(copy.deepcopy(second), node)
    fastwalk._SPECS.clear()
    assert remembered == _walked(second, node)


def test_a_remembered_spec_does_not_hide_a_var_that_is_not_plain() -> None:
    # kube: Go's decoder on EnvVar — a value of another type is an UnmarshalTypeError, an
    # unknown key a strict decoding error; the same spec with plain vars was remembered
    store = new_store()
    rt = store.resolve("", "v1", "pods")
    plain = [{"name": f"V{i}", "value": f"v{i}"} for i in range(3)]
    for i in range(3):
        create(store, pod(containers=[container(env=[{**v, "value": f"{v['value']}-{i}"}
                                                     for v in plain])]))
    assert fastwalk._SPECS  # remembered
    for bad, message in (
            ({"name": "V1", "value": 5}, "json: cannot unmarshal number into Go struct field "
             "EnvVar.spec.containers.env.value of type string"),
            ({"name": "V1", "value": "x", "valu": "y"},
             'strict decoding error: unknown field "spec.containers[0].env[1].valu"')):
        with pytest.raises(ApiError) as err:
            store.writer.create(rt, pod(containers=[container(env=[plain[0], bad, plain[2]])]),
                                ctx=WriteContext(field_validation="Strict"))
        assert err.value.status["code"] == 400
        assert message in err.value.status["message"]
    made = create(store, pod(containers=[container(env=[plain[0], {"name": "V1",
                                                                   "value": None}])]))
    assert made["spec"]["containers"][0]["env"] == [plain[0], {"name": "V1"}]  # null: dropped


def test_a_remembered_spec_still_finds_duplicate_keys_in_the_body() -> None:
    # kube: strict decoding reports a JSON key given twice (`duplicate field`), counted
    # against the keys the walk saw — a remembered spec answers the same count
    from asyncop.apiserver.builtin.decode import decode

    store = new_store()
    rt = store.resolve("", "v1", "pods")
    env = [{"name": "A", "value": "a"}, {"name": "B", "value": "b"}]
    for _ in range(3):
        create(store, pod(containers=[container(env=env)]))
    body = orjson.dumps(pod(name="dup", containers=[container(env=env)]))
    raw = body.replace(b'"value":"b"', b'"value":"b","value":"c"')
    with pytest.raises(ApiError) as err:
        decode(rt, orjson.loads(raw), minor=store.minor, validation="Strict", warnings=[],
               raw=raw)
    assert 'duplicate field "spec.containers[0].env[1].value"' in err.value.status["message"]


def test_the_spec_memory_is_bounded_and_keeps_no_null_text() -> None:
    # the remembered specs stay within specmemo's bounds: at most MAX_SPECS keys, none of
    # whose text holds `null` or is longer than MAX_SPEC_KEY_BYTES
    node = gotypes.compiled(33, "", "v1", "Pod")
    assert node is not None
    fastwalk._SPECS.clear()

    def walked(**spec: Any) -> None:
        fastwalk.fast({"spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}, node)

    walked(hostname="null")  # a text with `null` in it
    walked(hostname="h" * 63, subdomain="s" * 63,
           nodeSelector={f"k{i}": "v" * 60 for i in range(300)})  # over MAX_SPEC_KEY_BYTES
    assert not fastwalk._SPECS
    for i in range(specmemo.MAX_SPECS + 1):
        walked(hostname=f"h{i}")
    assert 0 < len(fastwalk._SPECS) <= specmemo.MAX_SPECS
