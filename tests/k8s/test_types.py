"""asyncop.k8s's classes are kube's definitions: every GA definition has its Python name,
every field its wire name, kube's required fields are required, and a parse checks types
only — then dumps back what it read.

kube: the definitions, their properties and `required` lists are kube 1.33's OpenAPI
(asyncop.kubespec); decoding ignores unknown fields (kube's non-strict JSON decoding) and
knows no enums or patterns (those are validation, pkg/apis/*/validation).
"""

from __future__ import annotations

import functools
import importlib
import typing
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from asyncop import k8s
from asyncop.api import kinds
from asyncop.crd.kubetypes import k8s_module
from asyncop.k8s import (
    Container,
    CronJob,
    Deployment,
    IntOrString,
    KubeModel,
    KubeObject,
    PodSpec,
    Quantity,
    ServicePort,
    apiextensions_v1,
    apps_v1,
    batch_v1,
    codegen,
    core_v1,
    meta_v1,
)


@functools.cache
def _classes() -> list[type[KubeModel]]:
    """Every generated class, built (models build on first use; this also proves each can)."""
    out = []
    for name in codegen.ga_definitions():
        module = importlib.import_module(f"asyncop.k8s.{k8s_module(name)}")
        obj = getattr(module, name.rpartition(".")[2])
        if isinstance(obj, type) and issubclass(obj, KubeModel):
            obj.model_rebuild(force=True)
            out.append(obj)
    return out


def test_every_ga_definition_has_a_python_name() -> None:
    defs = codegen.ga_definitions()
    assert len(defs) > 450  # 1.33 has 500-odd GA definitions
    for name, schema in defs.items():
        module = importlib.import_module(f"asyncop.k8s.{k8s_module(name)}")
        obj = getattr(module, name.rpartition(".")[2], None)
        assert obj is not None, name
        if "properties" in schema and name not in codegen.SPECIAL:
            assert isinstance(obj, type) and issubclass(obj, KubeModel), name
            assert vars(obj)["__kube_definition__"] == name
    assert meta_v1.Time is datetime and k8s.RawExtension is Any
    assert apiextensions_v1.JSON is Any


def test_field_wire_names_and_required_are_kubes() -> None:
    defs = codegen.ga_definitions()
    for cls in _classes():
        schema = defs[cls.__kube_definition__]
        wire = {info.serialization_alias or info.alias or py: info
                for py, info in cls.model_fields.items()}
        assert set(wire) == set(schema.get("properties") or {}), cls
        required = {w for w, info in wire.items() if info.is_required()}
        assert required == set(schema.get("required") or ()), cls
        for w, info in wire.items():
            if w not in required:
                assert info.default is None, (cls, w)


def test_top_level_kinds_carry_their_kind() -> None:
    assert Deployment.KIND is kinds.DEPLOYMENT and CronJob.KIND is kinds.CRONJOB
    assert core_v1.Event.KIND is kinds.EVENT and k8s.HorizontalPodAutoscaler.KIND is (
        kinds.HORIZONTALPODAUTOSCALER)
    objects = {c.KIND for c in _classes() if issubclass(c, KubeObject)}
    assert objects == set(kinds.BUILTIN)  # every constant has its view, every view a constant
    assert not issubclass(apps_v1.DeploymentList, KubeObject)


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  uid: 6a3b6c1e-0c6f-4bd4-9d7b-4c1f4f1d2a10
  resourceVersion: "4711"
  generation: 3
  creationTimestamp: "2026-11-24T10:00:00Z"
  labels: {app: web}
  annotations: {deployment.kubernetes.io/revision: "2"}
  managedFields:
  - manager: kubectl
    operation: Update
    apiVersion: apps/v1
    time: "2026-11-24T10:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:replicas": {}}}
spec:
  replicas: 3
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: web}}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}
  template:
    metadata:
      creationTimestamp: null
      labels: {app: web}
    spec:
      restartPolicy: Always
      dnsPolicy: ClusterFirst
      terminationGracePeriodSeconds: 30
      securityContext: {runAsNonRoot: true, fsGroup: 2000}
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        args: ["--port", "8080"]
        env:
        - {name: MODE, value: prod}
        - name: POD_IP
          valueFrom: {fieldRef: {apiVersion: v1, fieldPath: status.podIP}}
        ports:
        - {name: http, containerPort: 8080, protocol: TCP, hostIP: 0.0.0.0}
        resources:
          limits: {cpu: 500m, memory: 256Mi}
          requests: {cpu: 100m, memory: 64Mi}
        readinessProbe:
          httpGet: {path: /healthz, port: http, scheme: HTTP}
          periodSeconds: 10
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: web}}
      volumes:
      - name: cache
        emptyDir: {sizeLimit: 1Gi}
status:
  observedGeneration: 3
  replicas: 3
  readyReplicas: 3
  conditions:
  - type: Available
    status: "True"
    reason: MinimumReplicasAvailable
    lastUpdateTime: "2026-11-24T10:01:00Z"
    lastTransitionTime: "2026-11-24T10:01:00Z"
