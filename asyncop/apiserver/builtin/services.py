"""Services: kube's defaults, the registry's create/update steps, and ValidateService.

Defaults (SetDefaults_Service): type ClusterIP, sessionAffinity None (ClientIP gets a
10800 s timeout), ports TCP with targetPort = port, externalTrafficPolicy Cluster for
externally reachable services, internalTrafficPolicy Cluster (not for ExternalName),
allocateLoadBalancerNodePorts true for LoadBalancers. The registry then syncs clusterIPs
with clusterIP, resets status on create, and on update keeps allocated values the body
left out and drops the fields a type change made meaningless (dropTypeDependentFields).
Allocation itself (clusterIPs, ipFamilies, ipFamilyPolicy, nodePorts, healthCheckNodePort)
is the ServiceAllocator's (simulators/services.py): with it switched off those fields stay
as sent, so validation does not require them (kube's allocator always fills them).

Validation is kube's ValidateService / ValidateServiceUpdate in kube's order; the cluster
IP rules live in `serviceips`. Invariant: defaults fill only absent fields (plus the
registry's documented rewrites); validation is pure and never raises on a wrong shape.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin import serviceips
from asyncop.apiserver.builtin.checks import (
    IMMUTABLE_MSG,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_port_name,
    is_valid_port_num,
)
from asyncop.apiserver.builtin.containers import PROTOCOLS
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    duplicate,
    each,
    forbidden,
    invalid,
    labels,
    not_supported,
    required,
    spec_of,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_quote
from asyncop.apiserver.builtin.netutils import ip_errors
from asyncop.apiserver.builtin.serviceips import (
    is_headless,
    needs_cluster_ip,
    needs_health_check,
    needs_node_port,
)

SERVICES = ("", "services")
TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
TRAFFIC_POLICIES = ("Cluster", "Local")
AFFINITIES = ("ClientIP", "None")
MAX_AFFINITY_SECONDS = 86400
TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"
TOPOLOGY_HINTS = "service.kubernetes.io/topology-aware-hints"


def externally_accessible(spec: Obj) -> bool:
    """ExternallyAccessible: LoadBalancer, NodePort, or ClusterIP with externalIPs."""
    stype = spec.get("type")
    return stype in ("LoadBalancer", "NodePort") or (
        stype == "ClusterIP" and bool(as_list(spec.get("externalIPs"))))


def set_service_defaults(spec: Obj) -> None:
    """SetDefaults_Service (core/v1)."""
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client_ip = as_dict(as_dict(spec.get("sessionAffinityConfig")).get("clientIP"))
        if client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in as_list(spec.get("ports")):
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        number = port.get("port", 0)
        if port.get("targetPort") in (None, 0, "") and as_int(number) is not None:
            port["targetPort"] = number
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and \
            spec["type"] in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def _service_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    set_service_defaults(spec)
    if old is None:
        serviceips.normalize_cluster_ips(spec, None)
        obj["status"] = {"loadBalancer": {}}  # PrepareForCreate resets status
        return
    old_spec = as_dict(old.get("spec"))
    serviceips.patch_allocated(spec, old_spec)
    serviceips.normalize_cluster_ips(spec, old_spec)
    _drop_type_dependent(obj, spec, old_spec)


def _drop_type_dependent(obj: Obj, spec: Obj, old_spec: Obj) -> None:
    """dropTypeDependentFields: a type change wipes the values it made meaningless, when
    the update left them as they were (changed ones stay, for validation to refuse)."""
    if needs_cluster_ip(old_spec) and not needs_cluster_ip(spec):
        if serviceips.same_cluster_ips(old_spec, spec):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if serviceips.ip_families(old_spec) == serviceips.ip_families(spec):
            spec.pop("ipFamilies", None)
        if old_spec.get("ipFamilyPolicy") == spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    if needs_node_port(old_spec) and not needs_node_port(spec) and \
            serviceips.node_ports(spec) <= serviceips.node_ports(old_spec):
        for port in as_list(spec.get("ports")):
            if isinstance(port, dict):
                port.pop("nodePort", None)
    if needs_health_check(old_spec) and not needs_health_check(spec) and \
            old_spec.get("healthCheckNodePort") == spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        for key in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if key in spec and spec.get(key) == old_spec.get(key):
                spec.pop(key)
    if externally_accessible(old_spec) and not externally_accessible(spec) and \
            spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != "LoadBalancer" and isinstance(obj.get("status"), dict):
        obj["status"] = {**obj["status"], "loadBalancer": {}}


def _service(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateServiceCreate, or ValidateServiceUpdate when `old` is given."""
    spec = as_dict(obj.get("spec"))
    out: list[StatusCause] = []
    if old is not None:
        old_spec = as_dict(old.get("spec"))
        out += serviceips.validate_ip_update(spec, old_spec)
        out += _load_balancer_class(spec, old_spec)
        if needs_health_check(old_spec) and needs_health_check(spec) and \
                spec.get("healthCheckNodePort") != old_spec.get("healthCheckNodePort"):
            out.append(forbidden("spec.healthCheckNodePort", IMMUTABLE_MSG))
    return out + validate_service(obj)


