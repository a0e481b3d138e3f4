"""coordination.k8s.io Leases: MicroTime normalisation, the registry's field drops,
ValidateLease.

- acquireTime and renewTime are metav1.MicroTime: stored in UTC with 6 fractional digits.
- spec.strategy and spec.preferredHolder belong to CoordinatedLeaderElection, a gate that
  is off by default in 1.33: the registry drops them on create, and on update unless the
  stored Lease already had them (PrepareForCreate / PrepareForUpdate).
- ValidateLeaseSpec: leaseDurationSeconds > 0, leaseTransitions >= 0, a strategy is
  OldestEmulationVersion or a qualified name with a prefix (kube reports it on
  `spec.strategy.strategy`), a preferredHolder needs a strategy. holderIdentity is free
  text to kube.
Invariant: defaults rewrite only the two timestamps and the gated fields; validation is pure.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import NEGATIVE_MSG, is_qualified_name
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_int,
    as_str,
    each,
    forbidden,
    invalid,
    not_supported,
)

LEASES = ("coordination.k8s.io", "leases")
STRATEGIES = ("OldestEmulationVersion",)


def _lease_defaults(obj: Obj, old: Obj | None) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("acquireTime", "renewTime"):
        value = spec.get(field)
        if isinstance(value, str) and value:
            spec[field] = micro_time(value)
    old_spec = as_dict(old.get("spec")) if old is not None else {}
    for field in ("strategy", "preferredHolder"):
        if old_spec.get(field) is None:
            spec.pop(field, None)


def micro_time(value: str) -> str:
    """Normalise an RFC 3339 time to metav1.MicroTime (UTC, 6 fractional digits, `Z`)."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _lease(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateLeaseSpec (ValidateLease and ValidateLeaseUpdate check the same)."""
    spec = as_dict(obj.get("spec"))
    out: list[StatusCause] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and not (as_int(duration) or 0) > 0:
        out.append(invalid("spec.leaseDurationSeconds", duration,
                           "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and (as_int(transitions) is None or transitions < 0):
        out.append(invalid("spec.leaseTransitions", transitions, NEGATIVE_MSG))
    strategy = spec.get("strategy")
    if strategy is not None:
        out += strategy_errors(strategy, "spec.strategy")
    if spec.get("preferredHolder") and not strategy:
        out.append(forbidden("spec.preferredHolder",
                             "may only be specified if `strategy` is defined"))
    return out


def strategy_errors(strategy: Any, path: str) -> list[StatusCause]:
    """ValidateCoordinatedLeaseStrategy (which appends `.strategy` to the path it is given)."""
    text = as_str(strategy)
    if "/" not in text:
        if text in STRATEGIES:
            return []
        return [not_supported(f"{path}.strategy", strategy, STRATEGIES)]
    return each(f"{path}.strategy", text, is_qualified_name(text))


DEFAULTS: dict[tuple[str, str], Any] = {LEASES: _lease_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {LEASES: _lease}
