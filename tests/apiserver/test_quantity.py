"""resource.Quantity as kube parses, compares and serialises it (builtin/quantity.py).

Every expected value below comes from kube's own tests of the type
(apimachinery pkg/api/resource/quantity_test.go: TestQuantityParseEmit, TestQuantityString,
TestQuantityParse, TestQuantityRoundUp, TestQuantityCmp) or follows from ParseQuantity's
fast path, which keeps a written text that is already canonical.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from asyncop.apiserver.builtin.quantity import (
    FORMAT_WRONG,
    NUMERIC_WRONG,
    OUT_OF_RANGE,
    SUFFIX_WRONG,
    QuantityError,
    canonical,
    compare,
    go_struct,
    parse,
    parse_error,
    parse_text,
    sign,
)
from tests.apiserver import podkit
from tests.apiserver.builtinkit import Kit, invalid_message


@pytest.mark.parametrize(("text", "expected"), [
    # kube: TestQuantityParseEmit
    ("1Ki", "1Ki"), ("1Mi", "1Mi"), ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1000M", "1G"),
    (".001Ki", "1024m"), (".000001Ki", "1024u"), (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
    # kube: TestQuantityString, the "alternate" spellings and their canonical form
    ("307200Ki", "300Mi"), ("1025024Mi", "1001Gi"), ("1024Gi", "1Ti"), ("5000m", "5"),
    ("0.5", "500m"), ("0.001T", "1G"), ("1000u", "1m"), ("1.08", "1080m"),
    ("1080000000n", "1080m"), (".001e12", "1e9"), ("0.001e0", "1e-3"), ("1000e-12", "1e-9"),
    # canonical already: kept as written (ParseQuantity's fast path)
    ("100m", "100m"), ("1000Mi", "1000Mi"), ("300M", "300M"), ("1e3", "1e3"), ("1n", "1n"),
    ("80u", "80u"), ("1234567M", "1234567M"), ("1025", "1025"), ("0", "0"),
    # …which keeps texts kube would not write itself
    ("1.500", "1.500"), ("1.", "1."), ("+1", "+1"), ("1E-3", "1E-3"),
    # kube: TestQuantityParse, values that round up to nano or change format
    ("3.001n", "4n"), ("0.0000000001", "1n"), ("0.00000012345", "124n"), ("1.1E-9", "2e-9"),
    ("100.035Ki", "102435840m"), ("0.5Mi", "512Ki"), ("1.5Gi", "1536Mi"),
    ("9Ei", "9223372036854775807"), ("12E", "12E"), (".", "0"), ("0n", "0"), ("0Ki", "0"),
    # negative values keep their sign
    ("-1.5", "-1500m"), ("-1024Mi", "-1Gi"),
    # kube: suffixHandler.interpret reads an exponent with strconv.ParseInt(…, 64) and keeps
    # int32(parsed): e4294967297 is e1
    ("1e4294967297", "10"),
])
def test_canonical_string(text: str, expected: str) -> None:
    assert canonical(text) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (2, "2"), (1.5, "1500m"), (0.25, "250m"), (1e-05, "10e-6"), (1024, "1024"),
    (" 1Gi ", "1Gi"),  # kube's UnmarshalJSON trims the text
])
def test_json_numbers_and_padded_strings(value: int | float | str, expected: str) -> None:
    # kube: Quantity.UnmarshalJSON parses a JSON number's text like a string
    assert canonical(value) == expected


@pytest.mark.parametrize(("text", "message"), [
    # kube: TestQuantityParse's invalid list, with ParseQuantity's errors
    ("1.1.M", FORMAT_WRONG), ("1+1.0M", FORMAT_WRONG), ("0.1am", FORMAT_WRONG),
    ("aoeu", FORMAT_WRONG), ("64Mo", FORMAT_WRONG), ("", FORMAT_WRONG), ("1 Gi", FORMAT_WRONG),
    ("0.1mi", SUFFIX_WRONG), (".5i", SUFFIX_WRONG), ("1i", SUFFIX_WRONG),
    ("-3.01i", SUFFIX_WRONG), ("-3.01e-", SUFFIX_WRONG), ("1e9223372036854775808", SUFFIX_WRONG),
    (".e-10", NUMERIC_WRONG),
])
def test_malformed_quantities(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as err:
        parse_text(text)
    assert str(err.value) == message


def test_error_messages_are_kubes() -> None:
    # kube: resource.ErrFormatWrong / ErrSuffix / ErrNumeric
    assert FORMAT_WRONG == ("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    assert SUFFIX_WRONG == "unable to parse quantity's suffix"
    assert NUMERIC_WRONG == "unable to parse numeric part of quantity"
    with pytest.raises(QuantityError):
        canonical(True)  # a bool is not a quantity (decoding reports it)


@pytest.mark.parametrize(("a", "b", "expected"), [
    # kube: TestQuantityCmp
    ("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1),
    ("1Gi", "1024Mi", 0), ("1.5", "1500m", 0), ("1k", "1Ki", -1),
])
def test_exact_comparison(a: str, b: str, expected: int) -> None:
    assert compare(parse(a), parse(b)) == expected


@pytest.mark.parametrize(("text", "scale", "expected"), [
    # kube: TestQuantityRoundUp (away from zero)
    ("9.01", -3, Fraction(901, 100)), ("9.01", -2, Fraction(901, 100)),
    ("9.01", -1, Fraction(91, 10)), ("9.01", 0, Fraction(10)), ("9.01", 2, Fraction(100)),
    ("-9.01", -1, Fraction(-91, 10)), ("-9.01", 0, Fraction(-10)),
])
def test_round_up(text: str, scale: int, expected: Fraction) -> None:
    assert parse(text).round_up(scale).value == expected


def test_round_up_to_milli_keeps_a_kept_text() -> None:
    # kube: SetDefaults_ResourceList rounds to milli; an exact value keeps its text
    assert str(parse("1.500").round_up(-3)) == "1.500"
    assert str(parse("100u").round_up(-3)) == "1m"
    assert str(parse("1500u").round_up(-3)) == "2m"


@pytest.mark.parametrize(("text", "shown"), [
    # ParseQuantity's fast path keeps canonical text; RoundUp(-3) (SetDefaults_ResourceList)
    # rounds finer values up to milli and drops it
    ("1500m", '{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, '
              's:"1500m", Format:"DecimalSI"}'),
    ("0.5", '{value:5, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", '
            'Format:"DecimalSI"}'),
    ("2Gi", '{value:2147483648, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, '
            's:"2Gi", Format:"BinarySI"}'),
    ("100n", '{value:1, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", '
             'Format:"DecimalSI"}'),
])
def test_go_struct(text: str, shown: str) -> None:
    """`%#v` of a defaulted Quantity, as field errors print it (its String() is the
    pointer's)."""
    assert go_struct(text) == "resource.Quantity{i:resource.int64Amount" + shown


def test_go_struct_of_an_inf_dec() -> None:
    """Values beyond the int64 fast path are an inf.Dec pointer in kube: not rendered."""
    assert go_struct("12345678901234567890") is None


@pytest.mark.parametrize(("text", "message"), [
    # kube: ParseQuantity — a scale finer than nano leaves the int64 fast path, and the
    # inf.Dec path needs a digit (the decode check used to stop at the fast path's precision)
    ("e-74", NUMERIC_WRONG), ("E-10", NUMERIC_WRONG), ("+.e-12", NUMERIC_WRONG),
    ("e-9", None), ("1e4294967297", None), ("1e9223372036854775808", SUFFIX_WRONG),
])
def test_decode_check_is_parse_quantity(text: str, message: str | None) -> None:
    assert parse_error(text) == message


@pytest.mark.parametrize(("text", "expected"), [
    ("3E", 1), ("-3E", -1), ("0Ei", 0), ("-0.000", 0), ("1e-30", 1), ("-.5Ki", -1), ("0", 0),
])
def test_sign(text: str, expected: int) -> None:
    # kube: Quantity.Sign (the inf.Dec path rounds a non-zero value up to nano, never to 0)
    assert sign(text) == expected


def test_go_struct_rounds_negative_values_away_from_zero() -> None:
    # kube: SetDefaults_ResourceList's RoundUp(-3) → int64Amount.AsScale →
    # negativeScaleInt64, which rounds away from zero: -1500u is -2m, -4u is -1m
    assert go_struct("-1500u") == ("resource.Quantity{i:resource.int64Amount{value:-2, "
                                   "scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, "
                                   's:"", Format:"DecimalSI"}')
    assert go_struct("-4u", defaulted=False) == (
        "resource.Quantity{i:resource.int64Amount{value:-4, scale:-6}, d:resource."
        'infDecAmount{Dec:(*inf.Dec)(nil)}, s:"-4u", Format:"DecimalSI"}')


def test_go_struct_of_an_inf_dec_with_a_stand_in_pointer() -> None:
    # kube: ParseQuantity's slow path keeps BinarySI unless 0 < value < 1 (.5Ki is 512)
    shown = go_struct(".5Ki", defaulted=False, dec="0xc000010000")
    assert shown == ("resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource."
                     'infDecAmount{Dec:(*inf.Dec)(0xc000010000)}, s:"", Format:"BinarySI"}')


def test_hpa_target_in_exa_is_checked_not_crashed() -> None:
    # kube: validateMetricTarget — Value.Sign() != 1 is "must be positive"; "3E" is fine, and
    # "-3E" prints the int64Amount the fast path built (the sign helper used to raise on an
    # "E" suffix)
    def hpa(value: str, name: str = "h") -> dict[str, object]:
        return {"metadata": {"name": name}, "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "maxReplicas": 5, "metrics": [{"type": "Object", "object": {
                "describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps"},
                "target": {"type": "Value", "value": value}}}]}}

    kit = Kit()
    kit.create("horizontalpodautoscalers", hpa("3E", "exa"))
    err = kit.refused("horizontalpodautoscalers", hpa("-3E"))
    assert invalid_message(err) == (
        'HorizontalPodAutoscaler.autoscaling "h" is invalid: spec.metrics[0].object.target.'
        "value: Invalid value: resource.Quantity{i:resource.int64Amount{value:-3, scale:18}, "
        'd:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"-3E", Format:"DecimalSI"}: must be '
        "positive")


