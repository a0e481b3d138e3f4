"""The Helm chart, linted and rendered offline with helm-python-sdk (the real Helm engine).

Checks: strict lint is clean; CRDs equal the repo's crds/; the rendered RBAC equals the union
of what the enabled controllers (and the manager) declare in code; namespaced Roles when
watchNamespaces is set; the pod passes the Pod Security "restricted" profile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

helm_python = pytest.importorskip("helm_python")

from asyncop.controllers.registry import CONTROLLERS, OPERATOR, RBAC_RULES  # noqa: E402
from asyncop.operator.inspect import inspect  # noqa: E402
from asyncop.project.generate import expected_files  # noqa: E402
from asyncop.runtime import leader, recorder, sharding  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "asyncop"

Triple = tuple[str, str, str]


def render(values: dict[str, Any] | None = None, namespace: str = "ops") -> list[dict[str, Any]]:
    with helm_python.Chart.load(str(CHART)) as chart:
        out = chart.render(values, name="rel", namespace=namespace, is_install=True)
    docs: list[dict[str, Any]] = []
    for name, text in out.items():
        if name.endswith(".yaml"):
            docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def triples(rules: list[dict[str, Any]]) -> set[Triple]:
    return {
        (g, r, v)
        for rule in rules
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }


def code_triples(names: list[str]) -> set[Triple]:
    rules = [r.to_dict() for n in names for r in RBAC_RULES[n]]
    rules += [r.to_dict() for r in recorder.RBAC_RULES]
    return triples(rules)


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    [deploy] = of_kind(docs, "Deployment")
    [c] = deploy["spec"]["template"]["spec"]["containers"]
    return c


def test_lint_strict_is_clean() -> None:
    result = helm_python.lint(str(CHART), strict=True, namespace="ops")
    assert result["errors"] == [], result
    assert [m for m in result["messages"] if m.get("severity", 0) >= 2] == [], result


def test_lint_rejects_values_outside_the_schema() -> None:
    result = helm_python.lint(str(CHART), {"controllers": ["bogus"]}, strict=True)
    assert result["errors"], result


def test_chart_crds_are_the_repo_crds_and_generated_files_are_current() -> None:
    repo = {p.name: p.read_bytes() for p in (ROOT / "crds").glob("*.yaml")}
    chart = {p.name: p.read_bytes() for p in (CHART / "crds").glob("*.yaml")}
    assert repo and chart == repo, "run: asyncop generate"
    found = inspect(OPERATOR)
    files = expected_files(found, crds_dir=ROOT / "crds", chart_dir=CHART)
    for path, text in files.items():
        assert path.read_text() == text, f"{path} is stale: run asyncop generate"


def test_default_render() -> None:
    docs = render()
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted([
        "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
        "Deployment", "Service",
    ])
    [deploy] = of_kind(docs, "Deployment")
    assert deploy["spec"]["replicas"] == 2
    c = container(docs)
    assert "--leader-elect" in c["args"]
    assert "--leader-election-namespace=ops" in c["args"]
    assert f"--controllers={','.join(CONTROLLERS)}" in c["args"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["resources"]["requests"] and c["resources"]["limits"]
    [svc] = of_kind(docs, "Service")
    assert svc["spec"]["ports"][0]["targetPort"] == "metrics"
    assert svc["spec"]["selector"] == deploy["spec"]["selector"]["matchLabels"]
    [crb] = of_kind(docs, "ClusterRoleBinding")
    [sa] = of_kind(docs, "ServiceAccount")
    assert crb["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                "namespace": "ops"}]
    assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == sa["metadata"]["name"]
    [lease_role] = of_kind(docs, "Role")
    assert lease_role["metadata"]["namespace"] == "ops"
    assert triples(lease_role["rules"]) == triples([r.to_dict() for r in leader.RBAC_RULES])


def test_cluster_role_equals_the_union_of_the_controllers_rules() -> None:
    [role] = of_kind(render(), "ClusterRole")
    assert triples(role["rules"]) == code_triples(list(CONTROLLERS))


@pytest.mark.parametrize("subset", [["at"], ["foo", "network"], ["podlogger", "jinghzhu"]])
def test_controller_subset_grants_only_what_those_controllers_need(subset: list[str]) -> None:
    docs = render({"controllers": subset})
    [role] = of_kind(docs, "ClusterRole")
    assert triples(role["rules"]) == code_triples(subset)
    assert f"--controllers={','.join(subset)}" in container(docs)["args"]


def test_watch_namespaces_render_namespaced_roles() -> None:
    docs = render({"watchNamespaces": ["team-a", "team-b"], "controllers": ["foo"]})
    assert not of_kind(docs, "ClusterRole") and not of_kind(docs, "ClusterRoleBinding")
    roles = {r["metadata"]["name"]: r for r in of_kind(docs, "Role")}
    ctrl_roles = [r for r in of_kind(docs, "Role") if not r["metadata"]["name"].endswith(
        "-leader-election")]
    assert sorted(r["metadata"]["namespace"] for r in ctrl_roles) == ["team-a", "team-b"]
    for r in ctrl_roles:
        assert triples(r["rules"]) == code_triples(["foo"])
    assert "rel-asyncop-leader-election" in roles
    bindings = of_kind(docs, "RoleBinding")
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["ops", "team-a", "team-b"]
    args = container(docs)["args"]
    assert "--namespace=team-a" in args and "--namespace=team-b" in args


def test_optional_service_monitor_and_pdb() -> None:
    docs = render({
        "metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}},
        "podDisruptionBudget": {"enabled": True},
    })
    [sm] = of_kind(docs, "ServiceMonitor")
    assert sm["metadata"]["labels"]["release"] == "prom"
    assert sm["spec"]["endpoints"][0]["port"] == "metrics"
    [pdb] = of_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1


def test_no_leader_election_and_no_rbac() -> None:
    docs = render({"leaderElection": {"enabled": False}, "replicaCount": 1,
                   "rbac": {"create": False}})
    assert not of_kind(docs, "Role") and not of_kind(docs, "ClusterRole")
    assert "--no-leader-elect" in container(docs)["args"]


# -- Pod Security Standards: "restricted" (which includes "baseline") ---------------------------
ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                   "persistentVolumeClaim", "projected", "secret"}


def restricted_violations(pod_spec: dict[str, Any]) -> list[str]:
    """The Pod Security Standards "restricted" rules (v1.27+), checked on a pod spec."""
    bad: list[str] = []
    psc = pod_spec.get("securityContext") or {}
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if pod_spec.get(host):
            bad.append(host)
    for vol in pod_spec.get("volumes") or []:
        types = set(vol) - {"name"}
        if not types <= ALLOWED_VOLUMES:
            bad.append(f"volume {vol['name']} type {types}")
    if psc.get("runAsUser") == 0:
        bad.append("pod runAsUser 0")
    for sysctl in psc.get("sysctls") or []:
        bad.append(f"sysctl {sysctl['name']}")
    pod_seccomp = (psc.get("seccompProfile") or {}).get("type")
    containers = (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])
    for c in containers:
        sc = c.get("securityContext") or {}
        name = c["name"]
        if sc.get("privileged"):
            bad.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            bad.append(f"{name}: allowPrivilegeEscalation must be false")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            bad.append(f"{name}: must drop ALL capabilities")
        if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            bad.append(f"{name}: adds capabilities")
        non_root = sc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        if non_root is not True:
            bad.append(f"{name}: runAsNonRoot must be true")
        if sc.get("runAsUser") == 0:
            bad.append(f"{name}: runAsUser 0")
        seccomp = (sc.get("seccompProfile") or {}).get("type", pod_seccomp)
        if seccomp not in ("RuntimeDefault", "Localhost"):
            bad.append(f"{name}: seccompProfile must be RuntimeDefault or Localhost")
        if sc.get("procMount", "Default") != "Default":
            bad.append(f"{name}: procMount")
        for port in c.get("ports") or []:
            if port.get("hostPort"):
                bad.append(f"{name}: hostPort")
        if sc.get("readOnlyRootFilesystem") is not True:  # required by our SPEC, not by PSS
            bad.append(f"{name}: readOnlyRootFilesystem must be true")
    return bad


def test_rendered_pod_satisfies_the_restricted_profile() -> None:
    [deploy] = of_kind(render(), "Deployment")
    assert restricted_violations(deploy["spec"]["template"]["spec"]) == []


def test_restricted_checker_flags_a_privileged_pod() -> None:
    pod = {"hostNetwork": True, "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
           "containers": [{"name": "c", "securityContext": {"privileged": True},
                           "ports": [{"containerPort": 1, "hostPort": 1}]}]}
    found = " ".join(restricted_violations(pod))
    for rule in ("hostNetwork", "hostPath", "privileged", "allowPrivilegeEscalation",
                 "drop ALL", "runAsNonRoot", "seccompProfile", "hostPort"):
        assert rule in found, rule


def test_sharding_makes_every_replica_active_with_a_pdb() -> None:
    docs = render({"sharding": {"enabled": True, "shards": 32}, "replicaCount": 3})
    args = container(docs)["args"]
    assert "--sharding" in args and "--shards=32" in args and "--leader-elect" not in args
    assert "--leader-election-namespace=ops" in args
    [pdb] = of_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    [lease_role] = [r for r in of_kind(docs, "Role")
                    if r["metadata"]["name"].endswith("-leader-election")]
    assert triples(lease_role["rules"]) == triples([r.to_dict() for r in sharding.RBAC_RULES])
    assert ("coordination.k8s.io", "leases", "list") in triples(lease_role["rules"])
    result = helm_python.lint(str(CHART), {"sharding": {"enabled": True}}, strict=True)
    assert result["errors"] == [], result


POD_TEMPLATE_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")
CONFIGURATIONS: list[dict[str, Any]] = [
    {},
    {"sharding": {"enabled": True, "shards": 8}, "replicaCount": 3},
    {"leaderElection": {"enabled": False}, "replicaCount": 1},
    {"watchNamespaces": ["a", "b"], "controllers": ["at", "podlogger"]},
    {"metrics": {"serviceMonitor": {"enabled": True}}, "podDisruptionBudget": {"enabled": True},
     "rbac": {"create": False}, "nodeSelector": {"disk": "ssd"}},
]


def pod_specs(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every pod spec the chart renders: workload templates, CronJob templates, bare Pods."""
    out = []
    for doc in docs:
        kind, name = doc["kind"], doc["metadata"]["name"]
        if kind in POD_TEMPLATE_KINDS:
            out.append((f"{kind}/{name}", doc["spec"]["template"]["spec"]))
        elif kind == "CronJob":
            out.append((f"{kind}/{name}", doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]))
        elif kind == "Pod":
            out.append((f"{kind}/{name}", doc["spec"]))
    return out