"""

CRONJOB = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello, namespace: default}
spec:
  schedule: "*/1 * * * *"
  timeZone: Etc/UTC
  concurrencyPolicy: Forbid
  startingDeadlineSeconds: 200
  jobTemplate:
    metadata: {labels: {job: hello}}
    spec:
      backoffLimit: 2
      ttlSecondsAfterFinished: 100
      podFailurePolicy:
        rules:
        - action: FailJob
          onExitCodes: {containerName: hello, operator: In, values: [42]}
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: hello
            image: busybox:1.28
            command: [/bin/sh, -c, date; echo Hello]
status:
  lastScheduleTime: "2026-11-24T10:05:00Z"
  active:
  - {apiVersion: batch/v1, kind: Job, name: hello-29000000, namespace: default}
"""


@pytest.mark.parametrize(("cls", "text"), [(Deployment, DEPLOYMENT), (CronJob, CRONJOB)])
def test_a_real_manifest_round_trips_unchanged(cls: type[KubeObject], text: str) -> None:
    raw = yaml.safe_load(text)
    before = yaml.safe_load(text)
    obj = cls.parse(raw)
    assert raw == before  # parse never mutates
    assert obj.raw is raw
    assert obj.to_raw() == raw
    assert cls.model_validate(obj.to_raw()).to_raw() == raw


def test_typed_reads_of_a_real_deployment() -> None:
    d = Deployment.parse(yaml.safe_load(DEPLOYMENT))
    assert d.spec is not None and d.metadata is not None and d.status is not None
    pod = d.spec.template.spec
    assert pod is not None and d.spec.template.metadata is not None
    assert d.spec.template.metadata.creation_timestamp is None
    c = pod.containers[0]
    assert (c.name, c.image_pull_policy) == ("web", "IfNotPresent")
    assert c.ports is not None and c.ports[0].host_ip == "0.0.0.0"
    assert c.resources is not None and c.resources.limits == {"cpu": "500m", "memory": "256Mi"}
    assert c.readiness_probe is not None and c.readiness_probe.http_get is not None
    assert c.readiness_probe.http_get.port == "http"
    assert d.spec.strategy is not None and d.spec.strategy.rolling_update is not None
    assert (d.spec.strategy.rolling_update.max_surge,
            d.spec.strategy.rolling_update.max_unavailable) == ("25%", 1)
    assert d.metadata.creation_timestamp == datetime(2026, 11, 24, 10, tzinfo=UTC)
    assert d.metadata.managed_fields is not None
    assert d.metadata.managed_fields[0].fields_v1 == {"f:spec": {"f:replicas": {}}}
    assert d.status.conditions is not None and d.status.conditions[0].status == "True"


def test_quantities_accept_numbers_and_keep_text() -> None:
    # kube: resource.Quantity unmarshals JSON numbers and strings, serialises as a string
    adapter: Any = __import__("pydantic").TypeAdapter(Quantity)
    assert adapter.validate_python(2) == "2"
    assert adapter.validate_python(0.5) == "0.5"
    assert adapter.validate_python("1Gi") == "1Gi"
    with pytest.raises(ValidationError):
        adapter.validate_python(True)
    with pytest.raises(ValidationError):
        adapter.validate_python(["1"])
    limits = core_v1.ResourceRequirements.model_validate({"limits": {"cpu": 1}}).limits
    assert limits == {"cpu": "1"}


def test_int_or_string_keeps_its_kind() -> None:
    # kube: intstr.IntOrString keeps whether it was a number or a string
    assert typing.get_args(IntOrString) == (int, str)
    assert ServicePort(port=80, target_port=8080).target_port == 8080
    assert ServicePort.model_validate({"port": 80, "targetPort": "http"}).target_port == "http"


def test_a_parse_invents_no_constraints_and_ignores_unknown_fields() -> None:
    # kube: decoding accepts any string for an enum-like field (validation refuses it later)
    # and drops fields it does not know
    spec = PodSpec.model_validate({"restartPolicy": "Sometimes", "futureField": {"x": 1},
                                   "containers": [{"name": "", "image": "x",
                                                   "ports": [{"containerPort": 70000}]}]})
    assert spec.restart_policy == "Sometimes"
    assert spec.containers[0].ports is not None
    assert spec.containers[0].ports[0].container_port == 70000
    assert "futureField" not in spec.model_dump(by_alias=True, exclude_unset=True)


def test_required_fields_and_wrong_types_fail() -> None:
    with pytest.raises(ValidationError) as info:
        Container.model_validate({"image": "x"})
    assert info.value.errors()[0]["loc"] == ("name",)
    with pytest.raises(ValidationError):
        batch_v1.JobSpec.model_validate({"template": {}, "parallelism": "many"})


def test_python_and_wire_names_both_validate_and_dumps_use_wire_names() -> None:
    a = core_v1.ContainerPort(container_port=80, host_ip="10.0.0.1")
    b = core_v1.ContainerPort.model_validate({"containerPort": 80, "hostIP": "10.0.0.1"})
    assert a == b
    assert a.model_dump(by_alias=True, exclude_unset=True) == {"containerPort": 80,
                                                                "hostIP": "10.0.0.1"}
    spec: dict[str, Any] = {"podSelector": {}, "ingress": [{"from": [{"podSelector": {}}]}]}
    np = k8s.NetworkPolicy.model_validate({"spec": spec})
    assert np.spec is not None and np.spec.ingress is not None
    assert np.spec.ingress[0].from_ is not None
    assert np.to_raw()["spec"] == spec


def test_models_are_the_crd_model_base() -> None:
    from asyncop.crd import Model

    assert issubclass(KubeModel, Model) and issubclass(KubeModel, BaseModel)
    assert KubeModel.model_config.get("extra") == "ignore"
