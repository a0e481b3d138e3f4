"""Pods as kube-apiserver 1.33 validates and defaults them (builtin/pods.py, podspec.py,
containers.py, resources.py, probes.py, volumes.py, scheduling.py, security.py).

Each refused case names the kube function whose message it pins (all in
pkg/apis/core/validation/validation.go unless said otherwise); the expected causes are the
whole list, in kube's order. Most cases write through the in-process Writer; pods/binding and
one 422 go over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from asyncop.apiserver import ApiServer, Store
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call
from tests.apiserver.podkit import (
    Obj,
    causes,
    container,
    create,
    edit,
    new_store,
    pod,
    rejected,
    update,
)

http = httpkit.http
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
         "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
         "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
             "characters, '-' or '.', and must start and end with an alphanumeric character "
             "(e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
PORTS = "must be between 1 and 65535, inclusive"
C0 = "spec.containers[0]"
GPU_1500M = ("resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, "
             'd:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1500m", Format:"DecimalSI"}')


@pytest.fixture(scope="module")
def store() -> Store:
    return new_store()


def ctr(**fields: Any) -> Obj:
    """A pod whose one container has `fields`."""
    return pod(containers=[container(**fields)])


def vol(volume: Obj, **mount: Any) -> Obj:
    """A pod with one volume, mounted at /data unless `mount` says otherwise."""
    mount = {"name": volume.get("name", "data"), "mountPath": "/data", **mount}
    return pod(volumes=[{"name": "data", **volume}], containers=[container(volumeMounts=[mount])])


REFUSED: list[tuple[str, Callable[[], Obj], list[tuple[str, str]]]] = [
    # validateContainers / validateContainerCommon
    ("no containers", lambda: pod(containers=[]), [("spec.containers", "Required value")]),
    ("container name required", lambda: pod(containers=[{"image": "x"}]),
     [(f"{C0}.name", "Required value")]),
    ("container name a label", lambda: ctr(name="Web"),
     [(f"{C0}.name", f'Invalid value: "Web": {LABEL}')]),
    ("container names unique", lambda: pod(containers=[container(), container()]),
     [("spec.containers[1].name", 'Duplicate value: "c"')]),
    ("init and regular names unique", lambda: pod(initContainers=[container()]),
     [("spec.initContainers[0].name", 'Duplicate value: "c"')]),
    ("image required", lambda: ctr(image=""), [(f"{C0}.image", "Required value")]),
    ("imagePullPolicy enum", lambda: ctr(imagePullPolicy="Sometimes"),
     [(f"{C0}.imagePullPolicy", 'Unsupported value: "Sometimes": supported values: '
       '"Always", "IfNotPresent", "Never"')]),
    ("terminationMessagePolicy enum", lambda: ctr(terminationMessagePolicy="Foo"),
     [(f"{C0}.terminationMessagePolicy", 'Unsupported value: "Foo": supported values: '
       '"File", "FallbackToLogsOnError"')]),
    ("regular container restartPolicy", lambda: ctr(restartPolicy="Always"),
     [(f"{C0}.restartPolicy", "Forbidden: may not be set for non-init containers")]),
    # validateContainerPorts
    ("containerPort range", lambda: ctr(ports=[{"containerPort": 70000}]),
     [(f"{C0}.ports[0].containerPort", f"Invalid value: 70000: {PORTS}")]),
    ("containerPort required", lambda: ctr(ports=[{"name": "http"}]),
     [(f"{C0}.ports[0].containerPort", "Required value")]),
    ("hostPort range", lambda: ctr(ports=[{"containerPort": 80, "hostPort": -1}]),
     [(f"{C0}.ports[0].hostPort", f"Invalid value: -1: {PORTS}")]),
    ("protocol enum", lambda: ctr(ports=[{"containerPort": 80, "protocol": "HTTP"}]),
     [(f"{C0}.ports[0].protocol",
       'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"')]),
    ("port name IANA_SVC_NAME", lambda: ctr(ports=[{"containerPort": 80, "name": "web--ui"}]),
     [(f"{C0}.ports[0].name", 'Invalid value: "web--ui": must not contain consecutive '
       "hyphens")]),
    ("port name length", lambda: ctr(ports=[{"containerPort": 80, "name": "a" * 16}]),
     [(f"{C0}.ports[0].name", f'Invalid value: "{"a" * 16}": must be no more than 15 '
       "characters")]),
    ("port names unique", lambda: ctr(ports=[{"containerPort": 80, "name": "http"},
                                             {"containerPort": 81, "name": "http"}]),
     [(f"{C0}.ports[1].name", 'Duplicate value: "http"')]),
    ("host ports unique across containers", lambda: pod(containers=[
        container(ports=[{"containerPort": 80, "hostPort": 8080}]),
        container(name="d", ports=[{"containerPort": 81, "hostPort": 8080}])]),
     [("spec.containers[1].ports[0].hostPort", 'Duplicate value: "TCP//8080"')]),
    ("hostNetwork host port", lambda: pod(hostNetwork=True, containers=[container(
        ports=[{"containerPort": 8080, "hostPort": 8081}])]),
     [(f"{C0}.ports[0].hostPort",
       "Invalid value: 8081: must match `containerPort` when `hostNetwork` is true")]),
    # ValidateEnv (RelaxedEnvironmentVariableValidation: on in 1.33) / validateEnvVarValueFrom
    ("env name printable ASCII but '='", lambda: ctr(env=[{"name": "A=B", "value": "1"}]),
     [(f"{C0}.env[0].name", 'Invalid value: "A=B": a valid environment variable name must '
       "consist only of printable ASCII characters other than '='")]),
    ("env name required", lambda: ctr(env=[{"value": "1"}]), [(f"{C0}.env[0].name",
                                                               "Required value")]),
    ("valueFrom needs a source", lambda: ctr(env=[{"name": "A", "valueFrom": {}}]),
     [(f"{C0}.env[0].valueFrom", 'Invalid value: "": must specify one of: `fieldRef`, '
       "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")]),
    ("valueFrom and value", lambda: ctr(env=[{"name": "A", "value": "x", "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.name"}}}]),
     [(f"{C0}.env[0].valueFrom", 'Invalid value: "": may not be specified when `value` is '
       "not empty")]),
    ("valueFrom one source", lambda: ctr(env=[{"name": "A", "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.name"},
        "secretKeyRef": {"name": "s", "key": "k"}}}]),
     [(f"{C0}.env[0].valueFrom", 'Invalid value: "": may not have more than one field '
       "specified at a time")]),
    ("fieldRef unknown field", lambda: ctr(env=[{"name": "A", "valueFrom": {
        "fieldRef": {"fieldPath": "spec.foo"}}}]),
     [(f"{C0}.env[0].valueFrom.fieldRef.fieldPath", 'Invalid value: "spec.foo": error '
       "converting fieldPath: field label not supported: spec.foo")]),
    ("fieldRef not for env", lambda: ctr(env=[{"name": "A", "valueFrom": {
        "fieldRef": {"fieldPath": "status.phase"}}}]),
     [(f"{C0}.env[0].valueFrom.fieldRef.fieldPath", 'Unsupported value: "status.phase": '
       'supported values: "metadata.name", "metadata.namespace", "metadata.uid", '
       '"spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", '
       '"status.podIP", "status.podIPs"')]),
    ("configMapKeyRef key", lambda: ctr(env=[{"name": "A", "valueFrom": {
        "configMapKeyRef": {"name": "cm", "key": "a/b"}}}]),
     [(f"{C0}.env[0].valueFrom.configMapKeyRef.key", 'Invalid value: "a/b": a valid config '
       "key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
       "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")]),
    ("envFrom needs a source", lambda: ctr(envFrom=[{"prefix": "X_"}]),
     [(f"{C0}.envFrom", 'Invalid value: "": must specify one of: `configMapRef` or '
       "`secretRef`")]),
    # validateResourceRequirements
    ("request above limit", lambda: ctr(resources={"limits": {"cpu": "1"},
                                                   "requests": {"cpu": "2"}}),
     [(f"{C0}.resources.requests", 'Invalid value: "2": must be less than or equal to cpu '
       "limit of 1")]),
    ("request above limit, canonical units", lambda: ctr(
        resources={"limits": {"memory": "1Gi"}, "requests": {"memory": "1025Mi"}}),
     [(f"{C0}.resources.requests", 'Invalid value: "1025Mi": must be less than or equal to '
       "memory limit of 1Gi")]),
    ("negative quantity", lambda: ctr(resources={"requests": {"memory": "-1Gi"}}),
     [(f"{C0}.resources.requests[memory]",
       'Invalid value: "-1Gi": must be greater than or equal to 0')]),
    ("resource name", lambda: ctr(resources={"requests": {"gpu": "1"}}),
     [(f"{C0}.resources.requests[gpu]",
       'Invalid value: "gpu": must be a standard resource type or fully qualified'),
      (f"{C0}.resources.requests[gpu]",
       'Invalid value: "gpu": must be a standard resource for containers')]),
    ("extended resource needs a limit", lambda: ctr(
        resources={"requests": {"example.com/gpu": "1"}}),
     [(f"{C0}.resources.limits",
       "Required value: Limit must be set for non overcommitable resources")]),
    # the value is a resource.Quantity, whose String() is the pointer's: Go's %#v is shown
    ("extended resource whole", lambda: ctr(resources={"limits": {"example.com/gpu": "1500m"}}),
     [(f"{C0}.resources.limits[example.com/gpu]", f"Invalid value: {GPU_1500M}: must be an "
       "integer"),
      (f"{C0}.resources.requests[example.com/gpu]",
       f"Invalid value: {GPU_1500M}: must be an integer")]),
    # validateProbe / validateHandler / validateLifecycle
    ("probe needs a handler", lambda: ctr(livenessProbe={"periodSeconds": 5}),
     [(f"{C0}.livenessProbe", "Required value: must specify a handler type")]),
    ("probe one handler", lambda: ctr(readinessProbe={"exec": {"command": ["true"]},
                                                      "tcpSocket": {"port": 80}}),
     [(f"{C0}.readinessProbe.tcpSocket",
       "Forbidden: may not specify more than 1 handler type")]),
    ("liveness successThreshold", lambda: ctr(livenessProbe={
        "tcpSocket": {"port": 80}, "successThreshold": 2}),
     [(f"{C0}.livenessProbe.successThreshold", "Invalid value: 2: must be 1")]),
    ("probe period not negative", lambda: ctr(readinessProbe={
        "tcpSocket": {"port": 80}, "periodSeconds": -1}),
     [(f"{C0}.readinessProbe.periodSeconds",
       "Invalid value: -1: must be greater than or equal to 0")]),
    ("readiness grace period", lambda: ctr(readinessProbe={
        "tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 10}),
     [(f"{C0}.readinessProbe.terminationGracePeriodSeconds",
       "Invalid value: 10: must not be set for readinessProbes")]),
    ("httpGet port", lambda: ctr(livenessProbe={"httpGet": {"port": 0}}),
     [(f"{C0}.livenessProbe.httpGet.port", f"Invalid value: 0: {PORTS}")]),
    ("httpGet scheme", lambda: ctr(livenessProbe={"httpGet": {"port": 80, "scheme": "FTP"}}),
     [(f"{C0}.livenessProbe.httpGet.scheme",
       'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"')]),
    ("exec command", lambda: ctr(startupProbe={"exec": {"command": []}}),
     [(f"{C0}.startupProbe.exec.command", "Required value")]),
    ("preStop sleep within grace", lambda: ctr(lifecycle={"preStop": {"sleep": {
        "seconds": 60}}}),
     [(f"{C0}.lifecycle.preStop.sleep", "Invalid value: 60: must be non-negative and less "
       "than terminationGracePeriodSeconds (30)")]),
    # validateInitContainers: sidecars are init containers with restartPolicy Always
    ("init container probes", lambda: pod(initContainers=[container(
        name="init", readinessProbe={"exec": {"command": ["true"]}})]),
     [("spec.initContainers[0].readinessProbe",
       "Forbidden: may not be set for init containers without restartPolicy=Always")]),
    ("init container restartPolicy", lambda: pod(initContainers=[container(
        name="init", restartPolicy="OnFailure")]),
     [("spec.initContainers[0].restartPolicy",
       'Unsupported value: "OnFailure": supported values: "Always"')]),
    # ValidateVolumes / validateVolumeSource / ValidateVolumeMounts
    ("volume name", lambda: pod(volumes=[{"name": "Data", "emptyDir": {}}]),
     [("spec.volumes[0].name", f'Invalid value: "Data": {LABEL}')]),
    ("volume names unique", lambda: pod(volumes=[{"name": "data", "emptyDir": {}},
                                                 {"name": "data", "emptyDir": {}}]),
     [("spec.volumes[1].name", 'Duplicate value: "data"')]),
    # A volume with errors is left out of the names mounts may use (ValidateVolumes only
    # inserts error-free volumes), so its mount is also "Not found".
    ("one volume source", lambda: vol({"emptyDir": {}, "configMap": {"name": "cm"}}),
     [("spec.volumes[0].configMap", "Forbidden: may not specify more than 1 volume type"),
      (f"{C0}.volumeMounts[0].name", 'Not found: "data"')]),
    ("one volume source (kube's spelling)", lambda: vol({"emptyDir": {}, "downwardAPI": {}}),
     [("spec.volumes[0].downwarAPI", "Forbidden: may not specify more than 1 volume type"),
      (f"{C0}.volumeMounts[0].name", 'Not found: "data"')]),
    ("configMap name", lambda: vol({"configMap": {}}),
     [("spec.volumes[0].configMap.name", "Required value"),
      (f"{C0}.volumeMounts[0].name", 'Not found: "data"')]),
    ("secret defaultMode", lambda: vol({"secret": {"secretName": "s", "defaultMode": 1000}}),
     [("spec.volumes[0].secret.defaultMode", "Invalid value: 1000: must be a number between 0 "
       "and 0777 (octal), both inclusive"), (f"{C0}.volumeMounts[0].name", 'Not found: "data"')]),
    ("hostPath type", lambda: vol({"hostPath": {"path": "/var", "type": "Dir"}}),
     [("spec.volumes[0].hostPath.type", 'Unsupported value: "Dir": supported values: "", '
       '"BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", '
       '"Socket"'), (f"{C0}.volumeMounts[0].name", 'Not found: "data"')]),
    ("claimName", lambda: vol({"persistentVolumeClaim": {"readOnly": True}}),
     [("spec.volumes[0].persistentVolumeClaim.claimName", "Required value"),
      (f"{C0}.volumeMounts[0].name", 'Not found: "data"')]),
    ("mount a declared volume", lambda: ctr(volumeMounts=[{"name": "missing",
                                                           "mountPath": "/x"}]),
     [(f"{C0}.volumeMounts[0].name", 'Not found: "missing"')]),
    ("mountPath required", lambda: vol({"emptyDir": {}}, mountPath=""),
     [(f"{C0}.volumeMounts[0].mountPath", "Required value")]),
    ("mountPaths unique", lambda: pod(volumes=[{"name": "data", "emptyDir": {}}], containers=[
        container(volumeMounts=[{"name": "data", "mountPath": "/d"},
                                {"name": "data", "mountPath": "/d"}])]),
     [(f"{C0}.volumeMounts[1].mountPath", 'Invalid value: "/d": must be unique')]),
    ("subPath no backsteps", lambda: vol({"emptyDir": {}}, subPath="../x"),
     [(f"{C0}.volumeMounts.subPath", "Invalid value: \"../x\": must not contain '..'")]),
    # ValidatePodSpec
    ("restartPolicy enum", lambda: pod(restartPolicy="Sometimes"),
     [("spec.restartPolicy", 'Unsupported value: "Sometimes": supported values: "Always", '
       '"OnFailure", "Never"')]),
    ("dnsPolicy enum", lambda: pod(dnsPolicy="Custom"),
     [("spec.dnsPolicy", 'Unsupported value: "Custom": supported values: '
       '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"')]),
    ("dnsPolicy None needs dnsConfig", lambda: pod(dnsPolicy="None"),
     [("spec.dnsConfig", "Required value: must provide `dnsConfig` when `dnsPolicy` is None")]),
    ("nodeSelector values", lambda: pod(nodeSelector={"disk": "ssd!"}),
     [("spec.nodeSelector", "Invalid value: \"ssd!\": a valid label must be an empty string or "
       "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
       "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]),
    ("serviceAccountName", lambda: pod(serviceAccountName="Bad_SA"),
     [("spec.serviceAccountName", f'Invalid value: "Bad_SA": {SUBDOMAIN}')]),
    ("activeDeadlineSeconds", lambda: pod(activeDeadlineSeconds=0),
     [("spec.activeDeadlineSeconds", "Invalid value: 0: must be between 1 and 2147483647, "
       "inclusive")]),
    ("hostname a label", lambda: pod(hostname="a.b"),
     [("spec.hostname", 'Invalid value: "a.b": must not contain dots')]),
    # kube: IsValidUserID / IsValidGroupID (apimachinery util/validation), 0 to MaxInt32
    ("runAsUser range", lambda: pod(securityContext={"runAsUser": -1}),
     [("spec.securityContext.runAsUser",
       "Invalid value: -1: must be between 0 and 2147483647, inclusive")]),
    ("container runAsGroup range", lambda: ctr(securityContext={"runAsGroup": 2**32}),
     [(f"{C0}.securityContext.runAsGroup",
       "Invalid value: 4294967296: must be between 0 and 2147483647, inclusive")]),
    ("fsGroup just above MaxInt32", lambda: pod(securityContext={"fsGroup": 2**31}),
     [("spec.securityContext.fsGroup",
       "Invalid value: 2147483648: must be between 0 and 2147483647, inclusive")]),
    ("seccomp type", lambda: pod(securityContext={"seccompProfile": {"type": "Strict"}}),
     [("spec.securityContext.seccompProfile.type", 'Unsupported value: "Strict": supported '
       'values: "Localhost", "RuntimeDefault", "Unconfined"')]),
    ("ephemeral containers on create", lambda: pod(ephemeralContainers=[
        {"name": "debug", "image": "busybox", "terminationMessagePolicy": "File",
         "imagePullPolicy": "Always"}]),
     [("spec.ephemeralContainers", "Forbidden: cannot be set on create")]),
    # ValidateTolerations
    ("Exists takes no value", lambda: pod(tolerations=[{"key": "k", "operator": "Exists",
                                                         "value": "v"}]),
     [("spec.tolerations[0].operator",
       "Invalid value: \"v\": value must be empty when `operator` is 'Exists'")]),
    ("empty key needs Exists", lambda: pod(tolerations=[{"operator": "Equal"}]),
     [("spec.tolerations[0].operator", 'Invalid value: "Equal": operator must be Exists when '
       '`key` is empty, which means "match all values and all keys"')]),
    ("tolerationSeconds needs NoExecute", lambda: pod(tolerations=[
        {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
     [("spec.tolerations[0].effect", "Invalid value: \"NoSchedule\": effect must be "
       "'NoExecute' when `tolerationSeconds` is set")]),
    ("toleration operator", lambda: pod(tolerations=[{"key": "k", "operator": "In"}]),
     [("spec.tolerations[0].operator",
       'Unsupported value: "In": supported values: "Equal", "Exists"')]),
    ("toleration effect", lambda: pod(tolerations=[{"key": "k", "operator": "Exists",
                                                     "effect": "NoRun"}]),
     [("spec.tolerations[0].effect", 'Unsupported value: "NoRun": supported values: '
       '"NoSchedule", "PreferNoSchedule", "NoExecute"')]),
    # validateAffinity
    ("node selector terms", lambda: pod(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}),
     [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms", "Required value: must have at least one node selector term")]),
    ("node selector operator", lambda: pod(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "Equals",
                                   "values": ["a"]}]}]}}}),
     [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].operator",
       'Invalid value: "Equals": not a valid selector operator')]),
    ("preferred weight", lambda: pod(affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]}}),
     [("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
       "Invalid value: 0: must be in the range 1-100")]),
    ("pod affinity selector values", lambda: pod(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}]}}),
     [("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
       "labelSelector.matchExpressions[0].values",
       "Required value: must be specified when `operator` is 'In' or 'NotIn'")]),
    # validateTopologySpreadConstraints
    ("maxSkew", lambda: pod(topologySpreadConstraints=[
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     [("spec.topologySpreadConstraints[0].maxSkew", "Invalid value: 0: must be greater than "
       "zero")]),
]


@pytest.mark.parametrize(("build", "expected"), [(b, e) for _, b, e in REFUSED],
                         ids=[i for i, _, _ in REFUSED])
def test_refused_pods(store: Store, build: Callable[[], Obj],
                      expected: list[tuple[str, str]]) -> None:
    status = rejected(store, build())
    assert causes(status) == expected
    assert status["code"] == 422 and status["reason"] == "Invalid"


ACCEPTED: list[tuple[str, Callable[[], Obj]]] = [
    ("env names with spaces and dots (1.33's relaxed rule)",
     lambda: ctr(env=[{"name": "MY VAR.1", "value": "x"}])),
    ("a sidecar with probes", lambda: pod(initContainers=[container(
        name="proxy", restartPolicy="Always", readinessProbe={"tcpSocket": {"port": 15000}})])),
    ("a volume without a source is an emptyDir", lambda: vol({})),
    ("lifecycle sleep of zero (PodLifecycleSleepActionAllowZero)",
     lambda: ctr(lifecycle={"preStop": {"sleep": {"seconds": 0}}})),
    ("projected volume", lambda: vol({"projected": {"sources": [
        {"configMap": {"name": "cm", "items": [{"key": "a", "path": "a"}]}},
        {"downwardAPI": {"items": [{"path": "labels",
                                    "fieldRef": {"fieldPath": "metadata.labels"}}]}},
        {"serviceAccountToken": {"path": "token"}}]}})),
]


@pytest.mark.parametrize("build", [b for _, b in ACCEPTED], ids=[i for i, _ in ACCEPTED])
def test_accepted_pods(store: Store, build: Callable[[], Obj]) -> None:
    assert create(store, build())["metadata"]["uid"]


def test_pod_defaults_and_create_admission(store: Store) -> None:
    # kube: SetDefaults_PodSpec/Container/Probe/HTTPGetAction/ObjectFieldSelector/Volume,
    # SetDefaults_Pod; admission plugins ServiceAccount, Priority, DefaultTolerationSeconds
    created = create(store, pod(
        volumes=[{"name": "cfg", "configMap": {"name": "cm"}}, {"name": "scratch"}],
        containers=[container(
            image="nginx", ports=[{"containerPort": 80}],
            env=[{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            resources={"limits": {"cpu": "0.5", "memory": "1024Mi"}},
            livenessProbe={"httpGet": {"port": 80}})]))
    spec = created["spec"]
    c = spec["containers"][0]
    assert c["imagePullPolicy"] == "Always" and c["ports"] == [{"containerPort": 80,
                                                                "protocol": "TCP"}]
    assert c["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name",
                                                    "apiVersion": "v1"}
    assert c["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"},
                              "requests": {"cpu": "500m", "memory": "1Gi"}}
    assert c["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                                  "timeoutSeconds": 1, "periodSeconds": 10,
                                  "successThreshold": 1, "failureThreshold": 3}
    assert spec["volumes"] == [{"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420}},
                               {"name": "scratch", "emptyDir": {}}]
    assert (spec["serviceAccountName"], spec["serviceAccount"], spec["enableServiceLinks"],
            spec["priority"], spec["preemptionPolicy"]) == (
        "default", "default", True, 0, "PreemptLowerPriority")
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    assert created["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert created["metadata"]["generation"] == 1


@pytest.mark.parametrize(("resources", "qos"), [
    # kube: qos.ComputePodQOS (pkg/apis/core/helper/qos)
    ({}, "BestEffort"),
    ({"requests": {"cpu": "100m"}}, "Burstable"),
    ({"limits": {"cpu": "1"}}, "Burstable"),  # memory not limited
    ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}, "Burstable"),
    ({"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}, "BestEffort"),
])
def test_qos_class(store: Store, resources: Obj, qos: str) -> None:
    assert create(store, ctr(resources=resources))["status"]["qosClass"] == qos


def test_pod_updates(store: Store) -> None:
    # kube: ValidatePodUpdate
    created = create(store, pod(activeDeadlineSeconds=100, tolerations=[
        {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]))

    def changed(change: Callable[[Obj], Any]) -> Obj:
        return edit(created, change)

    status = rejected(store, changed(lambda p: p["spec"].update(restartPolicy="Never")), old=True)
    assert causes(status)[0][0] == "spec" and causes(status)[0][1].startswith(
        "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to "
        "be set to 1 if it was previously negative)\n")
    assert '- \trestartPolicy: "Always",' in causes(status)[0][1]
    assert causes(rejected(store, changed(lambda p: p["spec"]["containers"].append(
        container(name="d"))), old=True)) == [
        ("spec.containers", "Forbidden: pod updates may not add or remove containers")]
    assert causes(rejected(store, changed(lambda p: p["spec"].update(
        activeDeadlineSeconds=200)), old=True)) == [
        ("spec.activeDeadlineSeconds",
         "Invalid value: 200: must be less than or equal to previous value")]
    assert causes(rejected(store, changed(lambda p: p["spec"].pop("activeDeadlineSeconds")),
                           old=True)) == [
        ("spec.activeDeadlineSeconds",
         "Invalid value: null: must not update from a positive integer to nil value")]
    assert causes(rejected(store, changed(lambda p: p["spec"]["tolerations"][0].update(
        key="other")), old=True)) == [
        ("spec.tolerations",
         "Forbidden: existing toleration can not be modified except its tolerationSeconds")]
    assert causes(rejected(store, changed(lambda p: p["spec"].update(nodeName="node-1")),
                           old=True))[0][0] == "spec"  # binding is pods/binding's alone
    # what may change: images, a lower deadline, tolerationSeconds and new tolerations
    updated = update(store, changed(lambda p: (
        p["spec"]["containers"][0].update(image="nginx:1.28"),
        p["spec"].update(activeDeadlineSeconds=50),
        p["spec"]["tolerations"][0].update(tolerationSeconds=60),
        p["spec"]["tolerations"].append({"key": "x", "operator": "Exists"}))))
    assert updated["spec"]["containers"][0]["image"] == "nginx:1.28"
    assert updated["metadata"]["generation"] == 2  # 1.33: pods count spec changes


async def test_binding_subresource(apiserver_no_sim: ApiServer,
                                   http: aiohttp.ClientSession) -> None:
    # kube: BindingREST.Create / setPodHostAndAnnotations (pkg/registry/core/pod/storage)
    url = apiserver_no_sim.url + "/api/v1/namespaces/default/pods"
    code, created = await call(http, "POST", url, json=pod("p"))
    assert code == 201

    def binding(name: str = "p", node: str = "node-1", **target: Any) -> Obj:
        return {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": name, "annotations": {"scheduler/why": "fits"}},
                "target": {"kind": "Node", "name": node, **target}}

    code, body = await call(http, "POST", url + "/p/binding", json=binding("q"))
    assert (code, body["message"]) == (400, "name in URL does not match name in Binding object")
    code, body = await call(http, "POST", url + "/p/binding", json=binding(node="", kind="Pod"))
    assert code == 422 and body["message"] == (
        'Binding "p" is invalid: [target.kind: Unsupported value: "Pod": supported values: '
        '"Node", "<empty>", target.name: Required value]')
    code, body = await call(http, "POST", url + "/p/binding?dryRun=All", json=binding())
    assert code == 201
    code, body = await call(http, "POST", url + "/p/binding", json=binding())
    assert (code, body) == (201, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success", "code": 201})
    code, bound = await call(http, "GET", url + "/p")
    assert bound["spec"]["nodeName"] == "node-1"
    assert bound["metadata"]["annotations"] == {"scheduler/why": "fits"}
    assert bound["metadata"]["generation"] == created["metadata"]["generation"] == 1
    assert [c["type"] for c in bound["status"]["conditions"]] == ["PodScheduled"]
    code, body = await call(http, "POST", url + "/p/binding", json=binding(node="node-2"))
    assert (code, body["reason"], body["message"]) == (
        409, "Conflict", 'Operation cannot be fulfilled on pods/binding "p": pod p is already '
        'assigned to node "node-1"')
    code, body = await call(http, "POST", url + "/missing/binding", json=binding("missing"))
    assert (code, body["message"]) == (404, 'pods "missing" not found')
    code, _ = await call(http, "PUT", url + "/p/binding", json=binding())
    assert code == 405


def test_binding_preconditions_and_deleting_pods(store: Store) -> None:
    # kube: setPodHostAndAnnotations (uid/resourceVersion preconditions, deleting pods)
    import asyncio

    rt = store.resolve("", "v1", "pods")
    created = create(store, pod("guarded", **{}))
    target = {"kind": "Node", "name": "n"}

    def bind(name: str, **meta: Any) -> None:
        asyncio.run(store.bind(rt, "default", name, {"metadata": {"name": name, **meta},
                                                     "target": target}))

    with pytest.raises(Exception) as err:
        bind("guarded", uid="other")
    assert getattr(err.value, "status", {}).get("message") == (
        'Operation cannot be fulfilled on pods "guarded": Precondition failed: UID in '
        f'precondition: other, UID in object meta: {created["metadata"]["uid"]}')
    doomed = create(store, edit(pod("doomed"), lambda p: p["metadata"].update(
        finalizers=["example.com/hold"])))
    store.writer.delete(rt, "default", doomed["metadata"]["name"])
    with pytest.raises(Exception) as err:
        bind("doomed")
    assert getattr(err.value, "status", {}).get("message") == (
        'Operation cannot be fulfilled on pods/binding "doomed": pod doomed is being deleted, '
        "cannot be assigned to a host")