def validate_service(obj: Obj) -> list[StatusCause]:
    """ValidateService, after ValidateObjectMeta (the Writer's name and metadata checks)."""
    spec = as_dict(obj.get("spec"))
    annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
    out: list[StatusCause] = []
    mode, hints = annotations.get(TOPOLOGY_MODE), annotations.get(TOPOLOGY_HINTS)
    if mode is not None and hints is not None and mode != hints:
        out.append(invalid(f"metadata.annotations[{TOPOLOGY_MODE}]", mode,
                           f"must match annotations[{TOPOLOGY_HINTS}] when both are "
                           "specified"))
    ports = [as_dict(p) for p in as_list(spec.get("ports"))]
    stype = spec.get("type")
    if not ports and not is_headless(spec) and stype != "ExternalName":
        out.append(required("spec.ports"))
    out += _type_specific(spec)
    names: set[str] = set()
    for i, port in enumerate(ports):
        out += _port(port, f"spec.ports[{i}]", require_name=len(ports) > 1, names=names)
    if spec.get("selector") is not None:
        out += labels(spec.get("selector"), "spec.selector")
    out += _session_affinity(spec)
    out += serviceips.validate_cluster_ips(spec)
    for i, ip in enumerate(as_list(spec.get("externalIPs"))):
        problems = ip_errors(f"spec.externalIPs[{i}]", as_str(ip))
        out += problems or serviceips.non_special_ip_errors(f"spec.externalIPs[{i}]", as_str(ip))
    if not stype:
        out.append(required("spec.type"))
    elif stype not in TYPES:
        out.append(not_supported("spec.type", stype, TYPES))
    if stype == "ClusterIP":
        out += [forbidden(f"spec.ports[{i}].nodePort",
                          "may not be used when `type` is 'ClusterIP'")
                for i, port in enumerate(ports) if port.get("nodePort")]
    out += _duplicates(ports)
    out += serviceips.source_range_errors(spec, annotations)
    if spec.get("allocateLoadBalancerNodePorts") is not None and stype != "LoadBalancer":
        out.append(forbidden("spec.allocateLoadBalancerNodePorts",
                             "may only be used when `type` is 'LoadBalancer'"))
    if stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        out.append(required("allocateLoadBalancerNodePorts"))  # sic: kube's path
    out += _load_balancer_class(spec, None)
    out += _external_traffic(spec)
    out += _internal_traffic(spec)
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution != "PreferClose":
        out.append(not_supported("spec.trafficDistribution", distribution,
                                 ["PreferClose"]))
    return out


def _type_specific(spec: Obj) -> list[StatusCause]:
    stype = spec.get("type")
    if stype in ("LoadBalancer", "NodePort") and is_headless(spec):
        return [invalid("spec.clusterIPs[0]", "None",
                        f"may not be set to 'None' for {stype} services")]
    if stype != "ExternalName":
        return []
    out: list[StatusCause] = []
    for key in ("clusterIPs", "ipFamilies"):
        if as_list(spec.get(key)):
            out.append(forbidden(f"spec.{key}", "may not be set for ExternalName services"))
    if spec.get("ipFamilyPolicy") is not None:
        out.append(forbidden("spec.ipFamilyPolicy",
                             "may not be set for ExternalName services"))
    cname = as_str(spec.get("externalName")).removesuffix(".")
    if cname:
        out += each("spec.externalName", cname, is_dns1123_subdomain(cname))
    else:
        out.append(required("spec.externalName"))
    return out


def _port(port: Obj, path: str, *, require_name: bool, names: set[str]) -> list[StatusCause]:
    """validateServicePort."""
    out: list[StatusCause] = []
    name = as_str(port.get("name"))
    if require_name and not name:
        out.append(required(f"{path}.name"))
    elif name:
        out += each(f"{path}.name", name, is_dns1123_label(name))
        if name in names:
            out.append(duplicate(f"{path}.name", name))
        names.add(name)
    out += port_number_errors(f"{path}.port", port.get("port", 0))
    protocol = port.get("protocol")
    if not protocol:
        out.append(required(f"{path}.protocol"))
    elif protocol not in PROTOCOLS:
        out.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    out += port_num_or_name_errors(f"{path}.targetPort", port.get("targetPort"))
    app_protocol = port.get("appProtocol")
    if app_protocol is not None:
        text = as_str(app_protocol)
        out += each(f"{path}.appProtocol", text, is_qualified_name(text))
    return out


