"""asyncop.api.labels: the one label-selector implementation (runtime and API server)."""

from __future__ import annotations

import pytest

from asyncop.api.labels import LabelSelector, SelectorError, parse_selector

LABELS = {"app": "web", "tier": "front", "size": "7"}


@pytest.mark.parametrize(("selector", "expected"), [
    ("", True), ("app=web", True), ("app==web", True), ("app!=web", False),
    ("missing!=x", True), ("app in (web,api)", True), ("app notin (web)", False),
    ("missing notin (x)", True), ("app", True), ("!app", False), ("!missing", True),
    ("size>5", True), ("size<5", False), ("app=web,tier=back", False),
    ({"app": "web"}, True), ({"matchLabels": {"app": "web"}}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]}, False),
    ({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, True),
])
def test_matching(selector: object, expected: bool) -> None:
    sel = parse_selector(selector)  # type: ignore[arg-type]
    assert sel.matches(LABELS) is expected
    assert sel.matches_object({"metadata": {"labels": LABELS}}) is expected


def test_errors_carry_kubes_message() -> None:
    with pytest.raises(SelectorError, match=r"^unable to parse requirement: invalid label key "
                                            r'"-bad": name part must consist of alphanumeric'):
        parse_selector("-bad=x")
    with pytest.raises(SelectorError, match="for 'gt', 'lt' operators, exactly one value"):
        parse_selector("size>x")
    with pytest.raises(SelectorError, match='"Near" is not a valid label selector operator'):
        parse_selector({"matchExpressions": [{"key": "a", "operator": "Near"}]})


def test_empty_and_none_match_everything() -> None:
    assert parse_selector(None).empty and parse_selector("  ").empty
    assert LabelSelector().matches(None)
