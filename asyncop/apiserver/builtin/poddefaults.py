"""kube's defaults for a pod spec and the objects inside it (pkg/apis/core/v1/defaults.go and
the `+default` markers of core/v1), shared by Pods and every pod template.

SetDefaults_PodSpec (restartPolicy, dnsPolicy, securityContext, grace period, scheduler),
SetDefaults_Container (imagePullPolicy from the tag, termination message path/policy),
ports' protocol, probes (SetDefaults_Probe, SetDefaults_HTTPGetAction), env fieldRef
apiVersion, volumes (a volume without a source is an emptyDir; secret/configMap/
downwardAPI/projected defaultMode 0644; hostPath type ""; token expiry 1h), resource lists
rounded up to milli precision (SetDefaults_ResourceList) and the v1 `serviceAccount`
alias of `serviceAccountName`. Pod-only defaults (requests from limits, service links,
host-network ports) are in `pod_defaults`. Invariant: defaults fill only absent fields
(and canonicalise quantities); they never raise on a value of the wrong shape.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin import quantity, specrecall
from asyncop.apiserver.builtin.fields import Obj, as_dict, as_list, values_of
from asyncop.apiserver.builtin.volumes import sources_of

_MODE_0644 = 420


def image_pull_policy(image: str) -> str:
    """Always for `:latest` or no tag (a digest alone counts as a tag), else IfNotPresent
    (kube parses the image reference with parsers.ParseImageName)."""
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return "IfNotPresent"
    tag = name.rpartition(":")[2] if ":" in name else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def resource_list(values: Any) -> None:
    """SetDefaults_ResourceList: every quantity rounded up to milli. A value already exact at
    milli is left as written, as kube leaves the parsed Quantity (validation prints its
    struct: `1.5` is int64Amount{15, -1}); a rounded one is written in canonical form (the
    whole object is canonicalised before the commit anyway, `builtin/canonical.py`)."""
    if not isinstance(values, dict):
        return
    for key, raw in values.items():  # (only existing keys are set: iterating is safe)
        if isinstance(raw, quantity.QUANTITY_JSON):
            rounded = quantity.milli_rounded(raw)
            if rounded is not None:
                values[key] = rounded


def _handler(handler: Any) -> None:
    if not isinstance(handler, dict):
        return
    http = handler.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")
    grpc = handler.get("grpc")
    if isinstance(grpc, dict):
        grpc.setdefault("service", "")


_PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                   ("failureThreshold", 3))


def _probe(probe: dict[str, Any]) -> None:
    for key, value in _PROBE_DEFAULTS:
        if not probe.get(key):
            probe[key] = value
    _handler(probe)


def container_defaults(ctr: Obj) -> None:
    if not ctr.get("imagePullPolicy"):
        image = ctr.get("image")
        ctr["imagePullPolicy"] = image_pull_policy(image if isinstance(image, str) else "")
    ctr.setdefault("terminationMessagePath", "/dev/termination-log")
    ctr.setdefault("terminationMessagePolicy", "File")
    resources = ctr.setdefault("resources", {})
    if isinstance(resources, dict):
        resource_list(resources.get("limits"))
        resource_list(resources.get("requests"))
    if "ports" in ctr:
        for port in as_list(ctr["ports"]):
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
    for source in filter(None, values_of(as_list(ctr.get("env")), "valueFrom")):  # (most vars
        if isinstance(source, dict):                                       # have none)
            field_ref = source.get("fieldRef")
            if isinstance(field_ref, dict) and field_ref:
                field_ref.setdefault("apiVersion", "v1")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = ctr.get(key)
        if isinstance(probe, dict):
            _probe(probe)
    lifecycle = ctr.get("lifecycle")
    if isinstance(lifecycle, dict):
        _handler(lifecycle.get("postStart"))
        _handler(lifecycle.get("preStop"))


def _downward_items(items: Any) -> None:
    for item in as_list(items):
        field_ref = as_dict(as_dict(item).get("fieldRef"))
        if field_ref:
            field_ref.setdefault("apiVersion", "v1")


_MODED_SOURCES = frozenset({"secret", "configMap", "downwardAPI", "projected"})


def volume_defaults(volume: Obj) -> None:
    """A volume's defaults, visiting only the sources it sets (`volumes.sources_of`: its
    object-valued source fields; what is not an object has no defaults)."""
    found = sources_of(volume)
    if not found:
        volume["emptyDir"] = {}
        return
    for key in found:
        source = volume[key]
        if key in _MODED_SOURCES:
            source.setdefault("defaultMode", _MODE_0644)
            if key == "downwardAPI":
                _downward_items(source.get("items"))
            elif key == "projected":
                for item in as_list(source.get("sources")):
                    item = as_dict(item)
                    token = item.get("serviceAccountToken")
                    if isinstance(token, dict):
                        token.setdefault("expirationSeconds", 3600)
                    _downward_items(as_dict(item.get("downwardAPI")).get("items"))
        elif key == "hostPath":
            source.setdefault("type", "")
        elif key == "ephemeral":
            claim_spec = as_dict(source.get("volumeClaimTemplate")).get("spec")
            if isinstance(claim_spec, dict):
                claim_spec.setdefault("volumeMode", "Filesystem")


def pod_spec_defaults(spec: Obj) -> None:
    """SetDefaults_PodSpec and everything nested (Pods and templates alike)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for ctr in as_list(spec.get(key)):
            if isinstance(ctr, dict):
                container_defaults(ctr)
    for volume in as_list(spec.get("volumes")):
        if isinstance(volume, dict):
            volume_defaults(volume)
    resource_list(spec.get("overhead"))
    service_account_alias(spec)


def service_account_alias(spec: Obj) -> None:
    """v1's deprecated `serviceAccount` mirrors `serviceAccountName` (kube's conversion
    reads it when the name is empty and always writes it back)."""
    name = spec.get("serviceAccountName")
    if not name and isinstance(spec.get("serviceAccount"), str) and spec["serviceAccount"]:
        spec["serviceAccountName"] = name = spec["serviceAccount"]
    if isinstance(name, str) and name:
        spec["serviceAccount"] = name


def template_defaults(spec: Obj) -> None:
    """Pod template defaults of a workload (its `spec.template.spec`, when present). A
    template spec like one defaulted and found valid before but for its plain env values
    is that one's, recalled (`specrecall`)."""
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        raw = template["spec"]
        known, key = specrecall.TEMPLATES.recall(raw)
        if known is not None:
            template["spec"] = known
            return
        pod_spec_defaults(raw)
        if key is not None:
            specrecall.TEMPLATES.defaulted(raw, key)


def pod_defaults(spec: Obj) -> None:
    """SetDefaults_Pod: requests default to limits, service links on, and with host
    networking every container port is a host port."""
    for key in ("containers", "initContainers"):
        for ctr in as_list(spec.get(key)):
            resources = as_dict(as_dict(ctr).get("resources"))
            limits = resources.get("limits")
            if isinstance(limits, dict) and limits:
                requests = resources.setdefault("requests", {})
                if isinstance(requests, dict):
                    for name, value in limits.items():
                        requests.setdefault(name, value)
    spec.setdefault("enableServiceLinks", True)
    if spec.get("hostNetwork") is True:
        for key in ("containers", "initContainers"):
            for ctr in as_list(spec.get(key)):
                for port in as_list(as_dict(ctr).get("ports")):
                    if isinstance(port, dict) and not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
