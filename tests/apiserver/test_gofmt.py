"""Go's printing of values in kube's messages (builtin/gofmt.py), where the copies it replaced
differed: each expected text is what Go's fmt and strconv print for the value."""

from __future__ import annotations

import pytest

from asyncop.apiserver.builtin import applycheck, gotypes
from asyncop.apiserver.builtin.gofmt import go_float, go_quote, go_sharp_v, go_v, go_value


@pytest.mark.parametrize(("text", "quoted"), [
    ("web", '"web"'), ('a"b\\c', '"a\\"b\\\\c"'), ("é", '"é"'), ("\n\t", '"\\n\\t"'),
    ("\x01\x7f", '"\\x01\\x7f"'), ("\u00ad", '"\\u00ad"'), ("\U000e0001", '"\\U000e0001"'),
    ("\u00a0", '"\\u00a0"'),
])
def test_go_quote_is_strconv_quote(text: str, quoted: str) -> None:
    # kube: strconv.Quote (Go's IsPrint: L, M, N, P, S and the ASCII space are kept)
    assert go_quote(text) == quoted


@pytest.mark.parametrize(("value", "shown"), [
    (100000.0, "100000"), (1e6, "1e+06"), (1234567.5, "1.2345675e+06"), (0.5, "0.5"),
    (0.0001, "0.0001"), (1e-05, "1e-05"), (-2.5e-7, "-2.5e-07"), (float("inf"), "+Inf"),
    (float("nan"), "NaN"),
])
def test_go_float_is_shortest_g(value: float, shown: str) -> None:
    # kube prints float64 with %v, which is strconv.FormatFloat(f, 'g', -1, 64): exponent
    # form below 1e-4 and from 1e6 on
    assert go_float(value) == shown
    assert go_v(value) == shown


def test_error_body_prints_floats_and_containers_as_go_does() -> None:
    # kube: field.Error.ErrorBody — float64 with %v, an integral one decoded into an int
    # field as that integer; anything else with %#v (never Python's repr)
    assert go_value(1234567.5) == "1.2345675e+06"
    assert go_value(3.0) == "3"
    assert go_value(float("inf")) == "+Inf"
    assert go_value(["a", "b"]) == '[]string{"a", "b"}'
    assert go_value([1, "a"]) == '[]interface {}{1, "a"}'
    assert go_value({"b": "2", "a": "1"}) == 'map[string]string{"a":"1", "b":"2"}'


def test_sharp_v_of_json_values() -> None:
    # Go's %#v of map[string]interface{} contents: strings with strconv.Quote (non-ASCII
    # kept, control characters as \x), a nil element as interface {}(nil)
    assert go_sharp_v("é\x01") == '"é\\x01"'
    assert go_sharp_v([None, 1.5, True]) == "[]interface {}{interface {}(nil), 1.5, true}"
    assert go_sharp_v({"k": 100000.0}) == 'map[string]interface {}{"k":100000}'


def test_apply_type_errors_print_floats_as_go() -> None:
    # kube: structured-merge-diff's `expected boolean, got &{%v}` over the decoded value
    node = gotypes.compiled(33, "apps", "v1", "Deployment")
    assert node is not None
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"paused": 1e6}}
    error = applycheck.check(node, config, namespace="default", name="web", group="apps",
                             version="v1", kind="Deployment")
    assert error == ("failed to create typed patch object (default/web; apps/v1, "
                     "Kind=Deployment): .spec.paused: expected boolean, got &{1e+06}")
