"""Services as a 1.33 kube-apiserver defaults, allocates and validates them.

Table-driven: each refused manifest with kube's exact 422 message and the kube function that
produces it; then the objects a 1.33 server returns for each type, what an update keeps and
drops, the server with the allocator switched off, and the wire (HTTP) for a few cases.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from tests.apiserver import httpkit
from tests.apiserver.builtinkit import Kit, Obj, invalid_message

http = httpkit.http

RANGE = ("provided port is not in the valid range. The range of valid ports is 30000-32767")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
             "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
             "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LB_ONLY = "may only be used when `type` is 'LoadBalancer'"
HTTP = [{"name": "http", "port": 80}]


def svc(name: str = "s", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": "web"}, **spec}}


REFUSED: list[tuple[str, Obj, str]] = [
    # kube: ValidateService — ports are required unless headless or ExternalName
    ("no-ports", svc(), "spec.ports: Required value"),
    # kube: validateServicePort + IsValidPortNum; SetDefaults_Service copied port to targetPort
    ("port-range", svc(ports=[{"port": 70000}]),
     "[spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, "
     "spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]"),
    # kube: validateServicePort — names are required when there is more than one port
    ("unnamed", svc(ports=[{"port": 80}, {"port": 443}]),
     "[spec.ports[0].name: Required value, spec.ports[1].name: Required value]"),
    # kube: validateServicePort — names are unique
    ("dup-name", svc(ports=[{"name": "a", "port": 80}, {"name": "a", "port": 81}]),
     'spec.ports[1].name: Duplicate value: "a"'),
    # kube: validateServicePort + ValidateDNS1123Label
    ("bad-name", svc(ports=[{"name": "Http", "port": 80}]),
     f'spec.ports[0].name: Invalid value: "Http": {LABEL_MSG}'),
    # kube: validateServicePort — supportedPortProtocols
    ("protocol", svc(ports=[{"port": 80, "protocol": "HTTP"}]),
     'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", '
     '"UDP"'),
    # kube: ValidateService — duplicate (protocol, port) pairs, the key printed with %#v
    ("dup-port", svc(ports=[{"name": "a", "port": 80}, {"name": "b", "port": 80}]),
     'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", '
     'AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, '
     'StrVal:""}, NodePort:0}'),
    # kube: ValidatePortNumOrName + IsValidPortName (an IANA_SVC_NAME)
    ("target-name", svc(ports=[{"port": 80, "targetPort": "http_port"}]),
     'spec.ports[0].targetPort: Invalid value: "http_port": must contain only alpha-numeric '
     "characters (a-z, 0-9), and hyphens (-)"),
    ("target-long", svc(ports=[{"port": 80, "targetPort": "abcdefghijklmnopq"}]),
     'spec.ports[0].targetPort: Invalid value: "abcdefghijklmnopq": must be no more than 15 '
     "characters"),
    # kube: validateServicePort + ValidateQualifiedName
    ("app-protocol", svc(ports=[{"port": 80, "appProtocol": "h 2"}]),
     f'spec.ports[0].appProtocol: Invalid value: "h 2": {QNAME_MSG}'),
    # kube: ValidateService + ValidateLabels on the selector
    ("selector", svc(ports=HTTP, selector={"app": "a b"}),
     'spec.selector: Invalid value: "a b": a valid label must be an empty string or consist of '
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    # kube: ValidateServiceClusterIPsRelatedFields + IsValidIP, run by initIPFamilyFields
    ("cluster-ip", svc(ports=HTTP, clusterIP="10.96.0.300"),
     'spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, '
     "(e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("cluster-ips-mismatch", svc(ports=HTTP, clusterIP="10.96.0.10", clusterIPs=["10.96.0.11"]),
     'spec.clusterIPs: Invalid value: []string{"10.96.0.11"}: first value must match '
     "`clusterIP`"),
    # kube: ipallocator Allocate, reported by allocIPs (alloc.go)
    ("cluster-ip-range", svc(ports=HTTP, clusterIP="10.200.0.1"),
     'spec.clusterIPs: Invalid value: []string{"10.200.0.1"}: failed to allocate IP '
     "10.200.0.1: the provided IP (10.200.0.1) is not in the valid range. The range of valid "
     "IPs is 10.96.0.0/12"),
    # kube: initIPFamilyFields on a single-stack cluster
    ("ipv6", svc(ports=HTTP, ipFamilies=["IPv6"]),
     'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster'),
    ("dual-stack", svc(ports=HTTP, ipFamilyPolicy="RequireDualStack"),
     'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured '
     "for dual-stack services"),
    ("policy", svc(ports=HTTP, ipFamilyPolicy="DualStack"),
     'spec.ipFamilyPolicy: Unsupported value: "DualStack": supported values: '
     '"PreferDualStack", "RequireDualStack", "SingleStack"'),
    # kube: ValidateService — headless is not allowed for NodePort/LoadBalancer
    ("headless-nodeport", svc(type="NodePort", ports=HTTP, clusterIP="None"),
     "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort "
     "services"),
    # kube: portallocator Allocate, reported by initNodePorts (alloc.go)
    ("node-port-range", svc(type="NodePort", ports=[{"port": 80, "nodePort": 80}]),
     f"spec.ports[0].nodePort: Invalid value: 80: {RANGE}"),
    # kube: ValidateService — nodePort is forbidden for ClusterIP services
    ("node-port-cluster-ip", svc(ports=[{"port": 80, "nodePort": 30080}]),
     "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"),
    # kube: ValidateService — supportedServiceType
    ("type", svc(type="Foo", ports=HTTP),
     'spec.type: Unsupported value: "Foo": supported values: "ClusterIP", "ExternalName", '
     '"LoadBalancer", "NodePort"'),
    # kube: ValidateService — externalName required, a DNS subdomain (a trailing dot allowed)
    ("external-name-missing", svc(type="ExternalName"), "spec.externalName: Required value"),
    ("external-name", svc(type="ExternalName", externalName="Db.Example."),
     f'spec.externalName: Invalid value: "Db.Example": {SUBDOMAIN_MSG}'),
    # kube: ValidateService — ExternalName services carry no clusterIPs (normalizeClusterIPs
    # copied clusterIP into clusterIPs first)
    ("external-name-ip", svc(type="ExternalName", externalName="db.example.com",
                             clusterIP="10.96.0.10"),
     "spec.clusterIPs: Forbidden: may not be set for ExternalName services"),
    # kube: ValidateService — supportedSessionAffinityType
    ("affinity", svc(ports=HTTP, sessionAffinity="Sticky"),
     'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", '
     '"None"'),
    # kube: validateClientIPAffinityConfig + validateAffinityTimeout
    ("affinity-timeout", svc(ports=HTTP, sessionAffinity="ClientIP",
                             sessionAffinityConfig={"clientIP": {"timeoutSeconds": 0}}),
     "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater "
     "than 0 and less than 86400"),
    # kube: validateServiceExternalTrafficPolicy
    ("etp-cluster-ip", svc(ports=HTTP, externalTrafficPolicy="Local"),
     'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for '
     "externally-accessible services"),
    ("etp-value", svc(type="NodePort", ports=HTTP, externalTrafficPolicy="Global"),
     'spec.externalTrafficPolicy: Unsupported value: "Global": supported values: "Cluster", '
     '"Local"'),
    ("health-port", svc(ports=HTTP, healthCheckNodePort=30001),
     "spec.healthCheckNodePort: Invalid value: 30001: may only be set when `type` is "
     "'LoadBalancer' and `externalTrafficPolicy` is 'Local'"),
    # kube: validateServiceInternalTrafficFieldsValue
    ("itp", svc(ports=HTTP, internalTrafficPolicy="Node"),
     'spec.internalTrafficPolicy: Unsupported value: "Node": supported values: "Cluster", '
     '"Local"'),
    # kube: ValidateService — loadBalancerSourceRanges (kube's path is capitalised)
    ("source-ranges", svc(ports=HTTP, loadBalancerSourceRanges=["10.0.0.0/33"]),
     f"[spec.LoadBalancerSourceRanges: Forbidden: {LB_ONLY}, "
     'spec.LoadBalancerSourceRanges[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR '
     "value, (e.g. 10.9.8.0/24 or 2001:db8::/64)]"),
    ("allocate-lb-ports", svc(type="NodePort", ports=HTTP, allocateLoadBalancerNodePorts=False),
     f"spec.allocateLoadBalancerNodePorts: Forbidden: {LB_ONLY}"),
    # kube: validateLoadBalancerClassField
    ("lb-class", svc(ports=HTTP, loadBalancerClass="example.com/lb"),
     f"spec.loadBalancerClass: Forbidden: {LB_ONLY}"),
    # kube: ValidateService + ValidateNonSpecialIP on externalIPs
    ("external-ip", svc(ports=HTTP, externalIPs=["127.0.0.1"]),
     'spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range '
     "(127.0.0.0/8, ::1/128)"),
    # kube: validateServiceTrafficDistribution (PreferSameZone needs an alpha gate in 1.33)
    ("traffic-distribution", svc(ports=HTTP, trafficDistribution="PreferSameZone"),
     'spec.trafficDistribution: Unsupported value: "PreferSameZone": supported values: '
     '"PreferClose"'),
]


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in REFUSED],
                         ids=[c[0] for c in REFUSED])
def test_refused_as_kube_refuses(manifest: Obj, message: str) -> None:
    err = Kit().refused("services", manifest)
    assert invalid_message(err) == 'Service "s" is invalid: ' + message


def test_service_names_are_dns1035_labels() -> None:
    # kube: ValidateServiceName = NameIsDNS1035Label
    err = Kit().refused("services", svc("1web", ports=HTTP))
    assert invalid_message(err) == (
        'Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label '
        "must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def test_each_type_as_a_133_server_returns_it() -> None:
    kit = Kit()
    cluster_ip = kit.create("services", svc("web", ports=HTTP))
    ip = cluster_ip["spec"]["clusterIP"]
    assert ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.0.0/12")
    assert cluster_ip["spec"] == {
        "selector": {"app": "web"}, "ports": [
            {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}],
        "type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
        "clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack"}
    assert cluster_ip["status"] == {"loadBalancer": {}}
    node_port = kit.create("services", svc("np", type="NodePort", ports=HTTP))["spec"]
    assert node_port["externalTrafficPolicy"] == "Cluster"
    assert 30000 <= node_port["ports"][0]["nodePort"] <= 32767
    lb = kit.create("services", svc("lb", type="LoadBalancer", ports=HTTP,
                                    externalTrafficPolicy="Local"))["spec"]
    assert lb["allocateLoadBalancerNodePorts"] is True
    assert 30000 <= lb["healthCheckNodePort"] <= 32767
    assert lb["healthCheckNodePort"] != lb["ports"][0]["nodePort"]
    no_node_ports = kit.create("services", svc("lb2", type="LoadBalancer", ports=HTTP,
                                               allocateLoadBalancerNodePorts=False))["spec"]
    assert "nodePort" not in no_node_ports["ports"][0]
    external = kit.create("services", {"metadata": {"name": "ext"}, "spec": {
        "type": "ExternalName", "externalName": "db.example.com."}})
    assert external["spec"] == {"type": "ExternalName", "externalName": "db.example.com.",
                                "sessionAffinity": "None"}
    headless = kit.create("services", svc("hl", clusterIP="None", ports=HTTP))["spec"]
    assert (headless["clusterIPs"], headless["ipFamilies"], headless["ipFamilyPolicy"]) == (
        ["None"], ["IPv4"], "SingleStack")
    # kube: initIPFamilyFields — headless and selectorless defaults to both families
    bare = kit.create("services", {"metadata": {"name": "bare"},
                                   "spec": {"clusterIP": "None"}})["spec"]
    assert (bare["ipFamilyPolicy"], bare["ipFamilies"]) == ("RequireDualStack",
                                                            ["IPv4", "IPv6"])
    sticky = kit.create("services", svc("sticky", ports=HTTP, sessionAffinity="ClientIP"))
    assert sticky["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    # ports sharing a number share a nodePort (initNodePorts)
    dns = kit.create("services", svc("dns", type="NodePort", ports=[
        {"name": "tcp", "port": 53}, {"name": "udp", "port": 53, "protocol": "UDP"}]))
    assert len({p["nodePort"] for p in dns["spec"]["ports"]}) == 1


def test_updates_keep_allocations_and_drop_what_a_type_change_voids() -> None:
    kit = Kit()
    made = kit.create("services", svc("web", type="NodePort", ports=HTTP))
    ip, port = made["spec"]["clusterIP"], made["spec"]["ports"][0]["nodePort"]
    # kube: patchAllocatedValues — a PUT rebuilt from a template keeps the allocated values
    after = kit.update("services", svc("web", type="NodePort", ports=HTTP))
    assert (after["spec"]["clusterIP"], after["spec"]["clusterIPs"]) == (ip, [ip])
    assert after["spec"]["ports"][0]["nodePort"] == port
    # kube: validateUpgradeDowngradeClusterIPs — a set clusterIP never changes
    changed = {**after, "spec": {**after["spec"], "clusterIP": "10.96.0.99",
                                 "clusterIPs": ["10.96.0.99"]}}
    err = kit.refused("services", changed, old=after)
    assert invalid_message(err) == (
        'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: '
        "may not change once set")
    # kube: dropTypeDependentFields — NodePort to ClusterIP drops the untouched nodePorts and
    # externalTrafficPolicy, and keeps the clusterIP
    to_cluster_ip = {**after, "spec": {**after["spec"], "type": "ClusterIP"}}
    now = kit.update("services", to_cluster_ip)["spec"]
    assert "nodePort" not in now["ports"][0] and "externalTrafficPolicy" not in now
    assert now["clusterIP"] == ip
    # kube: dropTypeDependentFields — to ExternalName drops the clusterIPs and families
    ext = {**now, "type": "ExternalName", "externalName": "db.example.com"}
    ext_spec = kit.update("services", {"metadata": {"name": "web"}, "spec": ext})["spec"]
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} & set(ext_spec)
    assert ext_spec["internalTrafficPolicy"] == "Cluster"  # kube keeps it, for history's sake
    # and back: a new address is allocated (updateClusterIPs, case A)
    back = kit.update("services", svc("web", ports=HTTP))["spec"]
    assert back["clusterIP"] not in ("", None, "None")


def test_load_balancer_class_and_health_check_port_are_immutable() -> None:
    kit = Kit()
    lb = kit.create("services", svc("lb", type="LoadBalancer", ports=HTTP,
                                    loadBalancerClass="example.com/a",
                                    externalTrafficPolicy="Local"))
    # kube: validateLoadBalancerClassField
    moved = {**lb, "spec": {**lb["spec"], "loadBalancerClass": "example.com/b"}}
    assert invalid_message(kit.refused("services", moved, old=lb)) == (
        'Service "lb" is invalid: spec.loadBalancerClass: Invalid value: "example.com/b": '
        "may not change once set")
    # kube: validateServiceExternalTrafficFieldsUpdate
    hc = lb["spec"]["healthCheckNodePort"]
    moved = {**lb, "spec": {**lb["spec"], "healthCheckNodePort": hc + 1}}
    assert invalid_message(kit.refused("services", moved, old=lb)) == (
        'Service "lb" is invalid: spec.healthCheckNodePort: Forbidden: field is immutable')


def test_without_the_allocator_nothing_is_allocated_nor_required() -> None:
    kit = Kit(allocator=False)
    spec = kit.create("services", svc("web", type="LoadBalancer", ports=HTTP,
                                      externalTrafficPolicy="Local"))["spec"]
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "healthCheckNodePort"} & set(spec)
    assert "nodePort" not in spec["ports"][0]
    # still a kube rule: a given clusterIP must be an address (ValidateService)
    err = kit.refused("services", svc("bad", ports=HTTP, clusterIP="nope"))
    assert invalid_message(err) == (
        'Service "bad" is invalid: spec.clusterIPs[0]: Invalid value: "nope": must be a valid '
        "IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")


async def test_over_http_a_422_carries_kube_causes(apiserver_no_sim: ApiServer,
                                                   http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + "/api/v1/namespaces/default/services"
    code, body = await httpkit.call(http, "POST", url, json=svc(
        ports=[{"port": 80}, {"port": 70000, "protocol": "HTTP"}]))
    assert code == 422 and body["reason"] == "Invalid"
    assert body["details"] == {"name": "s", "kind": "Service", "causes": [
        {"reason": "FieldValueRequired", "message": "Required value",
         "field": "spec.ports[0].name"},
        {"reason": "FieldValueRequired", "message": "Required value",
         "field": "spec.ports[1].name"},
        {"reason": "FieldValueInvalid",
         "message": "Invalid value: 70000: must be between 1 and 65535, inclusive",
         "field": "spec.ports[1].port"},
        {"reason": "FieldValueNotSupported",
         "message": 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
         "field": "spec.ports[1].protocol"},
        {"reason": "FieldValueInvalid",
         "message": "Invalid value: 70000: must be between 1 and 65535, inclusive",
         "field": "spec.ports[1].targetPort"}]}
    code, _ = await httpkit.call(http, "GET", url + "/s")
    assert code == 404
