"""A Job spec's completion mode and policies as kube 1.33's validateJobSpec checks them
(pkg/apis/batch/validation): the Indexed mode's limits, podFailurePolicy rules (actions,
exit-code requirements, pod-condition patterns), successPolicy rules (succeededIndexes
intervals, succeededCount) and podReplacementPolicy.

Messages and their order are kube's; where kube would dereference an absent completions
count (a successPolicy on an Indexed Job without completions panics into a 500), the
check is skipped instead, the missing completions being reported already.
Invariant: pure functions of the spec.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from asyncop.apiserver.builtin.checks import is_qualified_name
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    duplicate,
    each,
    invalid,
    invalid_omit,
    nonnegative,
    not_supported,
    required,
    too_long,
    too_many,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_quote

ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
OPERATORS = ("In", "NotIn")
STATUSES = ("False", "True", "Unknown")
MAX_INDEXED_PARALLELISM = 100_000
MAX_FAILED_INDEXES = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
HIGH_COMPLETIONS_LIMIT = 10_000
_INDEX = re.compile(r"[+-]?[0-9]+")


def _valid_values(values: tuple[str, ...]) -> str:
    """`fmt.Sprintf("valid values: %q", sets.List(...))`: a Go-quoted []string."""
    return "valid values: [" + " ".join(go_quote(v) for v in values) + "]"


def _int32s(values: Any) -> Raw:
    """A []int32 as `%#v` prints it."""
    if not isinstance(values, list):
        return Raw("[]int32(nil)")
    return Raw("[]int32{" + ", ".join(str(as_int(v)) for v in values) + "}")


def completion_mode(spec: Obj, path: str) -> Causes:
    """The completionMode block: Indexed needs completions and bounds parallelism and
    maxFailedIndexes; per-index backoff is Indexed only."""
    mode = spec.get("completionMode")
    out: Causes = []
    completions, parallelism = as_int(spec.get("completions")), as_int(spec.get("parallelism"))
    max_failed = as_int(spec.get("maxFailedIndexes"))
    if isinstance(mode, str) and mode not in ("NonIndexed", "Indexed"):
        out.append(not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode == "Indexed":
        if completions is None:
            out.append(required(f"{path}.completions", "when completion mode is Indexed"))
        if parallelism is not None and parallelism > MAX_INDEXED_PARALLELISM:
            out.append(invalid(f"{path}.parallelism", parallelism, "must be less than or equal "
                               f"to {MAX_INDEXED_PARALLELISM} when completion mode is Indexed"))
        if completions is not None and max_failed is not None and max_failed > completions:
            out.append(invalid(f"{path}.maxFailedIndexes", max_failed,
                               "must be less than or equal to completions"))
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES:
            out.append(invalid(f"{path}.maxFailedIndexes", max_failed,
                               f"must be less than or equal to {MAX_FAILED_INDEXES}"))
        if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and \
                spec.get("backoffLimitPerIndex") is not None:
            out += _high_completions(path, parallelism, max_failed)
    elif mode is None or mode == "NonIndexed":
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            value = as_int(spec.get(key))
            if value is not None:
                out.append(invalid(f"{path}.{key}", value, "requires indexed completion mode"))
    return out


def _high_completions(path: str, parallelism: int | None, max_failed: int | None) -> Causes:
    suffix = (f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff "
              "limit per index")
    out: Causes = []
    if max_failed is None:
        out.append(required(f"{path}.maxFailedIndexes", "must be specified when completions "
                            f"is above {COMPLETIONS_SOFT_LIMIT}"))
    if parallelism is not None and parallelism > HIGH_COMPLETIONS_LIMIT:
        out.append(invalid(f"{path}.parallelism", parallelism,
                           f"must be less than or equal to {HIGH_COMPLETIONS_LIMIT} {suffix}"))
    if max_failed is not None and max_failed > HIGH_COMPLETIONS_LIMIT:
        out.append(invalid(f"{path}.maxFailedIndexes", max_failed,
                           f"must be less than or equal to {HIGH_COMPLETIONS_LIMIT} {suffix}"))
    return out


def policies(spec: Obj, path: str) -> Causes:
    """podFailurePolicy, successPolicy and podReplacementPolicy, in kube's order."""
    out: Causes = []
    policy = spec.get("podFailurePolicy")
    if isinstance(policy, dict):
        out += _failure_policy(spec, as_list(policy.get("rules")),
                               f"{path}.podFailurePolicy.rules")
    success = spec.get("successPolicy")
    if isinstance(success, dict):
        if spec.get("completionMode") != "Indexed":
            out.append(invalid(f"{path}.successPolicy", _success_value(success),
                               "requires indexed completion mode"))
        else:
            out += _success_policy(spec, as_list(success.get("rules")),
                                   f"{path}.successPolicy.rules")
    replacement = spec.get("podReplacementPolicy")
    if isinstance(replacement, str):
        allowed = ("Failed",) if isinstance(policy, dict) else ("Failed", "TerminatingOrFailed")
        if replacement not in allowed:
            out.append(not_supported(f"{path}.podReplacementPolicy", replacement, allowed))
    return out


