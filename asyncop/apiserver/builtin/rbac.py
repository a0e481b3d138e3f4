"""rbac.authorization.k8s.io/v1: Roles, ClusterRoles and their bindings as kube checks them.

- Defaults (rbac/v1): a roleRef's apiGroup is rbac.authorization.k8s.io; a User or Group
  subject's apiGroup too (a ServiceAccount's stays empty).
- ValidatePolicyRule: verbs required; a rule is either for non-resource URLs (ClusterRoles
  only, and then no apiGroups, resources or resourceNames) or for resources (apiGroups and
  resources required). A ClusterRole's aggregationRule has at least one valid selector.
- Bindings: roleRef apiGroup rbac.authorization.k8s.io, kind Role or ClusterRole (a
  ClusterRoleBinding: ClusterRole only), name a path segment; subjects named, of kind
  ServiceAccount (a DNS subdomain, no apiGroup, a namespace in a ClusterRoleBinding), User
  or Group (apiGroup rbac.authorization.k8s.io). roleRef never changes on update.
Names of all four kinds are path segments (ValidateRBACName; core/objectmeta.validate_name).
Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import is_dns1123_subdomain, is_valid_path_segment_name
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_list,
    as_str,
    each,
    invalid,
    label_selector,
    not_supported,
    required,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_quote, go_string_slice

GROUP = "rbac.authorization.k8s.io"
ROLES = (GROUP, "roles")
CLUSTERROLES = (GROUP, "clusterroles")
ROLEBINDINGS = (GROUP, "rolebindings")
CLUSTERROLEBINDINGS = (GROUP, "clusterrolebindings")
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def _binding_defaults(obj: Obj, old: Obj | None) -> None:
    """SetDefaults_RoleBinding / _ClusterRoleBinding and SetDefaults_Subject."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for subject in as_list(obj.get("subjects")):
        if isinstance(subject, dict) and not subject.get("apiGroup") and \
                subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP


def policy_rule_errors(rule: Any, path: str, *, namespaced: bool) -> list[StatusCause]:
    """ValidatePolicyRule."""
    rule = as_dict(rule)
    out: list[StatusCause] = []
    if not as_list(rule.get("verbs")):
        out.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = as_list(rule.get("nonResourceURLs"))
    if urls:
        shown = Raw(go_string_slice([as_str(u) for u in urls]))
        if namespaced:
            out.append(invalid(f"{path}.nonResourceURLs", shown,
                               "namespaced rules cannot apply to non-resource URLs"))
        if any(as_list(rule.get(k)) for k in ("apiGroups", "resources", "resourceNames")):
            out.append(invalid(f"{path}.nonResourceURLs", shown, "rules cannot apply to "
                               "both regular resources and non-resource URLs"))
        return out
    if not as_list(rule.get("apiGroups")):
        out.append(required(f"{path}.apiGroups",
                            "resource rules must supply at least one api group"))
    if not as_list(rule.get("resources")):
        out.append(required(f"{path}.resources",
                            "resource rules must supply at least one resource"))
    return out


def _role(obj: Obj, old: Obj | None, *, namespaced: bool) -> list[StatusCause]:
    """ValidateRole / ValidateClusterRole (the update forms add only metadata checks)."""
    out: list[StatusCause] = []
    for i, rule in enumerate(as_list(obj.get("rules"))):
        out += policy_rule_errors(rule, f"rules[{i}]", namespaced=namespaced)
    aggregation = obj.get("aggregationRule")
    if not namespaced and aggregation is not None:
        path = "aggregationRule.clusterRoleSelectors"
        selectors = as_list(as_dict(aggregation).get("clusterRoleSelectors"))
        if not selectors:
            out.append(required(path, "at least one clusterRoleSelector required if "
                                      "aggregationRule is non-nil"))
        for i, selector in enumerate(selectors):
            problems = label_selector(selector, f"{path}[{i}]")
            out += problems
            if problems:  # LabelSelectorAsSelector refuses it too
                out.append(invalid(f"{path}[{i}]", None, "invalid label selector."))
    return out


def _ref_repr(ref: Obj) -> Raw:
    """%#v of an rbac.RoleRef."""
    return Raw("rbac.RoleRef{" + ", ".join(
        f"{go}:{go_quote(as_str(ref.get(key)))}"
        for go, key in (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))) + "}")


def _binding(obj: Obj, old: Obj | None, *, namespaced: bool) -> list[StatusCause]:
    """ValidateRoleBinding / ValidateClusterRoleBinding (+ the roleRef rule on update)."""
    ref = as_dict(obj.get("roleRef"))
    out: list[StatusCause] = []
    if ref.get("apiGroup") != GROUP:
        out.append(not_supported("roleRef.apiGroup", as_str(ref.get("apiGroup")), [GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        out.append(not_supported("roleRef.kind", as_str(ref.get("kind")), kinds))
    name = as_str(ref.get("name"))
    if not name:
        out.append(required("roleRef.name"))
    else:
        out += each("roleRef.name", name, is_valid_path_segment_name(name))
    for i, subject in enumerate(as_list(obj.get("subjects"))):
        out += subject_errors(as_dict(subject), f"subjects[{i}]", namespaced=namespaced)
    if old is not None and as_dict(old.get("roleRef")) != ref:
        out.append(invalid("roleRef", _ref_repr(ref), "cannot change roleRef"))
    return out


def subject_errors(subject: Obj, path: str, *, namespaced: bool) -> list[StatusCause]:
    """ValidateRoleBindingSubject."""
    out: list[StatusCause] = []
    name, group = as_str(subject.get("name")), as_str(subject.get("apiGroup"))
    if not name:
        out.append(required(f"{path}.name"))
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        if name:
            out += each(f"{path}.name", name, is_dns1123_subdomain(name))
        if group:
            out.append(not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not as_str(subject.get("namespace")):
            out.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != GROUP:
            out.append(not_supported(f"{path}.apiGroup", group, [GROUP]))
    else:
        out.append(not_supported(f"{path}.kind", as_str(kind), SUBJECT_KINDS))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {
    ROLEBINDINGS: _binding_defaults, CLUSTERROLEBINDINGS: _binding_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {
    ROLES: lambda obj, old: _role(obj, old, namespaced=True),
    CLUSTERROLES: lambda obj, old: _role(obj, old, namespaced=False),
    ROLEBINDINGS: lambda obj, old: _binding(obj, old, namespaced=True),
    CLUSTERROLEBINDINGS: lambda obj, old: _binding(obj, old, namespaced=False),
}
