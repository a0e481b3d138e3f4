"""Kubernetes' own types inside typed resources: the kubebuilder CronJob tutorial's
`jobTemplate: batchv1.JobTemplateSpec` (and a PodTemplateSpec) as one line each.

The generated CRD carries kube's full schema for them, with kube's descriptions, as
controller-gen writes it (the field's own docstring wins; list-map keys, atomic maps,
IntOrString/Quantity forms, template metadata as `type: object`, `+default` markers); it
passes the structural checks, the embedded API server accepts it and then validates, defaults
and prunes deep inside the embedded template; `kubectl explain` reaches a container's
resource limits. Types with no mapping fail in one line naming the model and the field.

kube: the schemas are kube 1.33's OpenAPI definitions (asyncop.kubespec); controller-gen's
forms are its KnownPackages (pkg/crd/known_types.go) and its `+default` marker
(pkg/crd/markers/validation.go, KubernetesDefault); the server's structural rules are
apiextensions' ValidateStructural (pkg/apiserver/schema/validation.go), whose IntOrString
exemption (isIntOrStringAnyOfPattern) lets controller-gen's `anyOf` through.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, Literal

import aiohttp
import pytest
from kubernetes_asyncio.client import (
    AdmissionregistrationV1ServiceReference,
    V1beta1IPAddress,
    V1JobTemplateSpec,
)

from asyncop.apiserver import ApiServer
from asyncop.apiserver.schema.structural import validate_structural
from asyncop.crd import CRDError, CustomResource, Int32, Int64, Model, crd_yaml
from asyncop.crd.kubetypes import QUANTITY_PATTERN, KubeRecursion, kube_schema
from asyncop.crd.structural import check_structural
from asyncop.k8s import (
    JobTemplateSpec,
    LabelSelector,
    ObjectReference,
    PodTemplateSpec,
    apiextensions_v1,
    codegen,
    meta_v1,
)
from asyncop.kubespec import definitions
from tests.apiserver.httpkit import call, install_crd
from tests.e2e.conftest import Kubectl


class CronJobSpec(Model):
    """CronJobSpec defines the desired state of CronJob."""

    schedule: str
    """The schedule in Cron format."""
    starting_deadline_seconds: Int64 | None = None
    """Optional deadline in seconds for starting the job if it misses scheduled time."""
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] = "Allow"
    """How to treat concurrent executions of a Job."""
    suspend: bool | None = None
    """Suspend subsequent executions."""
    job_template: JobTemplateSpec
    """Specifies the job that will be created when executing a CronJob."""
    successful_jobs_history_limit: Int32 | None = None
    """The number of successful finished jobs to retain."""


class CronJobStatus(Model):
    """CronJobStatus defines the observed state of CronJob."""

    active: list[ObjectReference] = []
    """A list of pointers to currently running jobs."""
    last_schedule_time: datetime | None = None
    """When the job was last successfully scheduled."""


class CronJob(CustomResource, group="batch.tutorial.kubebuilder.io", version="v1"):
    """CronJob is the Schema for the cronjobs API."""

    spec: CronJobSpec
    status: CronJobStatus | None = None


class PoolSpec(Model):
    replicas: int = 1
    selector: LabelSelector
    template: PodTemplateSpec


class PoolStatus(Model):
    conditions: list[meta_v1.Condition] = []


class WorkerPool(CustomResource, group="batch.tutorial.kubebuilder.io", version="v1"):
    """A pool of identical worker pods."""

    spec: PoolSpec
    status: PoolStatus | None = None


def node(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """Follow `a.b[].c` through properties (`[]`: array items, `{}`: map values)."""
    for part in path.split("."):
        schema = schema["properties"][part.rstrip("[]{}")]
        if part.endswith("[]"):
            schema = schema["items"]
        elif part.endswith("{}"):
            schema = schema["additionalProperties"]
    return schema


def kube_description(definition: str, field: str) -> str:
    text: str = definitions()[definition]["properties"][field]["description"]
    return text


def walk(schema: Any) -> list[dict[str, Any]]:
    out = []
    if isinstance(schema, dict):
        out.append(schema)
        for value in schema.values():
            out.extend(walk(value))
    elif isinstance(schema, list):
        for value in schema:
            out.extend(walk(value))
    return out


POD = "spec.jobTemplate.spec.template.spec"


def test_the_crd_reaches_resource_limits_with_kubes_descriptions() -> None:
    schema = CronJob.schema()  # passes check_root / check_structural, or raises
    limits = node(schema, f"{POD}.containers[].resources.limits")
    assert limits["description"] == kube_description(
        "io.k8s.api.core.v1.ResourceRequirements", "limits")
    # kube: resource.Quantity in controller-gen's form (KnownPackages)
    assert limits["additionalProperties"] == {
        "pattern": QUANTITY_PATTERN, "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True}
    containers = node(schema, f"{POD}.containers")
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["description"] == kube_description("io.k8s.api.core.v1.PodSpec",
                                                         "containers")
    assert containers["items"]["required"] == ["name"]
    assert len(containers["items"]["properties"]) == len(
        definitions()["io.k8s.api.core.v1.Container"]["properties"])
    job_template = node(schema, "spec.jobTemplate")
    assert job_template["description"] == ("Specifies the job that will be created when "
                                           "executing a CronJob.")  # the field's own wins
    assert node(schema, "spec.jobTemplate.spec.template")["description"] == kube_description(
        "io.k8s.api.batch.v1.JobSpec", "template")
    assert set(node(schema, "spec.jobTemplate.spec")["properties"]) == set(
        definitions()["io.k8s.api.batch.v1.JobSpec"]["properties"])
    assert node(schema, "spec.jobTemplate.spec")["required"] == ["template"]


def test_controller_gens_forms_for_kubes_special_types() -> None:
    schema = CronJob.schema()
    # an embedded ObjectMeta: just an object (controller-gen without generateEmbeddedObjectMeta)
    assert node(schema, "spec.jobTemplate.metadata") == {
        "type": "object", "description": kube_description(
            "io.k8s.api.batch.v1.JobTemplateSpec", "metadata")}
    assert node(schema, f"{POD}.containers[].livenessProbe.httpGet.port") == {
        "description": kube_description("io.k8s.api.core.v1.HTTPGetAction", "port"),
        "anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    ports = node(schema, f"{POD}.containers[].ports")
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    # kube: ContainerPort.Protocol carries +default="TCP"; controller-gen writes it
    assert ports["items"]["properties"]["protocol"]["default"] == "TCP"
    assert node(schema, f"{POD}.imagePullSecrets[].name")["default"] == ""
    assert node(schema, f"{POD}.imagePullSecrets[]")["x-kubernetes-map-type"] == "atomic"
    assert node(schema, "status.active[]")["x-kubernetes-map-type"] == "atomic"
    pool = WorkerPool.schema()
    when = node(pool, "status.conditions[].lastTransitionTime")
    assert (when["type"], when["format"]) == ("string", "date-time")
    assert node(pool, "status.conditions[]")["required"] == definitions()[
        "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"]["required"]
    assert set(node(pool, "status.conditions[]")["required"]) == {
        "lastTransitionTime", "message", "reason", "status", "type"}
    assert node(pool, "spec.template.spec.containers")["x-kubernetes-list-map-keys"] == ["name"]
    raw_ext = kube_schema("io.k8s.api.apps.v1.ControllerRevision")["properties"]["data"]
    assert {k: v for k, v in raw_ext.items() if k != "description"} == {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}
    for n in walk(schema):  # nothing a CRD schema has no place for
        assert "$ref" not in n and "x-kubernetes-patch-strategy" not in n
        assert "x-kubernetes-group-version-kind" not in n and "x-kubernetes-unions" not in n


def test_every_ga_definition_expands_structurally() -> None:
    # kube: ValidateStructural, and validateMapListKeysMapSet's "map keys must be required or
    # have a default" (apiextensions validation). Self-containing definitions (JSONSchemaProps
    # and what holds it) cannot be expanded; kube's own data breaks the map-key rule in
    # ServiceAccount.secrets (ObjectReference.name) and flowcontrol's status conditions, so
    # kube-apiserver would refuse those embedded too: they fail with the one-line CRDError.
    recursive, refused = set(), set()
    for name in codegen.ga_definitions():
        if name in codegen.SPECIAL:
            continue
        try:
            expanded = kube_schema(name)
        except KubeRecursion as exc:
            assert exc.definition.endswith(".JSONSchemaProps"), name
            recursive.add(name.rpartition(".")[2])
            continue
        assert validate_structural({"type": "object", "properties": {"x": expanded}},
                                   "schema") == [], name
        try:
            check_structural(name, expanded)
        except CRDError as exc:
            assert "must be required or have a default" in str(exc), exc
            refused.add(name.rpartition(".")[2])
    assert recursive == {"CustomResourceDefinition", "CustomResourceDefinitionList",
                         "CustomResourceDefinitionSpec", "CustomResourceDefinitionVersion",
                         "CustomResourceValidation", "JSONSchemaProps"}
    assert refused == {"ServiceAccount", "ServiceAccountList", "FlowSchema", "FlowSchemaList",
                       "FlowSchemaStatus", "PriorityLevelConfiguration",
                       "PriorityLevelConfigurationList", "PriorityLevelConfigurationStatus"}


def test_the_generated_yaml_is_byte_stable() -> None:
    (crd,) = [CronJob.crd()]
    text = crd_yaml(crd)
    assert text == crd_yaml(CronJob.crd())
    assert "x-kubernetes-int-or-string: true" in text
    assert len(json.dumps(crd)) < 3 * 1024 * 1024  # kube-apiserver's request limit


CRONJOBS = "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/default/cronjobs"


def cronjob(name: str, containers: list[dict[str, Any]], **pod: Any) -> dict[str, Any]:
    return {"apiVersion": "batch.tutorial.kubebuilder.io/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {
                "spec": {"restartPolicy": "OnFailure", "containers": containers, **pod}}}}}}


@pytest.fixture
async def served(apiserver_no_sim: ApiServer) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    async with aiohttp.ClientSession() as http:
        await install_crd(http, apiserver_no_sim.url, dict(CronJob.crd()), CRONJOBS)
        yield apiserver_no_sim.url, http


async def test_the_server_accepts_the_crd_and_defaults_inside_the_template(
        served: tuple[str, aiohttp.ClientSession]) -> None:
    base, http = served
    code, created = await call(http, "POST", base + CRONJOBS, json=cronjob("hello", [{
        "name": "hello", "image": "busybox:1.28", "ports": [{"containerPort": 8080}],
        "resources": {"limits": {"cpu": 1, "memory": "64Mi"}}}]))
    assert code == 201, created
    pod = created["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert pod["containers"][0]["resources"]["limits"] == {"cpu": 1, "memory": "64Mi"}
    assert created["spec"]["concurrencyPolicy"] == "Allow"
    typed = CronJob.parse(created)  # type: ignore[arg-type]
    job = typed.spec.job_template.spec
    assert job is not None and job.template.spec is not None
    resources = job.template.spec.containers[0].resources
    assert resources is not None and resources.limits == {"cpu": "1", "memory": "64Mi"}


async def test_unknown_fields_in_the_template_are_refused_or_pruned(
        served: tuple[str, aiohttp.ClientSession]) -> None:
    base, http = served
    body = cronjob("typo", [{"name": "c", "image": "busybox"}], containrs=[{"name": "x"}])
    code, status = await call(http, "POST", base + CRONJOBS + "?fieldValidation=Strict",
                              json=body)
    assert code == 400, status
    assert status["message"].endswith(
        'unknown field "spec.jobTemplate.spec.template.spec.containrs"')
    async with http.post(base + CRONJOBS + "?fieldValidation=Warn", json=body) as r:
        assert r.status == 201
        assert r.headers.getall("Warning") == [
            '299 - "unknown field \\"spec.jobTemplate.spec.template.spec.containrs\\""']
        stored = await r.json()
    assert "containrs" not in stored["spec"]["jobTemplate"]["spec"]["template"]["spec"]


async def test_the_template_is_validated_with_kubes_schema(
        served: tuple[str, aiohttp.ClientSession]) -> None:
    base, http = served
    code, status = await call(http, "POST", base + CRONJOBS, json=cronjob("bad", [
        {"image": "busybox", "resources": {"limits": {"memory": "64Mo"}}}]))
    assert code == 422, status
    fields = {c["field"]: c["message"] for c in status["details"]["causes"]}
    c0 = "spec.jobTemplate.spec.template.spec.containers[0]"
    assert fields[f"{c0}.name"] == "Required value"
    assert fields[f"{c0}.resources.limits.memory"].startswith('Invalid value: "64Mo": ')


async def test_kubectl_explain_reaches_a_containers_limits(kubectl: Kubectl) -> None:
    path = kubectl.write("cronjobs.yaml", crd_yaml(CronJob.crd()))
    await kubectl.ok("create", "-f", path)
    await kubectl.ok("wait", "--for=condition=Established",
                     "crd/cronjobs.batch.tutorial.kubebuilder.io", "--timeout=20s")
    out = await kubectl.ok("explain", "--api-version=batch.tutorial.kubebuilder.io/v1",
                           "cronjobs.spec.jobTemplate.spec.template.spec.containers.resources."
                           "limits")
    assert "Limits describes the maximum amount of compute resources allowed." in out


def test_the_servers_structural_check_exempts_only_kubes_int_or_string_anyof() -> None:
    # kube: isIntOrStringAnyOfPattern / isIntOrStringAllOfPattern compare exactly
    ok = [{"type": "integer"}, {"type": "string"}]
    schema = {"type": "object", "properties": {
        "a": {"x-kubernetes-int-or-string": True, "anyOf": ok},
        "b": {"x-kubernetes-int-or-string": True, "allOf": [{"anyOf": ok}]},
        "c": {"x-kubernetes-int-or-string": True, "anyOf": ok[::-1]}}}
    assert [c["field"] for c in validate_structural(schema, "s")] == [
        "s.properties[c].anyOf[0].type", "s.properties[c].anyOf[1].type"]


# -- types with no mapping -------------------------------------------------------------------

class Opaque:
    pass


def test_a_kubernetes_asyncio_model_fails_in_one_line_naming_the_asyncop_class() -> None:
    with pytest.raises(CRDError) as info:
        class TutorialSpec(Model):
            schedule: str
            job_template: V1JobTemplateSpec
    assert str(info.value) == (
        "TutorialSpec: job_template: V1JobTemplateSpec is a kubernetes_asyncio client model, "
        "not a type asyncop can map; use asyncop.k8s.batch_v1.JobTemplateSpec instead")


def test_a_kubernetes_client_model_fails_when_the_crd_is_made() -> None:
    from kubernetes.client import V1Container  # a pydantic model: the class itself is made

    class PodsSpec(Model):
        sidecars: list[V1Container] = []

    class Pods(CustomResource, group="example.com", version="v1"):
        spec: PodsSpec

    with pytest.raises(CRDError) as info:
        Pods.schema()
    assert str(info.value) == (
        "Pods: spec.sidecars[*]: V1Container is a kubernetes client model, not a type asyncop "
        "can map; use asyncop.k8s.core_v1.Container instead")


@pytest.mark.parametrize(("annotation", "message"), [
    (Opaque, "Opaque has no OpenAPI mapping (use a str/int/float/bool, list[...], "
             "dict[str, ...] or a Model)"),
    (dict[str, AdmissionregistrationV1ServiceReference],
     "AdmissionregistrationV1ServiceReference is a kubernetes_asyncio client model, not a type "
     "asyncop can map; use asyncop.k8s.admissionregistration_v1.ServiceReference instead"),
    (V1beta1IPAddress | None, "V1beta1IPAddress is a kubernetes_asyncio client model, not a "
     "type asyncop can map; asyncop.k8s has Kubernetes' GA types only (use dict[str, Any] for "
     "it)"),
])
def test_unmapped_types_fail_when_the_class_is_made(annotation: Any, message: str) -> None:
    namespace = {"__annotations__": {"thing": annotation}, "__module__": __name__}
    with pytest.raises(CRDError) as info:
        type("Spec", (Model,), namespace)
    assert str(info.value) == f"Spec: thing: {message}"


def test_a_recursive_kube_type_is_one_line_naming_the_model_and_field() -> None:
    class ApiSpec(Model):
        validation: apiextensions_v1.CustomResourceValidation | None = None

    class Api(CustomResource, group="example.com", version="v1"):
        spec: ApiSpec

    with pytest.raises(CRDError) as info:
        Api.schema()
    assert str(info.value) == (
        "Api: spec.validation.openAPIV3Schema.allOf[*]: JSONSchemaProps refers to itself "
        "(kube's io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps); a "
        "structural schema cannot recurse (use a dict[str, Any] field to cut the cycle)")