# --- podFailurePolicy --------------------------------------------------------------------------

def _failure_policy(spec: Obj, rules: list[Any], path: str) -> Causes:
    """validatePodFailurePolicy."""
    out: Causes = []
    if len(rules) > 20:
        out.append(too_many(path, len(rules), 20))
    pod = as_dict(as_dict(spec.get("template")).get("spec"))
    names = {as_str(as_dict(c).get("name"))
             for key in ("containers", "initContainers") for c in as_list(pod.get(key))}
    for i, rule in enumerate(rules):
        out += _failure_rule(as_dict(rule), f"{path}[{i}]", spec, names)
    return out


def _failure_rule(rule: Obj, path: str, spec: Obj, names: set[str]) -> Causes:
    """validatePodFailurePolicyRule."""
    action = as_str(rule.get("action"))
    out: Causes = []
    if not action:
        out.append(required(f"{path}.action", _valid_values(ACTIONS)))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            out.append(invalid(f"{path}.action", action, "requires the backoffLimitPerIndex to "
                               "be set"))
    elif action not in ACTIONS:
        out.append(not_supported(f"{path}.action", action, ACTIONS))
    codes, conditions = rule.get("onExitCodes"), as_list(rule.get("onPodConditions"))
    if isinstance(codes, dict):
        out += _exit_codes(codes, f"{path}.onExitCodes", names)
    if conditions:
        out += _pod_conditions(conditions, f"{path}.onPodConditions")
    if isinstance(codes, dict) and conditions:
        out.append(invalid_omit(path, "specifying both OnExitCodes and OnPodConditions is not "
                                "supported"))
    if not isinstance(codes, dict) and not conditions:
        out.append(invalid_omit(path, "specifying one of OnExitCodes and OnPodConditions is "
                                "required"))
    return out