@pytest.mark.parametrize("values", CONFIGURATIONS)
def test_every_pod_template_is_restricted_in_every_configuration(values: dict[str, Any]) -> None:
    found = pod_specs(render(values))
    assert found  # the chart renders its operator pod in every configuration
    for where, spec in found:
        assert restricted_violations(spec) == [], where
        assert spec.get("automountServiceAccountToken") is not False  # it talks to the API


@pytest.mark.parametrize("override", [
    {"securityContext": {"privileged": True}},
    {"securityContext": {"allowPrivilegeEscalation": True}},
    {"securityContext": {"readOnlyRootFilesystem": False}},
    {"securityContext": {"capabilities": {"drop": ["NET_RAW"]}}},
    {"securityContext": {"capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}}},
    {"securityContext": {"runAsUser": 0}},
    {"podSecurityContext": {"runAsNonRoot": False}},
    {"podSecurityContext": {"seccompProfile": {"type": "Unconfined"}}},
    {"podSecurityContext": {"runAsUser": 0}},
    # regression: null removes a key in Helm's coalescing; the schema must still refuse it
    {"securityContext": None},
    {"podSecurityContext": None},
])
def test_values_that_would_break_the_restricted_profile_are_refused(
        override: dict[str, Any]) -> None:
    """values.schema.json holds the profile: `helm install/lint` refuses such overrides."""
    result = helm_python.lint(str(CHART), override, strict=True, namespace="ops")
    assert result["errors"], override


def test_the_image_runs_as_a_numeric_non_root_user() -> None:
    """The Dockerfile's final stage runs as 65532 (what runAsUser/runAsNonRoot expect)."""
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    final = lines[max(i for i, line in enumerate(lines) if line.startswith("FROM ")):]
    users = [line.split()[1] for line in final if line.startswith("USER ")]
    assert users == ["65532:65532"]
    [pod] = [spec for _, spec in pod_specs(render())]
    assert pod["securityContext"]["runAsUser"] == 65532


def test_secure_metrics_debug_and_tracing() -> None:
    # off by default: no flags, no review permissions, a plain-HTTP ServiceMonitor
    c = container(render())
    assert not [a for a in c["args"] if a.startswith(("--metrics-secure", "--debug"))]
    assert not [e for e in c["env"] if e["name"].startswith("OTEL_")]
    docs = render({"metrics": {"secure": True, "serviceMonitor": {"enabled": True}},
                   "debug": {"enabled": True, "history": 4},
                   "tracing": {"otlpEndpoint": "http://otel:4318", "sampleRatio": 0.25}})
    args = container(docs)["args"]
    assert "--metrics-secure" in args and "--debug-endpoints" in args
    assert "--reconcile-history=4" in args
    env = {e["name"]: e.get("value") for e in container(docs)["env"]}
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel:4318"
    assert env["OTEL_TRACES_SAMPLER"] == "parentbased_traceidratio"
    assert env["OTEL_TRACES_SAMPLER_ARG"] == "0.25"
    roles = {r["metadata"]["name"]: r for r in of_kind(docs, "ClusterRole")}
    # what asyncop.runtime.metricsauth needs, and what a scraper must be granted
    from asyncop.runtime import metricsauth
    assert triples(roles["rel-asyncop-metrics-auth"]["rules"]) == triples(
        [r.to_dict() for r in metricsauth.RBAC_RULES])
    assert roles["rel-asyncop-metrics-reader"]["rules"] == [
        {"nonResourceURLs": ["/metrics", "/debug/reconciles"], "verbs": ["get"]}]
    [sm] = of_kind(docs, "ServiceMonitor")
    endpoint = sm["spec"]["endpoints"][0]
    assert endpoint["scheme"] == "https" and endpoint["tlsConfig"] == {
        "insecureSkipVerify": True}
    # a certificate of one's own instead of the self-signed one
    docs = render({"metrics": {"secure": True, "certSecret": "metrics-tls"}})
    assert "--metrics-cert-dir=/etc/asyncop/metrics-certs" in container(docs)["args"]
    [deploy] = of_kind(docs, "Deployment")
    volumes = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}
    assert volumes["metrics-certs"]["secret"] == {"secretName": "metrics-tls"}
    assert restricted_violations(deploy["spec"]["template"]["spec"]) == []
    # the debug endpoint on the public metrics port needs the metrics auth
    with pytest.raises(Exception, match=r"set metrics\.secure=true too"):
        render({"debug": {"enabled": True}})
