"""HorizontalPodAutoscalers (autoscaling/v2) and PodDisruptionBudgets (policy/v1) as a 1.33
kube-apiserver defaults and validates them: refused manifests with kube's exact messages
(and the function wording each), the defaults a 1.33 server fills, real-world manifests."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiserver.builtinkit import Kit, Obj, invalid_message

TARGET = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
CPU_SOURCE: Obj = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}
CPU: Obj = {"type": "Resource", "resource": CPU_SOURCE}
SOURCE_ONLY = "must populate the given metric source only"


def hpa(**spec: Any) -> Obj:
    return {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 5,
                                                 **spec}}


def metric(mtype: str, **sources: Obj) -> Obj:
    return {"type": mtype, **sources}


M0 = "spec.metrics[0]"
HPAS: list[tuple[str, Obj, str]] = [
    # kube: ValidateHorizontalPodAutoscaler — 0 needs the alpha HPAScaleToZero; validateMetrics
    ("zero", hpa(minReplicas=0),
     "[spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.metrics: "
     "Forbidden: must specify at least one Object or External metric to support scaling to "
     "zero replicas]"),
    # kube: validateHorizontalPodAutoscalerSpec
    ("max", hpa(maxReplicas=0, minReplicas=2),
     "[spec.maxReplicas: Invalid value: 0: must be greater than 0, spec.maxReplicas: Invalid "
     "value: 0: must be greater than or equal to `minReplicas`]"),
    ("max-below-min", hpa(minReplicas=3, maxReplicas=2),
     "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"),
    # kube: ValidateCrossVersionObjectReference
    ("target", hpa(scaleTargetRef={"kind": "Deployment", "name": "a/b"}),
     "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'"),
    ("no-target", hpa(scaleTargetRef={}),
     "[spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value]"),
    # kube: validateMetricSpec (an unknown type is reported twice: the message says it once)
    ("type", hpa(metrics=[metric("Memory")]),
     f'{M0}.type: Unsupported value: "Memory": supported values: "ContainerResource", '
     '"External", "Object", "Pods", "Resource"'),
    ("no-source", hpa(metrics=[metric("Resource")]),
     f"{M0}.resource: Required value: must populate information for the given metric source"),
    ("two-sources", hpa(metrics=[metric("Resource", resource=CPU_SOURCE, pods={
        "metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}})]),
     f"{M0}.pods: Forbidden: {SOURCE_ONLY}"),
    # kube: validateMetricTarget
    ("target-type", hpa(metrics=[metric("Resource", resource={"name": "cpu", "target": {
        "type": "Percent", "averageUtilization": 0}})]),
     f'[{M0}.resource.target.type: Invalid value: "Percent": must be either Utilization, '
     f"Value, or AverageValue, {M0}.resource.target.averageUtilization: Invalid value: 0: "
     "must be greater than 0]"),
    # ... kube 1.33 prints the dereferenced Quantity with %#v (String has a pointer receiver):
    # ParseQuantity keeps the text only when it is canonical
    ("average-value", hpa(metrics=[metric("Resource", resource={"name": "memory", "target": {
        "type": "AverageValue", "averageValue": "-1000"}})]),
     f"{M0}.resource.target.averageValue: Invalid value: resource.Quantity{{i:resource."
     "int64Amount{value:-1000, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, "
     's:"", Format:"DecimalSI"}: must be positive'),
    ("value", hpa(metrics=[metric("Object", object={
        "describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps"},
        "target": {"type": "Value", "value": "-500m"}})]),
     f"{M0}.object.target.value: Invalid value: resource.Quantity{{i:resource.int64Amount{{"
     "value:-500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"-500m\", "
     'Format:"DecimalSI"}: must be positive'),
    # kube: validateResourceSource
    ("both-targets", hpa(metrics=[metric("Resource", resource={"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50, "averageValue": "1"}})]),
     f"{M0}.resource.target.averageValue: Forbidden: may not set both a target raw value and "
     "a target utilization"),
    ("no-target-value", hpa(metrics=[metric("Resource", resource={
        "name": "", "target": {"type": "Utilization"}})]),
     f"[{M0}.resource.name: Required value: must specify a resource name, "
     f"{M0}.resource.target.averageUtilization: Required value: must set either a target raw "
     "value or a target utilization]"),
    # kube: validatePodsSource / validateExternalSource / validateObjectSource
    ("pods", hpa(metrics=[metric("Pods", pods={"metric": {"name": "qps"},
                                               "target": {"type": "Value", "value": "5"}})]),
     f"{M0}.pods.target.averageValue: Required value: must specify a positive target "
     "averageValue"),
    ("external", hpa(metrics=[metric("External", external={
        "metric": {"name": "queue"}, "target": {"type": "Value", "value": "5",
                                                "averageValue": "1"}})]),
     f"{M0}.external.target.value: Forbidden: may not set both a target value for metric and "
     "a per-pod target"),
    ("object", hpa(metrics=[metric("Object", object={"metric": {}, "target": {
        "type": "Value"}})]),
     f"[{M0}.object.describedObject.kind: Required value, {M0}.object.describedObject.name: "
     f"Required value, {M0}.object.metric.name: Required value: must specify a metric name, "
     f"{M0}.object.target.averageValue: Required value: must set either a target value or "
     "averageValue]"),
    ("container", hpa(metrics=[metric("ContainerResource", containerResource={
        "name": "gpu", "container": "App", "target": {"type": "Utilization",
                                                      "averageUtilization": 50}})]),
     f'[{M0}.containerResource.name: Invalid value: "gpu": must be a standard resource for '
     f'containers, {M0}.containerResource.container: Invalid value: "App": a lowercase RFC '
     "1123 label must consist of lower case alphanumeric characters or '-', and must start "
     "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"),
    # kube: validateScalingRules / validateScalingPolicy
    ("behavior", hpa(behavior={"scaleDown": {
        "stabilizationWindowSeconds": 4000, "selectPolicy": "Avg",
        "policies": [{"type": "Seconds", "value": 0, "periodSeconds": 2000}]}}),
     "[spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 4000: must be less "
     "than or equal to 3600, spec.behavior.scaleDown.selectPolicy: Unsupported value: \"Avg\": "
     'supported values: "Disabled", "Max", "Min", spec.behavior.scaleDown.policies[0].type: '
     'Unsupported value: "Seconds": supported values: "Percent", "Pods", '
     "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero, "
     "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 2000: must be less "
     "than or equal to 1800]"),
    ("no-policies", hpa(behavior={"scaleUp": {"policies": []}}),
     "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"),
]


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in HPAS],
                         ids=[c[0] for c in HPAS])
def test_hpas_refused_as_kube_refuses(manifest: Obj, message: str) -> None:
    err = Kit().refused("horizontalpodautoscalers", manifest)
    assert invalid_message(err) == 'HorizontalPodAutoscaler.autoscaling "h" is invalid: ' + \
        message


def test_hpa_unknown_type_has_both_causes() -> None:
    err = Kit().refused("horizontalpodautoscalers", hpa(metrics=[metric("Memory")]))
    assert [c["field"] for c in err.causes] == [f"{M0}.type", f"{M0}.type"]


def test_hpa_defaults_as_a_133_server_fills_them() -> None:
    kit = Kit()
    memory = {"type": "Resource", "resource": {"name": "memory", "target": {
        "type": "AverageValue", "averageValue": "500Mi"}}}
    made = kit.create("horizontalpodautoscalers", hpa(
        metrics=[CPU, memory], behavior={"scaleDown": {
            "stabilizationWindowSeconds": 300,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
            "tolerance": "0.05"}}))
    spec = made["spec"]
    assert spec["minReplicas"] == 1  # kube: SetDefaults_HorizontalPodAutoscaler
    assert spec["metrics"] == [CPU, memory]
    # kube: SetDefaults_HorizontalPodAutoscalerBehavior (GenerateHPAScale{Up,Down}Rules);
    # the strategy drops the alpha tolerance
    assert spec["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                      "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
    assert made["status"] == {"currentMetrics": None, "desiredReplicas": 0}
    bare = kit.create("horizontalpodautoscalers", {**hpa(), "metadata": {"name": "bare"}})
    assert bare["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert "behavior" not in bare["spec"]


def test_hpa_that_had_zero_replicas_may_keep_them() -> None:
    kit = Kit()
    made = kit.create("horizontalpodautoscalers", hpa(minReplicas=1))
    stored = kit.store.raw_get(("autoscaling", "horizontalpodautoscalers"), "default", "h")
    assert stored is not None
    stored["spec"]["minReplicas"] = 0  # as if stored while HPAScaleToZero was on
    queue = metric("External", external={"metric": {"name": "queue"},
                                         "target": {"type": "Value", "value": "30"}})
    # kube: ValidateHorizontalPodAutoscalerUpdate — the lower bound is 0 for such an HPA
    body = {**made, "spec": {**made["spec"], "minReplicas": 0, "metrics": [queue]}}
    assert kit.update("horizontalpodautoscalers", body)["spec"]["minReplicas"] == 0


def pdb(name: str = "p", **spec: Any) -> Obj:
    return {"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": "web"}}, **spec}}


PERCENT = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. "
           "'1%',  or '93%', regex used for validation is '[0-9]+%')")
PDBS: list[tuple[str, Obj, str]] = [
    # kube: ValidatePodDisruptionBudgetSpec — the spec printed with %#v (pointer addresses are
    # the process's own; a fixed one stands in)
    ("both", pdb(minAvailable=1, maxUnavailable=1),
     "spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)"
     "(0xc000010000), Selector:(*v1.LabelSelector)(0xc000010000), MaxUnavailable:"
     "(*intstr.IntOrString)(0xc000010000), UnhealthyPodEvictionPolicy:"
     "(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot "
     "be both set"),
    # kube: ValidatePositiveIntOrPercent / IsNotMoreThan100Percent (kube 1.33 prints the
    # IntOrString struct with %#v: its String has a pointer receiver)
    ("percent", pdb(minAvailable="110%"),
     'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"110%"}: '
     "must not be greater than 100%"),
    ("not-percent", pdb(maxUnavailable="half"),
     'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: '
     f"{PERCENT}"),
    ("negative", pdb(minAvailable=-1),
     "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    # kube: ValidateLabelSelector
    ("selector", pdb(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
     "spec.selector.matchExpressions[0].values: Required value: must be specified when "
     "`operator` is 'In' or 'NotIn'"),
    # kube: supportedUnhealthyPodEvictionPolicies
    ("eviction", pdb(maxUnavailable=1, unhealthyPodEvictionPolicy="Never"),
     'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: '
     '"AlwaysAllow", "IfHealthyBudget"'),
]


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in PDBS],
                         ids=[c[0] for c in PDBS])
def test_pdbs_refused_as_kube_refuses(manifest: Obj, message: str) -> None:
    err = Kit().refused("poddisruptionbudgets", manifest)
    assert invalid_message(err) == 'PodDisruptionBudget.policy "p" is invalid: ' + message


def test_pdb_names_are_path_segments_and_status_starts_at_zero() -> None:
    kit = Kit()
    made = kit.create("poddisruptionbudgets", pdb("Web_PDB", minAvailable="50%",
                                                  unhealthyPodEvictionPolicy="AlwaysAllow"))
    assert made["spec"]["minAvailable"] == "50%"
    assert made["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0,
                              "desiredHealthy": 0, "expectedPods": 0}
    assert made["metadata"]["generation"] == 1
    # kube: the generic store's ValidatePathSegmentName is the only name check a PDB gets
    err = kit.refused("poddisruptionbudgets", pdb("a%b", minAvailable=1))
    assert invalid_message(err) == (
        "PodDisruptionBudget.policy \"a%b\" is invalid: metadata.name: Invalid value: \"a%b\": "
        "may not contain '%'")