def test_huge_exponents_are_accepted_and_stored_as_written() -> None:
    # kube accepts any int32 scale (suffixHandler.interpret; ParseQuantity keeps
    # int64Amount{1, 2000000000}); exact arithmetic on it is out of reach here: the decode
    # check accepts it, parsing refuses it with OUT_OF_RANGE (quantity.py's docstring), and a
    # Pod holding one is stored with the value as written instead of hanging the server
    assert parse_error("1e2000000000") is None
    with pytest.raises(QuantityError) as err:
        parse_text("1e2000000000")
    assert str(err.value) == OUT_OF_RANGE
    assert parse_text("1e999").value == 10**999
    limits = {"cpu": "1e2000000000"}
    stored = podkit.create(podkit.new_store(),
                           podkit.pod(containers=[podkit.container(resources={"limits": limits})]))
    assert stored["spec"]["containers"][0]["resources"]["limits"] == limits


def test_an_integer_resource_error_prints_the_quantity_as_parsed() -> None:
    # kube: ValidateResourceQuantityValue prints the Quantity struct (%#v) of the defaulted
    # value; SetDefaults_ResourceList's RoundUp(-3) leaves 1.5 as ParseQuantity built it,
    # int64Amount{15, -1} with no kept text (not the canonical 1500m)
    store = podkit.new_store()
    status = podkit.rejected(store, podkit.pod(containers=[podkit.container(
        resources={"limits": {"example.com/gpu": "1.5"}})]))
    assert podkit.causes(status)[0] == (
        "spec.containers[0].resources.limits[example.com/gpu]",
        "Invalid value: resource.Quantity{i:resource.int64Amount{value:15, scale:-1}, "
        'd:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}: must be an '
        "integer")
