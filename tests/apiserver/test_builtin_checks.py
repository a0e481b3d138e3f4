"""apimachinery's string checks (builtin/checks.py), where the two copies it replaced
differed. kube: pkg/util/validation/validation.go (apimachinery v0.33)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from asyncop.apiserver import Store
from asyncop.apiserver.builtin import checks
from tests.apiserver.podkit import causes, create, new_store, pod, rejected

LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
         "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
         "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
QUALIFIED = ("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',"
             "  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
             "prefix and '/' (e.g. 'example.com/MyName')")


@pytest.fixture(scope="module")
def store() -> Store:
    return new_store()


@pytest.mark.parametrize("check", [
    checks.is_dns1123_label, checks.is_dns1123_subdomain, checks.is_dns1035_label,
    checks.is_qualified_name, checks.is_label_value, checks.is_config_map_key,
    checks.is_valid_percent, checks.is_http_header_name, checks.is_valid_port_name,
])
def test_a_trailing_newline_never_matches(check: Callable[[str], list[str]]) -> None:
    # kube's regexps are "^…$" without the (?m) flag: `$` is the end of the text, so "web\n"
    # is refused (Python's re.match with `$` would accept it)
    text = "10%\n" if check is checks.is_valid_percent else "web\n"
    assert check(text)
    assert not check(text[:-1])


def test_pod_hostname_with_a_trailing_newline_is_refused(store: Store) -> None:
    # kube: ValidatePodSpec → ValidateDNS1123Label(spec.Hostname)
    status = rejected(store, pod(hostname="web\n"))
    assert causes(status) == [("spec.hostname", f'Invalid value: "web\\n": {LABEL}')]
    create(store, pod(hostname="web"))


def test_a_key_with_two_slashes_is_not_a_qualified_name(store: Store) -> None:
    # kube: IsQualifiedName's default case says "a qualified name …" (not "a valid label
    # key"); ValidateLabels → ValidateLabelName on spec.nodeSelector
    assert checks.is_qualified_name("a/b/c") == [QUALIFIED]
    status = rejected(store, pod(nodeSelector={"a/b/c": "x"}))
    assert causes(status) == [("spec.nodeSelector", f'Invalid value: "a/b/c": {QUALIFIED}')]


def test_lengths_are_counted_in_bytes(store: Store) -> None:
    # kube: `len(value) > LabelValueMaxLength` in IsValidLabelValue is Go's len(string), the
    # UTF-8 length: 40 'é' are 80 bytes, too long as well as outside the regexp
    value = "é" * 40
    assert checks.is_label_value(value)[0] == "must be no more than 63 characters"
    assert len(checks.is_label_value(value)) == 2
    assert checks.is_label_value("a" * 63) == []
    status = rejected(store, pod(nodeSelector={"disk": value}))
    assert causes(status) == [
        ("spec.nodeSelector", f'Invalid value: "{value}": must be no more than 63 characters'),
        ("spec.nodeSelector", f'Invalid value: "{value}": {LABEL_VALUE}')]


def test_gt_and_lt_are_node_selector_operators_only(store: Store) -> None:
    # kube: ValidateNodeSelectorRequirement takes Gt and Lt with exactly one value;
    # ValidateLabelSelectorRequirement (a pod affinity term's labelSelector) does not
    node = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    gt = {"key": "cores", "operator": "Gt", "values": ["4", "8"]}
    status = rejected(store, pod(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [gt]}]}}}))
    assert causes(status) == [(f"{node}.nodeSelectorTerms[0].matchExpressions[0].values",
                               "Required value: must be specified single value when "
                               "`operator` is 'Lt' or 'Gt'")]
    create(store, pod(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{**gt, "values": ["4"]}]}]}}}))
    status = rejected(store, pod(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "zone", "labelSelector": {"matchExpressions": [{**gt}]}}]}}))
    assert causes(status) == [(
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
        "labelSelector.matchExpressions[0].operator",
        'Invalid value: "Gt": not a valid selector operator')]
