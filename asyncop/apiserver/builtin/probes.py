"""Probes and lifecycle hooks of a container, validated as kube's validateProbe,
validateLifecycle and validateHandler do (pkg/apis/core/validation).

A handler names exactly one action (probes: exec, httpGet, tcpSocket, grpc; lifecycle hooks:
exec, httpGet, tcpSocket, sleep); probe periods and thresholds are non-negative (zero was
defaulted), liveness and startup probes need successThreshold 1, readiness probes take no
terminationGracePeriodSeconds, and a sleep lasts at most the pod's grace period (zero is
allowed in 1.33: PodLifecycleSleepActionAllowZero is on). Invariant: pure; never raises on a
value of the wrong shape.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.checks import (
    is_http_header_name,
    is_valid_port_name,
    is_valid_port_num,
)
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    each,
    forbidden,
    invalid,
    nonnegative,
    not_supported,
    required,
)
from asyncop.apiserver.builtin.knownvalid import remembers_valid

_PROBE_ACTIONS = ("exec", "httpGet", "tcpSocket", "grpc")
_HOOK_ACTIONS = ("exec", "httpGet", "tcpSocket", "sleep")
_PROBE_NUMBERS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                  "failureThreshold")


def port_num_or_name(value: Any, path: str) -> Causes:
    """ValidatePortNumOrName for an IntOrString."""
    if isinstance(value, str):
        msgs = is_valid_port_name(value)
        return each(path, value, msgs) if msgs else []
    number = as_int(value)
    if number is None:
        return []
    msgs = is_valid_port_num(number)
    return each(path, number, msgs) if msgs else []


def _http_get(action: Obj, path: str) -> Causes:
    out = [] if as_str(action.get("path")) else [required(f"{path}.path")]
    out += port_num_or_name(action.get("port", 0), f"{path}.port")
    scheme = as_str(action.get("scheme"))
    if scheme not in ("HTTP", "HTTPS"):
        out.append(not_supported(f"{path}.scheme", scheme, ("HTTP", "HTTPS")))
    for header in as_list(action.get("httpHeaders")):
        name = as_str(as_dict(header).get("name"))
        out += each(f"{path}.httpHeaders", name, is_http_header_name(name))
    return out


def _action(kind: str, action: Obj, path: str, grace: int | None) -> Causes:
    if kind == "exec":
        return [] if as_list(action.get("command")) else [required(f"{path}.command")]
    if kind == "httpGet":
        return _http_get(action, path)
    if kind == "tcpSocket":
        return port_num_or_name(action.get("port", 0), f"{path}.port")
    if kind == "grpc":
        port = as_int(action.get("port")) or 0
        return each(f"{path}.port", port, is_valid_port_num(port))
    seconds = as_int(action.get("seconds")) or 0
    if grace is not None and (seconds < 0 or seconds > grace):
        return [invalid(path, seconds, "must be non-negative and less than "
                        f"terminationGracePeriodSeconds ({grace})")]
    return []


def handler(obj: Obj, kinds: tuple[str, ...], path: str, grace: int | None) -> Causes:
    """validateHandler: exactly one action."""
    out: Causes = []
    count = 0
    for kind in kinds:
        action = obj.get(kind)
        if not isinstance(action, dict):
            continue
        if count:
            out.append(forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        out += _action(kind, action, f"{path}.{kind}", grace)
    if count == 0:
        out.append(required(path, "must specify a handler type"))
    return out


@remembers_valid
def probe(raw: Any, path: str, grace: int | None, kind: str) -> Causes:
    """validateLivenessProbe / validateReadinessProbe / validateStartupProbe (replicas
    repeat their probes: a valid one is remembered, `knownvalid`)."""
    if not isinstance(raw, dict):
        return []
    out = handler(raw, _PROBE_ACTIONS, path, grace)
    for key in _PROBE_NUMBERS:
        number = raw.get(key)
        if isinstance(number, int) and number < 0:  # (a bool is never negative)
            out += nonnegative(number, f"{path}.{key}")
    term = as_int(raw.get("terminationGracePeriodSeconds"))
    if term is not None and term <= 0:
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", term,
                           "must be greater than 0"))
    success = as_int(raw.get("successThreshold"))
    if kind in ("liveness", "startup") and success is not None and success != 1:
        out.append(invalid(f"{path}.successThreshold", success, "must be 1"))
    if kind == "readiness" and term is not None:
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", term,
                           "must not be set for readinessProbes"))
    return out


def lifecycle(raw: Any, path: str, grace: int | None) -> Causes:
    """validateLifecycle: postStart and preStop handlers."""
    hooks = as_dict(raw)
    out: Causes = []
    for key in ("postStart", "preStop"):
        if isinstance(hooks.get(key), dict):
            out += handler(hooks[key], _HOOK_ACTIONS, f"{path}.{key}", grace)
    return out


def container_probes(ctr: Obj, path: str, grace: int | None) -> Causes:
    """The lifecycle and the three probes, as regular and sidecar containers take them."""
    out = lifecycle(ctr["lifecycle"], f"{path}.lifecycle", grace) \
        if isinstance(ctr.get("lifecycle"), dict) else []
    for key, kind in (("livenessProbe", "liveness"), ("readinessProbe", "readiness"),
                      ("startupProbe", "startup")):
        if isinstance(ctr.get(key), dict):
            out += probe(ctr[key], f"{path}.{key}", grace, kind)
    return out
