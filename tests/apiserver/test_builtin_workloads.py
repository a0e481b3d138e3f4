"""apps/v1 as kube-apiserver 1.33 validates and defaults it (builtin/workloads.py,
statefulsets.py).

Refused cases name the kube function whose message they pin (pkg/apis/apps/validation
unless said otherwise) and list every cause in kube's order. Accepted cases are manifests
as people write them (charts, docs), which must go in unchanged apart from defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asyncop.apiserver import Store
from tests.apiserver.podkit import (
    Obj,
    causes,
    container,
    create,
    deployment,
    edit,
    new_store,
    rejected,
    template,
    unique,
    update,
)

LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
         "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
         "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
# ErrorBody dereferences a *LabelSelector; the value has no String(), so Go's %#v is shown
EMPTY_SELECTOR = ("v1.LabelSelector{MatchLabels:map[string]string(nil), "
                  "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}")
NOT_MATCHING = ("spec.template.metadata.labels",
                'Invalid value: map[string]string{"app":"web"}: `selector` does not match '
                'template `labels`')
ROLLING = "spec.strategy.rollingUpdate"
DS_ROLLING = "spec.updateStrategy.rollingUpdate"
STS_UPDATE = ("Forbidden: updates to statefulset spec for fields other than 'replicas', "
              "'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
              "and 'minReadySeconds' are forbidden")


@pytest.fixture(scope="module")
def store() -> Store:
    return new_store()


def of_kind(kind: str, name: str | None = None, **spec: Any) -> Obj:
    """A valid Deployment-shaped manifest of `kind` (DaemonSets have no `strategy`)."""
    obj = deployment(name, **spec)
    obj["kind"] = kind
    return obj


def without(obj: Obj, *keys: str) -> Obj:
    """`obj` without these spec fields."""
    return edit(obj, lambda o: [o["spec"].pop(k, None) for k in keys])


def sts(name: str | None = None, **spec: Any) -> Obj:
    return of_kind("StatefulSet", name, **{"serviceName": "web", **spec})


REFUSED: list[tuple[str, Callable[[], Obj], list[tuple[str, str]]]] = [
    # ValidateDeploymentSpec -> ValidateReplicaSetSpec-like selector rules: a missing selector
    # is Required and (selecting nothing) does not match the template's labels.
    ("deployment without selector", lambda: without(deployment(), "selector"),
     [("spec.selector", "Required value"), NOT_MATCHING]),
    ("deployment empty selector", lambda: deployment(selector={}),
     [("spec.selector", f"Invalid value: {EMPTY_SELECTOR}: empty selector is invalid for "
       "deployment")]),
    ("selector not matching", lambda: deployment(selector={"matchLabels": {"app": "db"}}),
     [NOT_MATCHING]),
    # ValidateLabelSelector, then LabelSelectorAsSelector fails: "invalid label selector"
    ("selector label value", lambda: deployment(selector={"matchLabels": {"app": "we b"}}),
     [("spec.selector.matchLabels", f'Invalid value: "we b": {LABEL_VALUE}'),
      ("spec.selector", 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":'
       '"we b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: invalid label selector')]),
    ("selector In without values",
     lambda: deployment(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
     [("spec.selector.matchExpressions[0].values",
       "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
      ("spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
       'MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", '
       'Operator:"In", Values:[]string(nil)}}}: invalid label selector')]),
    # ValidateNonnegativeField
    ("negative counts", lambda: deployment(replicas=-1, revisionHistoryLimit=-2),
     [("spec.replicas", "Invalid value: -1: must be greater than or equal to 0"),
      ("spec.revisionHistoryLimit", "Invalid value: -2: must be greater than or equal to 0")]),
    # ValidatePodTemplateSpecForReplicaSet: restartPolicy Always, no activeDeadlineSeconds
    ("deployment restartPolicy", lambda: deployment(template=template(restartPolicy="Never")),
     [("spec.template.spec.restartPolicy",
       'Unsupported value: "Never": supported values: "Always"')]),
    ("deployment activeDeadlineSeconds",
     lambda: deployment(template=template(activeDeadlineSeconds=5)),
     [("spec.template.spec.activeDeadlineSeconds",
       "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported")]),
    # ValidatePodTemplateSpec: the pod spec's own errors, under spec.template.spec
    ("template container name",
     lambda: deployment(template=template(containers=[container(name="C")])),
     [("spec.template.spec.containers[0].name", f'Invalid value: "C": {LABEL}')]),
    ("template container image",
     lambda: deployment(template=template(containers=[container(image="")])),
     [("spec.template.spec.containers[0].image", "Required value")]),
    # ValidateRollingUpdateDeployment / ValidateDeploymentStrategy
    ("maxUnavailable and maxSurge zero",
     lambda: deployment(strategy={"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}}),
     # an IntOrString's String() is the pointer's: the value prints as %#v
     [(f"{ROLLING}.maxUnavailable", 'Invalid value: intstr.IntOrString{Type:0, IntVal:0, '
       'StrVal:""}: may not be 0 when `maxSurge` is 0')]),
    ("maxUnavailable over 100%",
     lambda: deployment(strategy={"rollingUpdate": {"maxUnavailable": "150%"}}),
     [(f"{ROLLING}.maxUnavailable", 'Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
       'StrVal:"150%"}: must not be greater than 100%')]),
    ("maxSurge not a percent",  # IsValidPercent
     lambda: deployment(strategy={"rollingUpdate": {"maxSurge": "x%"}}),
     [(f"{ROLLING}.maxSurge", 'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"x%"}'
       ": a valid percent string must be a numeric "
       "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
       "'[0-9]+%')")]),
    ("maxSurge negative", lambda: deployment(strategy={"rollingUpdate": {"maxSurge": -1}}),
     [(f"{ROLLING}.maxSurge", "Invalid value: -1: must be greater than or equal to 0")]),
    ("Recreate with rollingUpdate",
     lambda: deployment(strategy={"type": "Recreate", "rollingUpdate": {}}),
     [(f"{ROLLING}", "Forbidden: may not be specified when strategy `type` is 'Recreate'")]),
    ("unknown strategy", lambda: deployment(strategy={"type": "BlueGreen"}),
     [("spec.strategy", 'Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", '
       'RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", '
       '"RollingUpdate"')]),
    # ValidateDeploymentSpec: progressDeadlineSeconds > minReadySeconds
    ("progress deadline", lambda: deployment(minReadySeconds=600),
     [("spec.progressDeadlineSeconds", "Invalid value: 600: must be greater than "
       "minReadySeconds")]),
    # ValidateReplicaSetSpec
    ("replicaset restartPolicy",
     lambda: of_kind("ReplicaSet", template=template(restartPolicy="OnFailure")),
     [("spec.template.spec.restartPolicy",
       'Unsupported value: "OnFailure": supported values: "Always"')]),
    ("replicaset without selector", lambda: without(of_kind("ReplicaSet"), "selector"),
     [("spec.selector", "Required value"), NOT_MATCHING]),
    # ValidateDaemonSetSpec: no Required for a missing selector (it selects nothing)
    ("daemonset without selector", lambda: without(of_kind("DaemonSet"), "selector"),
     [NOT_MATCHING]),
    ("daemonset empty selector", lambda: of_kind("DaemonSet", selector={}),
     [("spec.selector", f"Invalid value: {EMPTY_SELECTOR}: empty selector is invalid for "
       "daemonset")]),
    ("daemonset restartPolicy", lambda: of_kind("DaemonSet", template=template(
        restartPolicy="Never", activeDeadlineSeconds=1)),
     [("spec.template.spec.restartPolicy",
       'Unsupported value: "Never": supported values: "Always"'),
      ("spec.template.spec.activeDeadlineSeconds",
       "Forbidden: activeDeadlineSeconds in DaemonSet is not Supported")]),
    # ValidateRollingUpdateDaemonSet
    ("daemonset both non-zero", lambda: of_kind("DaemonSet", updateStrategy={
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}}),
     [(f"{DS_ROLLING}.maxSurge", 'Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
       'StrVal:"10%"}: may not be set when maxUnavailable is non-zero')]),
    ("daemonset both zero", lambda: of_kind("DaemonSet", updateStrategy={
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
     [(f"{DS_ROLLING}.maxUnavailable", "Required value: cannot be 0 when maxSurge is 0")]),
    ("daemonset surge over 100%", lambda: of_kind("DaemonSet", updateStrategy={
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "101%"}}),
     [(f"{DS_ROLLING}.maxSurge", 'Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
       'StrVal:"101%"}: must not be greater than 100%')]),
    ("daemonset strategy type", lambda: of_kind("DaemonSet", updateStrategy={"type": "X"}),
     [("spec.updateStrategy", 'Unsupported value: apps.DaemonSetUpdateStrategy{Type:"X", '
       'RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", '
       '"OnDelete"')]),
    # ValidateStatefulSetName: a DNS label (pods' hostnames); 1.33 serviceName as a DNS label
    ("statefulset dotted name", lambda: sts("web.v1"),
     [("metadata.name", 'Invalid value: "web.v1": must not contain dots')]),
    ("statefulset serviceName", lambda: sts(serviceName="Web"),
     [("spec.serviceName", f'Invalid value: "Web": {LABEL}')]),
    ("serviceName checked before the selector",
     lambda: sts(serviceName="a.b", ordinals={"start": -1}, selector={}),
     [("spec.ordinals.start", "Invalid value: -1: must be greater than or equal to 0"),
      # IsDNS1123Label: a valid subdomain that is no label "must not contain dots"
      ("spec.serviceName", 'Invalid value: "a.b": must not contain dots'),
      ("spec.selector", f"Invalid value: {EMPTY_SELECTOR}: empty selector is invalid for "
       "statefulset")]),
    # ValidateStatefulSetSpec
    ("podManagementPolicy", lambda: sts(podManagementPolicy="Fast"),
     [("spec.podManagementPolicy", "Invalid value: \"Fast\": must be 'OrderedReady' or "
       "'Parallel'")]),
    ("OnDelete with rollingUpdate",
     lambda: sts(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 2}}),
     [("spec.updateStrategy.rollingUpdate", "Invalid value: apps.RollingUpdateStatefulSet"
       "Strategy{Partition:2, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for "
       "updateStrategy 'RollingUpdate'")]),
    ("statefulset strategy type", lambda: sts(updateStrategy={"type": "Canary"}),
     [("spec.updateStrategy", 'Invalid value: apps.StatefulSetUpdateStrategy{Type:"Canary", '
       "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' "
       "or 'OnDelete'")]),
    ("negative partition", lambda: sts(updateStrategy={"rollingUpdate": {"partition": -1}}),
     [("spec.updateStrategy.rollingUpdate.partition",
       "Invalid value: -1: must be greater than or equal to 0")]),
    ("statefulset maxUnavailable 0",
     lambda: sts(updateStrategy={"rollingUpdate": {"maxUnavailable": 0}}),
     [("spec.updateStrategy.rollingUpdate.maxUnavailable",
       'Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: cannot be 0')]),
    ("retention policy", lambda: sts(persistentVolumeClaimRetentionPolicy={
        "whenDeleted": "Keep"}),
     [("spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
       'Unsupported value: "Keep": supported values: "Retain", "Delete"')]),
    ("negative ordinals start", lambda: sts(ordinals={"start": -1}),
     [("spec.ordinals.start", "Invalid value: -1: must be greater than or equal to 0")]),
    ("statefulset empty selector", lambda: sts(selector={}),
     [("spec.selector", f"Invalid value: {EMPTY_SELECTOR}: empty selector is invalid for "
       "statefulset")]),
    ("statefulset without selector", lambda: without(sts(), "selector"),
     [("spec.selector", "Required value"), NOT_MATCHING]),
    ("statefulset restartPolicy",
     lambda: sts(template=template(restartPolicy="Never", activeDeadlineSeconds=3)),
     [("spec.template.spec.restartPolicy",
       'Unsupported value: "Never": supported values: "Always"'),
      ("spec.template.spec.activeDeadlineSeconds",
       "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported")]),
]


@pytest.mark.parametrize(("build", "expected"), [(b, e) for _, b, e in REFUSED],
                         ids=[i for i, _, _ in REFUSED])
def test_refused_workloads(store: Store, build: Callable[[], Obj],
                           expected: list[tuple[str, str]]) -> None:
    status = rejected(store, build())
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert causes(status) == expected


def test_message_joins_causes_like_kube(store: Store) -> None:
    """errors.NewInvalid: `<Kind>.<group> "<name>" is invalid: [a, b]`."""
    obj = without(deployment("no-selector"), "selector")
    assert rejected(store, obj)["message"] == (
        'Deployment.apps "no-selector" is invalid: [spec.selector: Required value, '
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        '`selector` does not match template `labels`]')


# --- real-world manifests, accepted as written ----------------------------------------------

def web_deployment() -> Obj:
    """A chart-style Deployment: probes, env from refs, resources, volumes, affinity."""
    labels = {"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "prod"}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": unique("web"), "namespace": "default", "labels": labels},
        "spec": {
            "replicas": 3, "revisionHistoryLimit": 5, "minReadySeconds": 10,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {
                "metadata": {"labels": labels,
                             "annotations": {"checksum/config": "0123abcd"}},
                "spec": {
                    "serviceAccountName": "web",
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 1000,
                                        "fsGroup": 2000,
                                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "initContainers": [{"name": "migrate", "image": "web:1.2.3",
                                        "command": ["./migrate", "up"]}],
                    "containers": [{
                        "name": "web", "image": "ghcr.io/acme/web:1.2.3",
                        "imagePullPolicy": "IfNotPresent",
                        "args": ["--port=8080"],
                        "ports": [{"name": "http", "containerPort": 8080,
                                   "protocol": "TCP"},
                                  {"name": "metrics", "containerPort": 9090}],
                        "env": [
                            {"name": "LOG_LEVEL", "value": "info"},
                            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {
                                "name": "db", "key": "password"}}},
                            {"name": "POD_IP", "valueFrom": {"fieldRef": {
                                "fieldPath": "status.podIP"}}},
                            {"name": "MEM_LIMIT", "valueFrom": {"resourceFieldRef": {
                                "containerName": "web", "resource": "limits.memory",
                                "divisor": "1Mi"}}},
                        ],
                        "envFrom": [{"configMapRef": {"name": "web-env"}},
                                    {"prefix": "S_", "secretRef": {"name": "web-secrets",
                                                                   "optional": True}}],
                        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                                      "limits": {"cpu": "1", "memory": "512Mi"}},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                                          "initialDelaySeconds": 10, "periodSeconds": 10},
                        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080,
                                                       "httpHeaders": [{"name": "X-Probe",
                                                                        "value": "1"}]}},
                        "startupProbe": {"tcpSocket": {"port": 8080},
                                         "failureThreshold": 30},
                        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                        "securityContext": {"allowPrivilegeEscalation": False,
                                            "readOnlyRootFilesystem": True,
                                            "capabilities": {"drop": ["ALL"]}},
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/web"},
                                         {"name": "tmp", "mountPath": "/tmp"},
                                         {"name": "data", "mountPath": "/var/lib/web",
                                          "subPath": "web"}],
                    }],
                    "volumes": [
                        {"name": "config", "configMap": {"name": "web", "items": [
                            {"key": "config.yaml", "path": "config.yaml"}]}},
                        {"name": "tmp", "emptyDir": {"medium": "Memory",
                                                     "sizeLimit": "64Mi"}},
                        {"name": "data", "persistentVolumeClaim": {"claimName": "web"}},
                        {"name": "tls", "secret": {"secretName": "web-tls",
                                                   "defaultMode": 0o440}},
                        {"name": "info", "projected": {"sources": [
                            {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {
                                "fieldPath": "metadata.labels"}}]}},
                            {"serviceAccountToken": {"path": "token",
                                                     "expirationSeconds": 3600}}]}},
                    ],
                    "affinity": {"podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [{
                            "weight": 100, "podAffinityTerm": {
                                "labelSelector": {"matchLabels": labels},
                                "topologyKey": "kubernetes.io/hostname"}}]}},
                    "topologySpreadConstraints": [{
                        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": labels}}],
                    "tolerations": [{"key": "dedicated", "operator": "Equal",
                                     "value": "web", "effect": "NoSchedule"}],
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "terminationGracePeriodSeconds": 45,
                    "priorityClassName": "high",
                },
            },
        },
    }


def node_exporter() -> Obj:
    """A monitoring DaemonSet: host namespaces, hostPath volumes, tolerate everything."""
    labels = {"app": "node-exporter"}
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": unique("node-exporter"), "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"maxUnavailable": "10%"}},
            "template": {"metadata": {"labels": labels}, "spec": {
                "hostNetwork": True, "hostPID": True,
                "dnsPolicy": "ClusterFirstWithHostNet",
                "tolerations": [{"operator": "Exists"}],
                "containers": [{
                    "name": "node-exporter", "image": "quay.io/prometheus/node-exporter:v1.8.2",
                    "args": ["--path.rootfs=/host"],
                    "ports": [{"name": "metrics", "containerPort": 9100,
                               "hostPort": 9100}],
                    "resources": {"limits": {"cpu": "250m", "memory": "180Mi"},
                                  "requests": {"cpu": "102m", "memory": "180Mi"}},
                    "volumeMounts": [{"name": "root", "mountPath": "/host",
                                      "readOnly": True, "mountPropagation": "HostToContainer"}],
                }],
                "volumes": [{"name": "root", "hostPath": {"path": "/", "type": "Directory"}}],
            }},
        },
    }


def database() -> Obj:
    """A StatefulSet whose mounts name its claim templates (not pod volumes)."""
    labels = {"app": "db"}
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": unique("db"), "namespace": "default"},
        "spec": {
            "serviceName": "db", "replicas": 3, "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [{"name": "postgres", "image": "postgres:16",
                                "ports": [{"name": "pg", "containerPort": 5432}],
                                "volumeMounts": [{"name": "data",
                                                  "mountPath": "/var/lib/postgresql"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                "resources": {"requests": {"storage": "10Gi"}}}}],
        },
    }


ACCEPTED: list[tuple[str, Callable[[], Obj]]] = [
    ("deployment", deployment),
    ("chart-style deployment", web_deployment),
    ("Recreate deployment", lambda: deployment(strategy={"type": "Recreate"})),
    ("100% surge", lambda: deployment(strategy={"rollingUpdate": {"maxSurge": "100%",
                                                                  "maxUnavailable": 0}})),
    # a percent over 100 is only refused for maxUnavailable (ValidateRollingUpdateDeployment)
    ("surge over 100%", lambda: deployment(strategy={"rollingUpdate": {"maxSurge": "200%"}})),
    ("set-based selector", lambda: deployment(selector={
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]})),
    ("replicaset", lambda: of_kind("ReplicaSet")),
    ("daemonset", lambda: of_kind("DaemonSet")),
    ("node exporter daemonset", node_exporter),
    ("OnDelete daemonset", lambda: of_kind("DaemonSet", updateStrategy={"type": "OnDelete"})),
    ("surge-only daemonset", lambda: of_kind("DaemonSet", updateStrategy={
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}})),
    ("statefulset", sts),
    ("statefulset with claim templates", database),
    # ValidatePodTemplateSpecForStatefulSet leaves the pod spec alone (kube's TODO): its
    # pods are validated when the controller creates them.
    ("statefulset with a bad container name",
     lambda: sts(template=template(containers=[container(name="C")]))),
    ("statefulset without serviceName", lambda: without(sts(), "serviceName")),
]


@pytest.mark.parametrize("build", [b for _, b in ACCEPTED], ids=[i for i, _ in ACCEPTED])
def test_accepted_workloads(store: Store, build: Callable[[], Obj]) -> None:
    obj = build()
    stored = create(store, obj)
    assert_kept(obj["spec"], stored["spec"], "spec")


def assert_kept(sent: Any, stored: Any, path: str) -> None:
    """Defaults only add: everything sent is stored as it was."""
    if isinstance(sent, dict):
        assert isinstance(stored, dict), path
        for key, value in sent.items():
            assert key in stored, f"{path}.{key}"
            assert_kept(value, stored[key], f"{path}.{key}")
    elif isinstance(sent, list):
        assert isinstance(stored, list) and len(stored) == len(sent), path
        for i, (a, b) in enumerate(zip(sent, stored, strict=True)):
            assert_kept(a, b, f"{path}[{i}]")
    else:
        assert stored == sent, path


# --- defaults (pkg/apis/apps/v1/defaults.go) -------------------------------------------------

def test_deployment_defaults(store: Store) -> None:
    """SetDefaults_Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10,
    progressDeadlineSeconds 600; the template gets pod spec defaults."""
    spec = create(store, deployment())["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Always" and pod["dnsPolicy"] == "ClusterFirst"
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    recreate = create(store, deployment(strategy={"type": "Recreate"}))["spec"]["strategy"]
    assert recreate == {"type": "Recreate"}


def test_daemonset_defaults(store: Store) -> None:
    """SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1, maxSurge 0."""
    spec = create(store, of_kind("DaemonSet"))["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert spec["revisionHistoryLimit"] == 10 and "replicas" not in spec


def test_statefulset_defaults(store: Store) -> None:
    """SetDefaults_StatefulSet, and the claim templates as a PVC's defaults and conversion
    leave them (type meta, volumeMode Filesystem, status Pending)."""
    spec = create(store, database())["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain",
                                                           "whenScaled": "Retain"}
    assert spec["podManagementPolicy"] == "Parallel" and spec["revisionHistoryLimit"] == 10
    claim = spec["volumeClaimTemplates"][0]
    assert claim["apiVersion"] == "v1" and claim["kind"] == "PersistentVolumeClaim"
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["status"] == {"phase": "Pending"}
    on_delete = create(store, sts(updateStrategy={"type": "OnDelete"}))["spec"]
    assert on_delete["updateStrategy"] == {"type": "OnDelete"}


# --- updates ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "DaemonSet"])
def test_selector_is_immutable(store: Store, kind: str) -> None:
    """apps/v1 deploymentStrategy/rsStrategy/daemonSetStrategy ValidateUpdate:
    ValidateImmutableField on the selector; other spec changes bump the generation."""
    stored = create(store, of_kind(kind))

    def widen(o: Obj) -> None:
        o["spec"]["selector"]["matchLabels"]["tier"] = "a"
        o["spec"]["template"]["metadata"]["labels"]["tier"] = "a"

    status = rejected(store, edit(stored, widen), old=True)
    assert causes(status) == [("spec.selector", 'Invalid value: v1.LabelSelector{MatchLabels:'
                               'map[string]string{"app":"web", "tier":"a"}, MatchExpressions:'
                               "[]v1.LabelSelectorRequirement(nil)}: field is immutable")]
    changed = update(store, edit(stored, lambda o: o["spec"].update(minReadySeconds=4)))
    assert changed["metadata"]["generation"] == 2


def test_statefulset_update_rule(store: Store) -> None:
    """ValidateStatefulSetUpdate: only replicas, ordinals, template, updateStrategy,
    persistentVolumeClaimRetentionPolicy and minReadySeconds may change."""
    stored = create(store, database())
    for change in ({"serviceName": "other"}, {"podManagementPolicy": "OrderedReady"},
                   {"volumeClaimTemplates": []}, {"revisionHistoryLimit": 3}):
        status = rejected(store, edit(stored, lambda o, c=change: o["spec"].update(c)),
                          old=True)
        assert causes(status) == [("spec", STS_UPDATE)], change
    changed = update(store, edit(stored, lambda o: o["spec"].update(
        replicas=5, minReadySeconds=3, ordinals={"start": 1},
        updateStrategy={"type": "OnDelete"},
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Retain"},
    )))
    assert changed["spec"]["replicas"] == 5 and changed["spec"]["ordinals"] == {"start": 1}
