"""Roles, ClusterRoles and their bindings as a 1.33 kube-apiserver defaults and validates
them: refused manifests with kube's exact messages (and the function wording each), kube's
defaults, the roleRef rule on update, and the RBAC objects the chart installs (built from the
`files/rbac-rules.yaml` that `asyncop generate` writes) stored unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.apiserver.builtinkit import Kit, Obj, invalid_message

GROUP = "rbac.authorization.k8s.io"
CHART_RULES = Path(__file__).parents[2] / "helm" / "asyncop" / "files" / "rbac-rules.yaml"
READ = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}


def role(*rules: Obj, **extra: Any) -> Obj:
    return {"metadata": {"name": "r"}, "rules": list(rules), **extra}


def binding(ref: Obj, *subjects: Obj) -> Obj:
    return {"metadata": {"name": "b"}, "roleRef": ref, "subjects": list(subjects)}


def ref(kind: str = "ClusterRole", name: str = "view", group: str | None = GROUP) -> Obj:
    out: Obj = {"kind": kind, "name": name}
    if group is not None:
        out["apiGroup"] = group
    return out


SA = {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}
CASES: list[tuple[str, str, Obj, str]] = [
    # kube: ValidatePolicyRule
    ("verbs", "roles", role({"apiGroups": [""], "resources": ["pods"]}),
     "rules[0].verbs: Required value: verbs must contain at least one value"),
    ("resource-rule", "clusterroles", role({"verbs": ["get"]}),
     "[rules[0].apiGroups: Required value: resource rules must supply at least one api group, "
     "rules[0].resources: Required value: resource rules must supply at least one resource]"),
    ("namespaced-urls", "roles", role({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}),
     'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot '
     "apply to non-resource URLs"),
    ("mixed", "clusterroles", role({"nonResourceURLs": ["/metrics"], "resources": ["pods"],
                                    "verbs": ["get"]}),
     'rules[0].nonResourceURLs: Invalid value: []string{"/metrics"}: rules cannot apply to '
     "both regular resources and non-resource URLs"),
    # kube: ValidateClusterRole — aggregationRule
    ("aggregation", "clusterroles", role(aggregationRule={"clusterRoleSelectors": []}),
     "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector "
     "required if aggregationRule is non-nil"),
    ("aggregation-selector", "clusterroles", role(aggregationRule={"clusterRoleSelectors": [
        {"matchExpressions": [{"key": "rbac.example.com/aggregate", "operator": "Is"}]}]}),
     "[aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "
     '"Is": not a valid selector operator, aggregationRule.clusterRoleSelectors[0]: Invalid '
     "value: null: invalid label selector.]"),
    # kube: ValidateRoleBinding — roleRef
    ("ref-group", "rolebindings", binding(ref(group="rbac"), SA),
     'roleRef.apiGroup: Unsupported value: "rbac": supported values: '
     '"rbac.authorization.k8s.io"'),
    ("ref-kind", "rolebindings", binding(ref(kind="ServiceAccount"), SA),
     'roleRef.kind: Unsupported value: "ServiceAccount": supported values: "Role", '
     '"ClusterRole"'),
    ("crb-ref-kind", "clusterrolebindings", binding(ref(kind="Role"), SA),
     'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"'),
    ("ref-name", "rolebindings", binding(ref(name=""), SA), "roleRef.name: Required value"),
    ("ref-name-segment", "rolebindings", binding(ref(name="a/b"), SA),
     "roleRef.name: Invalid value: \"a/b\": may not contain '/'"),
    # kube: ValidateRoleBindingSubject
    ("subject-kind", "rolebindings", binding(ref(), {"kind": "Bot", "name": "b"}),
     'subjects[0].kind: Unsupported value: "Bot": supported values: "ServiceAccount", "User", '
     '"Group"'),
    ("subject-name", "rolebindings", binding(ref(), {"kind": "User", "name": ""}),
     "subjects[0].name: Required value"),
    ("sa-namespace", "clusterrolebindings",
     binding(ref(), {"kind": "ServiceAccount", "name": "robot"}),
     "subjects[0].namespace: Required value"),
    ("sa-group", "rolebindings", binding(ref(), {**SA, "apiGroup": GROUP}),
     'subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: '
     '""'),
    ("sa-name", "rolebindings", binding(ref(), {**SA, "name": "Robot"}),
     'subjects[0].name: Invalid value: "Robot": a lowercase RFC 1123 subdomain must consist of '
     "lower case alphanumeric characters, '-' or '.', and must start and end with an "
     "alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    ("user-group", "rolebindings", binding(ref(), {"kind": "User", "name": "u",
                                                   "apiGroup": "v1"}),
     'subjects[0].apiGroup: Unsupported value: "v1": supported values: '
     '"rbac.authorization.k8s.io"'),
    # kube: ValidateRBACName = ValidatePathSegmentName
    ("name", "clusterroles", {"metadata": {"name": ".."}, "rules": [READ]},
     "metadata.name: Invalid value: \"..\": may not be '..'"),
]
KINDS = {"roles": "Role", "clusterroles": "ClusterRole", "rolebindings": "RoleBinding",
         "clusterrolebindings": "ClusterRoleBinding"}


@pytest.mark.parametrize(("resource", "manifest", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_refused_as_kube_refuses(resource: str, manifest: Obj, message: str) -> None:
    err = Kit().refused(resource, manifest)
    name = manifest["metadata"]["name"]
    assert invalid_message(err) == \
        f'{KINDS[resource]}.rbac.authorization.k8s.io "{name}" is invalid: {message}'


def test_defaults_names_and_the_role_ref_rule() -> None:
    kit = Kit()
    # kube: SetDefaults_RoleBinding and SetDefaults_Subject
    made = kit.create("rolebindings", binding(ref(group=None), SA, {"kind": "User", "name": "u"},
                                              {"kind": "Group", "name": "devs"}))
    assert made["roleRef"] == {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}
    assert made["subjects"] == [SA, {"kind": "User", "name": "u", "apiGroup": GROUP},
                                {"kind": "Group", "name": "devs", "apiGroup": GROUP}]
    # kube: ValidateRoleBindingUpdate — roleRef never changes
    moved = {**made, "roleRef": ref(name="edit")}
    assert invalid_message(kit.refused("rolebindings", moved, old=made)) == (
        'RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: '
        'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: '
        "cannot change roleRef")
    more = {**made, "subjects": [*made["subjects"], {"kind": "User", "name": "v"}]}
    assert len(kit.update("rolebindings", more)["subjects"]) == 4
    # path-segment names: what kube itself uses (system:…) is fine
    cluster_role = kit.create("clusterroles", {"metadata": {"name": "system:controller:x"},
                                               "rules": [READ, {"nonResourceURLs": ["/metrics"],
                                                                "verbs": ["get"]}]})
    assert cluster_role["rules"][1] == {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}


def test_the_charts_rbac_objects_are_stored_unchanged() -> None:
    generated = yaml.safe_load(CHART_RULES.read_text())
    rules = generated["manager"] + [r for c in generated["controllers"].values() for r in c]
    subject = {"kind": "ServiceAccount", "name": "asyncop", "namespace": "default"}
    objects = [
        ("clusterroles", {"metadata": {"name": "asyncop"}, "rules": rules}),
        ("clusterrolebindings", binding(ref(name="asyncop"), subject)),
        ("roles", {"metadata": {"name": "asyncop-leader-election"},
                   "rules": generated["leaderElection"]}),
        ("rolebindings", {**binding(ref("Role", "asyncop-leader-election"), subject),
                          "metadata": {"name": "asyncop-leader-election"}}),
    ]
    kit = Kit()
    for resource, manifest in objects:
        made = kit.create(resource, manifest)
        for key in ("rules", "roleRef", "subjects"):
            assert made.get(key) == manifest.get(key)
