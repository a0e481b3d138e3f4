"""Ingresses and NetworkPolicies as a 1.33 kube-apiserver defaults and validates them.

Each refused manifest comes with kube's exact 422 message and the kube function wording it;
real-world manifests (an Ingress with TLS and several paths, a NetworkPolicy with ingress and
egress rules) are stored as given plus kube's defaults.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiserver.builtinkit import Kit, Obj, invalid_message

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
             "characters, '-' or '.', and must start and end with an alphanumeric character "
             "(e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
WILDCARD = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS "
            "subdomain, which must consist of lower case alphanumeric characters, '-' or '.' "
            "and end with an alphanumeric character (e.g. '*.example.com', regex used for "
            "validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
            "[a-z0-9])?)*')")
SVC = {"service": {"name": "web", "port": {"number": 80}}}


def ingress(rules: list[Obj] | None = None, **spec: Any) -> Obj:
    if rules is not None:
        spec["rules"] = rules
    return {"metadata": {"name": "i"}, "spec": spec}


def http_rule(*paths: Obj, host: str | None = None) -> Obj:
    rule: Obj = {"http": {"paths": list(paths)}}
    if host is not None:
        rule["host"] = host
    return rule


def path(value: str = "/", path_type: str | None = "Prefix", backend: Obj | None = None) -> Obj:
    out: Obj = {"path": value, "backend": SVC if backend is None else backend}
    if path_type is not None:
        out["pathType"] = path_type
    return out


P0 = "spec.rules[0].http.paths[0]"
INGRESSES: list[tuple[str, Obj, str]] = [
    # kube: ValidateIngressSpec — rules or a defaultBackend (the nil slice printed with %#v)
    ("empty", ingress(), "spec: Invalid value: []networking.IngressRule(nil): either "
                         "`defaultBackend` or `rules` must be specified"),
    # kube: validateIngressRules — a host is a DNS name, not an IP
    ("ip-host", ingress([http_rule(path(), host="10.0.0.1")]),
     'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address'),
    ("host", ingress([http_rule(path(), host="Web.example.com")]),
     f'spec.rules[0].host: Invalid value: "Web.example.com": {SUBDOMAIN}'),
    ("wildcard", ingress([http_rule(path(), host="*.*.example.com")]),
     f'spec.rules[0].host: Invalid value: "*.*.example.com": {WILDCARD}'),
    # kube: validateHTTPIngressRuleValue — paths required
    ("no-paths", ingress([{"host": "a.example.com", "http": {"paths": []}}]),
     "spec.rules[0].http.paths: Required value"),
    # kube: validateHTTPIngressPath
    ("path-type", ingress([http_rule(path(path_type=None))]),
     f"{P0}.pathType: Required value: pathType must be specified"),
    ("path-type-enum", ingress([http_rule(path(path_type="Regex"))]),
     f'{P0}.pathType: Unsupported value: "Regex": supported values: "Exact", '
     '"ImplementationSpecific", "Prefix"'),
    ("relative", ingress([http_rule(path("api"))]),
     f'{P0}.path: Invalid value: "api": must be an absolute path'),
    ("sequences", ingress([http_rule(path("/a/../b/.", "Exact"))]),
     f"[{P0}.path: Invalid value: \"/a/../b/.\": must not contain '/../', {P0}.path: Invalid "
     "value: \"/a/../b/.\": cannot end with '/.']"),
    ("impl-specific", ingress([http_rule(path("api", "ImplementationSpecific"))]),
     f'{P0}.path: Invalid value: "api": must be an absolute path'),
    # kube: validateIngressBackend
    ("both-backends", ingress([http_rule(path(backend={**SVC, "resource": {
        "kind": "Bucket", "name": "b"}}))]),
     f'{P0}.backend: Invalid value: "": cannot set both resource and service backends'),
    ("no-backend", ingress([http_rule(path(backend={}))]),
     f'{P0}.backend: Invalid value: "": resource or service backend is required'),
    ("port-both", ingress([http_rule(path(backend={"service": {
        "name": "web", "port": {"name": "http", "number": 80}}}))]),
     f'{P0}.backend: Invalid value: "": cannot set both port name & port number'),
    ("port-none", ingress([http_rule(path(backend={"service": {"name": "web"}}))]),
     f"{P0}.backend: Required value: port name or number is required"),
    ("port-number", ingress([http_rule(path(backend={"service": {
        "name": "web", "port": {"number": 70000}}}))]),
     f"{P0}.backend.service.port.number: Invalid value: 70000: must be between 1 and 65535, "
     "inclusive"),
    # ... the service name is a Service name (DNS-1035)
    ("service-name", ingress(defaultBackend={"service": {"name": "1web",
                                                         "port": {"number": 80}}}),
     'spec.defaultBackend.service.name: Invalid value: "1web": a DNS-1035 label must consist '
     "of lower case alphanumeric characters or '-', start with an alphabetic character, and "
     "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
     "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
    ("resource", ingress(defaultBackend={"resource": {"kind": "Bucket", "name": "a/b"}}),
     "spec.defaultBackend.resource.name: Invalid value: \"a/b\": may not contain '/'"),
    # kube: validateIngressTLS
    ("tls", ingress(defaultBackend=SVC, tls=[{"hosts": ["*.Example.com"],
                                              "secretName": "Tls"}]),
     f'[spec.tls[0].hosts[0]: Invalid value: "*.Example.com": {WILDCARD}, '
     f'spec.tls[0].secretName: Invalid value: "Tls": {SUBDOMAIN}]'),
    # kube: ValidateIngressCreate — the class annotation agrees with ingressClassName
    ("class", {"metadata": {"name": "i", "annotations": {"kubernetes.io/ingress.class": "a"}},
               "spec": {"ingressClassName": "b", "defaultBackend": SVC}},
     'annotations.kubernetes.io/ingress.class: Invalid value: "a": must match '
     "`ingressClassName` when both are specified"),
]


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in INGRESSES],
                         ids=[c[0] for c in INGRESSES])
def test_ingresses_refused_as_kube_refuses(manifest: Obj, message: str) -> None:
    err = Kit().refused("ingresses", manifest)
    assert invalid_message(err) == 'Ingress.networking.k8s.io "i" is invalid: ' + message


def test_real_world_ingress_is_stored_as_given() -> None:
    kit = Kit()
    manifest = {"metadata": {"name": "web", "annotations": {
        "nginx.ingress.kubernetes.io/rewrite-target": "/"}}, "spec": {
        "ingressClassName": "nginx",
        "tls": [{"hosts": ["shop.example.com", "*.api.example.com"], "secretName": "shop-tls"}],
        "rules": [
            http_rule(path("/", "Prefix"), path("/checkout", "Exact", {
                "service": {"name": "checkout", "port": {"name": "http"}}}),
                      host="shop.example.com"),
            http_rule(path("/v1", "ImplementationSpecific"), host="*.api.example.com")]}}
    made = kit.create("ingresses", manifest)
    assert made["spec"] == manifest["spec"]
    assert made["status"] == {"loadBalancer": {}}
    assert made["metadata"]["generation"] == 1


def test_an_update_keeps_the_invalid_secret_name_it_had() -> None:
    kit = Kit()
    made = kit.create("ingresses", ingress(defaultBackend=SVC, tls=[{"secretName": "ok"}]))
    # kube: allowInvalidSecretName — only an object that already had one may keep one
    stored = kit.store.raw_get(("networking.k8s.io", "ingresses"), "default", "i")
    assert stored is not None
    stored["spec"]["tls"][0]["secretName"] = "Legacy_Name"  # as if stored by an old server
    body = {**made, "spec": {**made["spec"], "tls": [{"secretName": "Legacy_Name"}],
                             "ingressClassName": "nginx"}}
    assert kit.update("ingresses", body)["spec"]["ingressClassName"] == "nginx"


def policy(**spec: Any) -> Obj:
    return {"metadata": {"name": "n"}, "spec": {"podSelector": {}, **spec}}


POLICIES: list[tuple[str, Obj, str]] = [
    # kube: ValidateNetworkPolicyPort
    ("protocol", policy(ingress=[{"ports": [{"protocol": "ICMP"}]}]),
     'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", '
     '"UDP", "SCTP"'),
    ("end-port", policy(egress=[{"ports": [{"port": 8080, "endPort": 80}]}]),
     "spec.egress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to "
     "`port`"),
    ("end-port-named", policy(ingress=[{"ports": [{"port": "http", "endPort": 90}]}]),
     "spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is "
     "non-numeric"),
    ("end-port-alone", policy(ingress=[{"ports": [{"endPort": 90}]}]),
     "spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is "
     "not specified"),
    # kube: ValidateNetworkPolicyPeer
    ("no-peer", policy(ingress=[{"from": [{}]}]),
     "spec.ingress[0].from[0]: Required value: must specify a peer"),
    ("two-peers", policy(egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"},
                                          "namespaceSelector": {}}]}]),
     "spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"),
    # kube: ValidateIPBlock
    ("cidr", policy(ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.0/40"}}]}]),
     'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/40": must be a valid '
     "CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
    ("except", policy(ingress=[{"from": [{"ipBlock": {
        "cidr": "10.0.0.0/16", "except": ["10.1.0.0/24", "10.0.0.0/16"]}}]}]),
     '[spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a '
     "strict subset of `cidr`, spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "
     '"10.0.0.0/16": must be a strict subset of `cidr`]'),
    # kube: ValidateLabelSelector (values checked on create)
    ("selector", policy(podSelector={"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["a b"]},
        {"key": "tier", "operator": "Exists", "values": ["x"]}]}),
     '[spec.podSelector.matchExpressions[0].values[0]: Invalid value: "a b": a valid label must '
     "be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
     "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
     "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), "
     "spec.podSelector.matchExpressions[1].values: Forbidden: may not be specified when "
     "`operator` is 'Exists' or 'DoesNotExist']"),
    # kube: ValidateNetworkPolicySpec — policyTypes
    ("types", policy(policyTypes=["Ingress", "Both"]),
     'spec.policyTypes[1]: Unsupported value: "Both": supported values: "Ingress", "Egress"'),
    ("three-types", policy(policyTypes=["Ingress", "Egress", "Ingress"]),
     'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: '
     "may not specify more than two policyTypes"),
]


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in POLICIES],
                         ids=[c[0] for c in POLICIES])
def test_network_policies_refused_as_kube_refuses(manifest: Obj, message: str) -> None:
    err = Kit().refused("networkpolicies", manifest)
    assert invalid_message(err) == 'NetworkPolicy.networking.k8s.io "n" is invalid: ' + message


def test_network_policy_defaults() -> None:
    kit = Kit()
    rules = {"ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}},
                                   {"ipBlock": {"cidr": "10.0.0.0/8",
                                                "except": ["10.1.0.0/16"]}}],
                          "ports": [{"port": 80}, {"port": "https", "protocol": "TCP"}]}],
             "egress": [{"to": [{"namespaceSelector": {"matchLabels": {
                 "kubernetes.io/metadata.name": "kube-system"}}}],
                         "ports": [{"port": 53, "protocol": "UDP"}, {"port": 30000,
                                                                     "endPort": 32767}]}]}
    made = kit.create("networkpolicies", {"metadata": {"name": "web"}, "spec": {
        "podSelector": {"matchLabels": {"app": "web"}}, **rules}})
    # kube: SetDefaults_NetworkPolicyPort and SetDefaults_NetworkPolicy
    assert made["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert [p["protocol"] for p in made["spec"]["ingress"][0]["ports"]] == ["TCP", "TCP"]
    assert made["spec"]["egress"][0]["ports"][1] == {"port": 30000, "endPort": 32767,
                                                     "protocol": "TCP"}
    only_ingress = kit.create("networkpolicies", {"metadata": {"name": "deny"},
                                                  "spec": {"podSelector": {}}})
    assert only_ingress["spec"]["policyTypes"] == ["Ingress"]
    assert "status" not in only_ingress
