"""Where a pod may run: tolerations, affinity and topology spread, validated as kube's
ValidateTolerations, validateAffinity and validateTopologySpreadConstraints do
(pkg/apis/core/validation).

Toleration keys are label names, `Exists` takes no value and is required for an empty key,
`tolerationSeconds` needs the NoExecute effect; node selector requirements and label
selectors use their operators' value rules; weights are 1-100; topology keys are required.
Invariant: pure; never raises on a value of the wrong shape.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.checks import (
    is_dns1123_label,
    is_label_value,
    is_qualified_name,
    name_is_dns_subdomain,
)
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    duplicate,
    each,
    forbidden,
    invalid,
    label_name,
    label_selector,
    not_supported,
    required,
    selector_requirement,
)
from asyncop.apiserver.builtin.knownvalid import remembers_valid

_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@remembers_valid
def tolerations(items: list[Any], path: str) -> Causes:
    """ValidateTolerations (a valid list is remembered, `knownvalid`)."""
    out: Causes = []
    for i, tol in enumerate(items):  # `at`, the item's path, is built only for an error
        tol = as_dict(tol)
        key, operator = as_str(tol.get("key")), as_str(tol.get("operator"))
        value, effect = as_str(tol.get("value")), as_str(tol.get("effect"))
        at = f"{path}[{i}]"
        if key and (msgs := is_qualified_name(key)):
            out += each(f"{at}.key", key, msgs)
        if not key and operator != "Exists":
            out.append(invalid(f"{at}.operator", operator, "operator must be Exists when `key` "
                               'is empty, which means "match all values and all keys"'))
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(invalid(f"{at}.effect", effect,
                               "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            errs = is_label_value(value)
            if errs:
                out.append(invalid(f"{at}.operator", value, ";".join(errs)))
        elif operator == "Exists":
            if value:
                out.append(invalid(f"{at}.operator", value,
                                   "value must be empty when `operator` is 'Exists'"))
        else:
            out.append(not_supported(f"{at}.operator", operator, ("Equal", "Exists")))
        if effect and effect not in _EFFECTS:
            out.append(not_supported(f"{at}.effect", effect, _EFFECTS))
    return out


def _field_requirement(req: Obj, path: str) -> Causes:
    """ValidateNodeFieldSelectorRequirement (only metadata.name is selectable)."""
    operator, values = as_str(req.get("operator")), as_list(req.get("values"))
    out: Causes = []
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            out.append(required(f"{path}.values", "must be only one value when `operator` is "
                                "'In' or 'NotIn' for node field selector"))
    else:
        out.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = as_str(req.get("key"))
    if key != "metadata.name":
        out.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            text = as_str(value)
            out += each(f"{path}.values[{i}]", text, name_is_dns_subdomain(text))
    return out


def node_selector_term(term: Obj, path: str, *, allow_invalid_values: bool) -> Causes:
    out: Causes = []
    for j, req in enumerate(as_list(term.get("matchExpressions"))):
        out += selector_requirement(as_dict(req), f"{path}.matchExpressions[{j}]", node=True,
                                    allow_invalid_values=allow_invalid_values)
    for j, req in enumerate(as_list(term.get("matchFields"))):
        out += _field_requirement(as_dict(req), f"{path}.matchFields[{j}]")
    return out


def _node_affinity(na: Obj, path: str, *, strict_values: bool) -> Causes:
    out: Causes = []
    required_terms = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required_terms, dict):
        at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = as_list(required_terms.get("nodeSelectorTerms"))
        if not terms:
            out.append(required(at, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            out += node_selector_term(as_dict(term), f"{at}[{i}]",
                                      allow_invalid_values=not strict_values)
    preferred = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(as_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        term = as_dict(term)
        weight = as_int(term.get("weight")) or 0
        if not 0 < weight <= 100:
            out.append(invalid(f"{preferred}[{i}].weight", weight, "must be in the range 1-100"))
        out += node_selector_term(as_dict(term.get("preference")),
                                  f"{preferred}[{i}].preference", allow_invalid_values=True)
    return out


def _pod_affinity_term(term: Obj, path: str, *, allow_invalid_values: bool) -> Causes:
    """validatePodAffinityTerm."""
    out = label_selector(term.get("labelSelector"), f"{path}.labelSelector",
                         allow_invalid_values=allow_invalid_values)
    out += label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector",
                          allow_invalid_values=allow_invalid_values)
    for name in as_list(term.get("namespaces")):
        text = as_str(name)
        out += each(f"{path}.namespace", text, is_dns1123_label(text))
    for key in ("matchLabelKeys", "mismatchLabelKeys"):
        keys = as_list(term.get(key))
        if keys and not isinstance(term.get("labelSelector"), dict):
            out.append(forbidden(f"{path}.{key}",
                                 "must not be specified when labelSelector is not set"))
            continue
        for i, label in enumerate(keys):
            out += label_name(as_str(label), f"{path}.{key}[{i}]")
    topology = as_str(term.get("topologyKey"))
    if not topology:
        out.append(required(f"{path}.topologyKey", "can not be empty"))
    return out + label_name(topology, f"{path}.topologyKey")


def _pod_affinity(pa: Obj, path: str, *, allow_invalid_values: bool) -> Causes:
    out: Causes = []
    hard = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"))):
        out += _pod_affinity_term(as_dict(term), f"{hard}[{i}]",
                                  allow_invalid_values=allow_invalid_values)
    soft = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        term = as_dict(term)
        weight = as_int(term.get("weight")) or 0
        if not 0 < weight <= 100:
            out.append(invalid(f"{soft}[{i}].weight", weight, "must be in the range 1-100"))
        out += _pod_affinity_term(as_dict(term.get("podAffinityTerm")),
                                  f"{soft}[{i}].podAffinityTerm",
                                  allow_invalid_values=allow_invalid_values)
    return out


def affinity(raw: Any, path: str, *, strict_node_values: bool = True,
             allow_invalid_values: bool = False) -> Causes:
    """validateAffinity (new pods' required node affinity values are label values: 1.33)."""
    aff = as_dict(raw)
    out: Causes = []
    if isinstance(aff.get("nodeAffinity"), dict):
        out += _node_affinity(aff["nodeAffinity"], f"{path}.nodeAffinity",
                              strict_values=strict_node_values)
    for key in ("podAffinity", "podAntiAffinity"):
        if isinstance(aff.get(key), dict):
            out += _pod_affinity(aff[key], f"{path}.{key}",
                                 allow_invalid_values=allow_invalid_values)
    return out


def topology_spread(items: list[Any], path: str) -> Causes:
    """validateTopologySpreadConstraints."""
    out: Causes = []
    constraints = [as_dict(c) for c in items]
    for i, con in enumerate(constraints):
        at = f"{path}[{i}]"
        skew = as_int(con.get("maxSkew")) or 0
        if skew <= 0:
            out.append(invalid(f"{at}.maxSkew", skew, "must be greater than zero"))
        key, action = as_str(con.get("topologyKey")), as_str(con.get("whenUnsatisfiable"))
        if not key:
            out.append(required(f"{at}.topologyKey", "can not be empty"))
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            out.append(not_supported(f"{at}.whenUnsatisfiable", action,
                                     ("DoNotSchedule", "ScheduleAnyway")))
        if any((as_str(c.get("topologyKey")), as_str(c.get("whenUnsatisfiable"))) == (key, action)
               for c in constraints[i + 1:]):
            out.append(duplicate(f"{at}.{{topologyKey, whenUnsatisfiable}}",
                                 f"{{{key}, {action}}}"))
        min_domains = as_int(con.get("minDomains"))
        if min_domains is not None:
            if min_domains <= 0:
                out.append(invalid(f"{at}.minDomains", min_domains, "must be greater than zero"))
            if action != "DoNotSchedule":
                out.append(invalid(f"{at}.minDomains", min_domains, "can only use minDomains if "
                                   f"whenUnsatisfiable=DoNotSchedule, not {action}"))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = con.get(policy)
            if isinstance(value, str) and value not in ("Honor", "Ignore"):
                out.append(not_supported(f"{at}.{policy}", value, ("Honor", "Ignore")))
        out += label_selector(con.get("labelSelector"), f"{at}.labelSelector")
    return out


def gates(items: list[Any], path: str, *, key: str, unique: bool) -> Causes:
    """validateReadinessGates (key conditionType) / validateSchedulingGates (key name)."""
    out: Causes = []
    seen: set[str] = set()
    for i, gate in enumerate(items):
        value = as_str(as_dict(gate).get(key))
        at = f"{path}[{i}]" if unique else f"{path}[{i}].{key}"
        out += each(at, value, is_qualified_name(value))
        if unique and value in seen:
            out.append(duplicate(at, value))
        seen.add(value)
    return out