def port_number_errors(path: str, value: Any) -> list[StatusCause]:
    """IsValidPortNum reported with field.Invalid (a wrong shape reads as invalid)."""
    number = as_int(value)
    if number is not None and not is_valid_port_num(number):
        return []
    return [invalid(path, value, "must be between 1 and 65535, inclusive")]


def port_num_or_name_errors(path: str, value: Any) -> list[StatusCause]:
    """ValidatePortNumOrName (an unset IntOrString is the integer 0)."""
    if isinstance(value, str):
        return each(path, value, is_valid_port_name(value))
    return port_number_errors(path, 0 if value is None else value)


def _session_affinity(spec: Obj) -> list[StatusCause]:
    affinity = spec.get("sessionAffinity")
    if not affinity:
        return [required("spec.sessionAffinity")]
    if affinity not in AFFINITIES:
        return [not_supported("spec.sessionAffinity", affinity, AFFINITIES)]
    path = "spec.sessionAffinityConfig"
    config = spec.get("sessionAffinityConfig")
    if affinity == "None":
        return [] if config is None else [forbidden(
            path, "must not be set when session affinity is None")]
    when = "when session affinity type is ClientIP"
    if not isinstance(config, dict):
        return [required(path, when)]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, dict):
        return [required(f"{path}.clientIP", when)]
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [required(f"{path}.clientIP.timeoutSeconds", when)]
    seconds = as_int(timeout)
    if seconds is None or not 0 < seconds <= MAX_AFFINITY_SECONDS:
        return [invalid(f"{path}.clientIP.timeoutSeconds", timeout,
                        f"must be greater than 0 and less than {MAX_AFFINITY_SECONDS}")]
    return []


def _duplicates(ports: list[Obj]) -> list[StatusCause]:
    """Duplicate (protocol, nodePort) and (protocol, port) pairs."""
    out: list[StatusCause] = []
    seen_node: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        node_port = as_int(port.get("nodePort"))
        if node_port:
            node_key = (as_str(port.get("protocol")), node_port)
            if node_key in seen_node:
                out.append(duplicate(f"spec.ports[{i}].nodePort", node_port))
            seen_node.add(node_key)
    seen: set[tuple[str, Any]] = set()
    for i, port in enumerate(ports):
        protocol, number = as_str(port.get("protocol")), port.get("port", 0)
        key = (protocol, number if isinstance(number, int) else repr(number))
        if key in seen:
            out.append(duplicate(f"spec.ports[{i}]", Raw(
                f'core.ServicePort{{Name:"", Protocol:{go_quote(protocol)}, '
                f"AppProtocol:(*string)(nil), Port:{as_int(number) or 0}, "
                'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}')))
        seen.add(key)
    return out


def _load_balancer_class(spec: Obj, old_spec: Obj | None) -> list[StatusCause]:
    """validateLoadBalancerClassField (immutable while the service stays a LoadBalancer)."""
    value = spec.get("loadBalancerClass")
    path = "spec.loadBalancerClass"
    if old_spec is not None:
        if old_spec.get("type") == spec.get("type") == "LoadBalancer" and \
                old_spec.get("loadBalancerClass") != value:
            return [invalid(path, value, "may not change once set")]
        return []
    if value is None:
        return []
    if spec.get("type") != "LoadBalancer":
        return [forbidden(path, "may only be used when `type` is 'LoadBalancer'")]
    text = as_str(value)
    return each(path, text, is_qualified_name(text))


def _external_traffic(spec: Obj) -> list[StatusCause]:
    """validateServiceExternalTrafficPolicy; a missing healthCheckNodePort is the
    allocator's to fill, so only a set one is checked."""
    out: list[StatusCause] = []
    policy = spec.get("externalTrafficPolicy")
    if not externally_accessible(spec):
        if policy:
            out.append(invalid("spec.externalTrafficPolicy", policy,
                               "may only be set for externally-accessible services"))
    elif not policy:
        out.append(required("spec.externalTrafficPolicy"))
    elif policy not in TRAFFIC_POLICIES:
        out.append(not_supported("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES))
    port = spec.get("healthCheckNodePort")
    if not needs_health_check(spec):
        if port:
            out.append(invalid("spec.healthCheckNodePort", port,
                               "may only be set when `type` is 'LoadBalancer' and "
                               "`externalTrafficPolicy` is 'Local'"))
    elif port:
        out += port_number_errors("spec.healthCheckNodePort", port)
    return out


def _internal_traffic(spec: Obj) -> list[StatusCause]:
    policy = spec.get("internalTrafficPolicy")
    if policy is None:
        if spec.get("type") in ("NodePort", "LoadBalancer", "ClusterIP"):
            return [required("spec.internalTrafficPolicy")]
        return []
    if policy not in TRAFFIC_POLICIES:
        return [not_supported("spec.internalTrafficPolicy", policy, TRAFFIC_POLICIES)]
    return []


DEFAULTS: dict[tuple[str, str], Any] = {SERVICES: _service_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {SERVICES: _service}