def _exit_codes(codes: Obj, path: str, names: set[str]) -> Causes:
    """validatePodFailurePolicyRuleOnExitCodes."""
    out: Causes = []
    operator = as_str(codes.get("operator"))
    if not operator:
        out.append(required(f"{path}.operator", _valid_values(OPERATORS)))
    elif operator not in OPERATORS:
        out.append(not_supported(f"{path}.operator", operator, OPERATORS))
    container = codes.get("containerName")
    if isinstance(container, str) and container not in names:
        out.append(invalid(f"{path}.containerName", container, "must be one of the container "
                           "or initContainer names in the pod template"))
    raw = codes.get("values")
    values = [as_int(v) or 0 for v in as_list(raw)]
    if not values:
        out.append(invalid(f"{path}.values", _int32s(raw), "at least one value is required"))
    elif len(values) > 255:
        out.append(too_many(f"{path}.values", len(values), 255))
    seen: set[int] = set()
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            out.append(invalid(f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
        if value in seen:
            out.append(duplicate(f"{path}.values[{j}]", value))
        seen.add(value)
    if any(a > b for a, b in itertools.pairwise(values)):
        out.append(invalid(f"{path}.values", _int32s(raw), "must be ordered"))
    return out


def _pod_conditions(patterns: list[Any], path: str) -> Causes:
    """validatePodFailurePolicyRuleOnPodConditions."""
    out: Causes = []
    if len(patterns) > 20:
        out.append(too_many(path, len(patterns), 20))
    for j, raw in enumerate(patterns):
        pattern = as_dict(raw)
        kind = as_str(pattern.get("type"))
        out += each(f"{path}[{j}].type", kind, is_qualified_name(kind))
        status = as_str(pattern.get("status"))
        if not status:
            out.append(required(f"{path}[{j}].status", _valid_values(STATUSES)))
        elif status not in STATUSES:
            out.append(not_supported(f"{path}[{j}].status", status, STATUSES))
    return out


# --- successPolicy -----------------------------------------------------------------------------

def _success_value(policy: Obj) -> Raw:
    """`%#v` of a batch.SuccessPolicy, pointers shown as their values (Go prints addresses)."""
    rules = []
    for rule in as_list(policy.get("rules")):
        rule = as_dict(rule)
        indexes, count = rule.get("succeededIndexes"), as_int(rule.get("succeededCount"))
        shown_indexes = "(*string)(nil)" if not isinstance(indexes, str) else go_quote(indexes)
        shown_count = "(*int32)(nil)" if count is None else str(count)
        rules.append(f"batch.SuccessPolicyRule{{SucceededIndexes:{shown_indexes}, "
                     f"SucceededCount:{shown_count}}}")
    return Raw("batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{" + ", ".join(rules) + "}}")


def _success_policy(spec: Obj, rules: list[Any], path: str) -> Causes:
    """validateSuccessPolicy."""
    out: Causes = []
    if not rules:
        out.append(required(path, "at least one rules must be specified when the "
                            "successPolicy is specified"))
    if len(rules) > 20:
        out.append(too_many(path, len(rules), 20))
    completions = as_int(spec.get("completions"))
    for i, rule in enumerate(rules):
        out += _success_rule(as_dict(rule), f"{path}[{i}]", completions)
    return out


def _success_rule(rule: Obj, path: str, completions: int | None) -> Causes:
    """validateSuccessPolicyRule."""
    out: Causes = []
    indexes, count = rule.get("succeededIndexes"), as_int(rule.get("succeededCount"))
    if not isinstance(indexes, str) and count is None:
        out.append(required(path, "at least one of succeededCount or succeededIndexes must be "
                            "specified"))
    total = 0
    if isinstance(indexes, str):
        if len(indexes.encode()) > 64 * 1024:
            out.append(too_long(f"{path}.succeededIndexes", 64 * 1024))
        if completions is not None:
            try:
                total = indexes_total(indexes, completions)
            except ValueError as err:
                out.append(invalid(f"{path}.succeededIndexes", indexes,
                                   f"error parsing succeededIndexes: {err}"))
    if count is not None:
        at = f"{path}.succeededCount"
        out += nonnegative(count, at)
        if completions is not None and count > completions:
            out.append(invalid(at, count, f"must be less than or equal to {completions} (the "
                               "number of specified completions)"))
        if isinstance(indexes, str) and completions is not None and count > total:
            out.append(invalid(at, count, f"must be less than or equal to {total} (the number "
                               "of indexes in the specified succeededIndexes field)"))
    return out


def indexes_total(text: str, completions: int) -> int:
    """validateIndexesFormat: how many indexes "1,3-5,7" names (ValueError: kube's reason)."""
    if not text:
        return 0
    total, last = 0, None
    for interval in text.split(","):
        first, end = _interval(interval, completions)
        if last is not None and last >= first:
            raise ValueError(f"non-increasing order, previous: {last}, current: {first}")
        total += end - first + 1
        last = end
    return total


def _interval(text: str, completions: int) -> tuple[int, int]:
    """parseIndexInterval."""
    limits = text.split("-")
    if len(limits) > 2:
        raise ValueError(f"the fragment {go_quote(text)} violates the requirement that an "
                         "index interval can have at most two parts separated by '-'")
    numbers = []
    for limit in limits:
        if not _INDEX.fullmatch(limit):
            raise ValueError(f"cannot convert string to integer for index: {go_quote(limit)}")
        if int(limit) >= completions:
            raise ValueError(f"too large index: {go_quote(limit)}")
        numbers.append(int(limit))
    if len(numbers) == 2 and numbers[0] >= numbers[1]:
        raise ValueError(f"non-increasing order, previous: {numbers[0]}, current: {numbers[1]}")
    return numbers[0], numbers[-1]
