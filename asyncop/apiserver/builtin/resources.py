"""A container's resources, validated as kube's ValidateContainerResourceRequirements does
(pkg/apis/core/validation: validateResourceRequirements, validateContainerResourceName,
ValidateResourceQuantityValue, validateResourceQuantityHugePageValue).

Names are standard container resources (cpu, memory, ephemeral-storage, hugepages-*) or
fully qualified extended resources; quantities are not negative (whole numbers for integer
and extended resources); a request is at most its limit — equal to it for resources that
cannot be overcommitted (hugepages, extended resources), which also need a limit; hugepages
need cpu or memory and whole pages. kube walks Go maps in random order; here the order is
the object's. Invariant: pure; never raises on a value of the wrong shape (a malformed
quantity is decoding's to refuse).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from asyncop.apiserver.builtin import quantity
from asyncop.apiserver.builtin.checks import NEGATIVE_MSG, is_qualified_name
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    each,
    forbidden,
    invalid,
    required,
)
from asyncop.apiserver.builtin.gofmt import GO_POINTER, Raw
from asyncop.apiserver.builtin.knownvalid import remembers_valid

_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers"})
_INTEGER_RESOURCES = frozenset({"pods", "services", "replicationcontrollers", "resourcequotas",
                                "secrets", "configmaps", "persistentvolumeclaims",
                                "services.nodeports", "services.loadbalancers"})


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not name.startswith("hugepages-")


def resource_name(name: str, path: str) -> Causes:
    """validateContainerResourceName."""
    messages = _name_messages(name)
    return each(path, name, messages) if messages else []


@functools.lru_cache(maxsize=1024)
def _name_messages(name: str) -> tuple[str, ...]:
    """validateContainerResourceName's messages for a name (memoised: a pod names the
    same few resources in every container)."""
    msgs = is_qualified_name(name)
    if msgs:
        return tuple(msgs)
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not name.startswith(
                ("hugepages-", "requests.hugepages-")):
            msgs.append("must be a standard resource type or fully qualified")
        if name not in ("cpu", "memory", "ephemeral-storage") and \
                not name.startswith("hugepages-"):
            msgs.append("must be a standard resource for containers")
    elif not _is_native(name) and not _is_extended(name):
        msgs.append("doesn't follow extended resource name standard")
    return tuple(msgs)


def _quantity(value: Any) -> quantity.Quantity | None:
    if isinstance(value, bool) or not isinstance(value, quantity.QUANTITY_JSON):
        return None
    try:
        return quantity.parse(value)
    except quantity.QuantityError:
        return None  # decoding refuses it, with kube's message


def quantity_value(name: str, value: quantity.Quantity, path: str, raw: Any) -> Causes:
    """ValidateResourceQuantityValue: not negative; whole for integer resources (`raw`: the
    value as defaulted, whose parsed struct a field error prints)."""
    out: Causes = []
    if value.signum() < 0:
        out.append(invalid(path, str(value), NEGATIVE_MSG))
    if (name in _INTEGER_RESOURCES or _is_extended(name)) and \
            math.ceil(value.value * 1000) % 1000:
        text = quantity.text_of(raw) or str(value)
        shown = quantity.go_struct(text, dec=GO_POINTER) or text  # %#v
        out.append(invalid(path, Raw(shown), "must be an integer"))
    return out


@remembers_valid
def resources(req: Obj, path: str) -> Causes:
    """ValidateContainerResourceRequirements: names, quantities, requests ≤ limits (a
    valid set is remembered, `knownvalid`)."""
    out: Causes = []
    limits, requests = as_dict(req.get("limits")), as_dict(req.get("requests"))
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    parsed_limits: dict[str, quantity.Quantity] = {}
    huge = compute = False
    for name, raw in limits.items():
        at = f"{lim_path}[{name}]"
        out += resource_name(name, at)
        value = _quantity(raw)
        if value is None:
            continue
        parsed_limits[name] = value
        out += quantity_value(name, value, at, raw)
        if name.startswith("hugepages-"):
            huge = True
            out += _hugepage_value(name, value, at)
        compute = compute or name in ("cpu", "memory")
    for name, raw in requests.items():
        at = f"{req_path}[{name}]"
        out += resource_name(name, at)
        value = _quantity(raw)
        if value is None:
            continue
        out += quantity_value(name, value, at, raw)
        limit = parsed_limits.get(name)
        if limit is not None:
            cmp = quantity.compare(value, limit)
            if cmp != 0 and not _overcommit_allowed(name):
                out.append(invalid(req_path, str(value),
                                   f"must be equal to {name} limit of {limit}"))
            elif cmp > 0:
                out.append(invalid(req_path, str(value),
                                   f"must be less than or equal to {name} limit of {limit}"))
        elif not _overcommit_allowed(name) and name not in limits:
            out.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        if name.startswith("hugepages-"):
            huge = True
            out += _hugepage_value(name, value, at)
        compute = compute or name in ("cpu", "memory")
    if huge and not compute:
        out.append(forbidden(path, "HugePages require cpu or memory"))
    return out


def _hugepage_value(name: str, value: quantity.Quantity, path: str) -> Causes:
    try:
        page = quantity.parse_text(name[len("hugepages-"):])
    except quantity.QuantityError:
        return []
    if page.value > 0 and (value.value / page.value).denominator == 1 and value.value >= 0:
        return []
    return [invalid(path, str(value), f"{value} is not positive integer multiple of {name}")]
