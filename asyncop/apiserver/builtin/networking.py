"""networking.k8s.io/v1: Ingress and NetworkPolicy — kube's defaults and validation.

- Ingress (ValidateIngressCreate/Update): rules or a defaultBackend; hosts are DNS names
  (a leading `*.` wildcard allowed) and never IPs; every HTTP rule has paths, each with a
  pathType (Exact and Prefix paths absolute and free of `//`, `/./`, `/../`, `%2f` and a
  `/.` or `/..` end); a backend is a service (a DNS-1035 name and a port name xor number)
  or a resource, never both; TLS hosts are DNS names, secret names DNS subdomains;
  ingressClassName a DNS subdomain and, on create, equal to the
  `kubernetes.io/ingress.class` annotation when both are set. An update tolerates the
  invalid secret names and wildcard rules the stored object already had.
- NetworkPolicy: SetDefaults_NetworkPolicyPort (protocol TCP) and SetDefaults_NetworkPolicy
  (policyTypes [Ingress], plus Egress when there are egress rules); ValidateNetworkPolicySpec
  (selectors, ports and endPort, peers with exactly one of ipBlock or selectors, ipBlock
  CIDRs with `except` inside `cidr`, policyTypes).
Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_valid_path_segment_name,
    is_valid_port_name,
    is_valid_port_num,
    is_wildcard_dns1123_subdomain,
)
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    each,
    forbidden,
    invalid,
    label_selector,
    not_supported,
    required,
    spec_of,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_string_slice
from asyncop.apiserver.builtin.netutils import cidr_errors, parse_cidr, parse_ip

INGRESSES = ("networking.k8s.io", "ingresses")
NETWORKPOLICIES = ("networking.k8s.io", "networkpolicies")
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
BAD_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
BAD_SUFFIXES = ("/..", "/.")
CLASS_ANNOTATION = "kubernetes.io/ingress.class"


# --- Ingress -----------------------------------------------------------------------------

def _ingress_defaults(obj: Obj, old: Obj | None) -> None:
    """networking/v1 has no Ingress defaults; the registry starts status empty."""
    if old is None:
        obj["status"] = {"loadBalancer": {}}


def _ingress(obj: Obj, old: Obj | None) -> list[StatusCause]:
    spec = as_dict(obj.get("spec"))
    old_spec = as_dict(old.get("spec")) if old is not None else {}
    allow_secret = any(_secret_name_errors(as_dict(t).get("secretName"))
                       for t in as_list(old_spec.get("tls")))
    allow_wildcard = any("*" in as_str(as_dict(r).get("host")) and _rule_value_errors(
        as_dict(r), "", allow_wildcard=False) for r in as_list(old_spec.get("rules")))
    out = _ingress_spec(spec, allow_secret=allow_secret, allow_wildcard=allow_wildcard)
    if old is None:
        annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        cls = annotations.get(CLASS_ANNOTATION)
        if cls is not None and spec.get("ingressClassName") is not None and \
                cls != spec.get("ingressClassName"):
            out.append(invalid(f"annotations.{CLASS_ANNOTATION}", cls,
                               "must match `ingressClassName` when both are specified"))
    return out


def _ingress_spec(spec: Obj, *, allow_secret: bool, allow_wildcard: bool) -> list[StatusCause]:
    """ValidateIngressSpec."""
    out: list[StatusCause] = []
    rules = as_list(spec.get("rules"))
    if not rules and spec.get("defaultBackend") is None:
        shown = "[]networking.IngressRule(nil)" if spec.get("rules") is None else \
            "[]networking.IngressRule{}"
        out.append(invalid("spec", Raw(shown),
                           "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        out += _backend(as_dict(spec.get("defaultBackend")), "spec.defaultBackend")
    for i, rule in enumerate(rules):
        out += _rule(as_dict(rule), f"spec.rules[{i}]", allow_wildcard=allow_wildcard)
    for i, tls in enumerate(as_list(spec.get("tls"))):
        tls = as_dict(tls)
        for j, host in enumerate(as_list(tls.get("hosts"))):
            text = as_str(host)
            check = is_wildcard_dns1123_subdomain if "*" in text else \
                is_dns1123_subdomain
            out += each(f"spec.tls[{i}].hosts[{j}]", text, check(text))
        if not allow_secret:
            name = as_str(tls.get("secretName"))
            out += each(f"spec.tls[{i}].secretName", name, _secret_name_errors(name))
    if spec.get("ingressClassName") is not None:
        name = as_str(spec.get("ingressClassName"))
        out += each("spec.ingressClassName", name, is_dns1123_subdomain(name))
    return out


def _secret_name_errors(name: Any) -> list[str]:
    """validateTLSSecretName: empty is fine, else a Secret name (a DNS subdomain)."""
    text = as_str(name)
    return is_dns1123_subdomain(text) if text else []


def _rule(rule: Obj, path: str, *, allow_wildcard: bool) -> list[StatusCause]:
    """One rule of validateIngressRules."""
    out: list[StatusCause] = []
    host = as_str(rule.get("host"))
    wildcard = False
    if host:
        if parse_ip(host) is not None:
            out.append(invalid(f"{path}.host", host, "must be a DNS name, not an IP "
                                                     "address"))
        if "*" in host:
            out += each(f"{path}.host", host, is_wildcard_dns1123_subdomain(host))
            wildcard = True
        else:
            out += each(f"{path}.host", host, is_dns1123_subdomain(host))
    if not wildcard or not allow_wildcard:
        out += _rule_value_errors(rule, path, allow_wildcard=allow_wildcard)
    return out


def _rule_value_errors(rule: Obj, path: str, *, allow_wildcard: bool) -> list[StatusCause]:
    """validateIngressRuleValue / validateHTTPIngressRuleValue."""
    http = rule.get("http")
    if http is None:
        return []
    paths = as_list(as_dict(http).get("paths"))
    out = [] if paths else [required(f"{path}.http.paths")]
    for i, item in enumerate(paths):
        out += _http_path(as_dict(item), f"{path}.http.paths[{i}]")
    return out


def _http_path(item: Obj, path: str) -> list[StatusCause]:
    """validateHTTPIngressPath."""
    path_type = item.get("pathType")
    if path_type is None:
        return [required(f"{path}.pathType", "pathType must be specified")]
    value = as_str(item.get("path"))
    out: list[StatusCause] = []
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            out.append(invalid(f"{path}.path", value, "must be an absolute path"))
        if value:
            out += [invalid(f"{path}.path", value, f"must not contain '{seq}'")
                    for seq in BAD_SEQUENCES if seq in value]
            out += [invalid(f"{path}.path", value, f"cannot end with '{end}'")
                    for end in BAD_SUFFIXES if value.endswith(end)]
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            out.append(invalid(f"{path}.path", value, "must be an absolute path"))
    else:
        out.append(not_supported(f"{path}.pathType", path_type, PATH_TYPES))
    return out + _backend(as_dict(item.get("backend")), f"{path}.backend")


def _backend(backend: Obj, path: str) -> list[StatusCause]:
    """validateIngressBackend."""
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return _typed_reference(as_dict(resource), f"{path}.resource")
    if service is None:
        return [invalid(path, "", "resource or service backend is required")]
    service = as_dict(service)
    out: list[StatusCause] = []
    name = as_str(service.get("name"))
    if not name:
        out.append(required(f"{path}.service.name"))
    else:  # ValidateServiceName
        out += each(f"{path}.service.name", name, is_dns1035_label(name))
    port = as_dict(service.get("port"))
    port_name, number = as_str(port.get("name")), port.get("number")
    if port_name and number:
        out.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        out += each(f"{path}.service.port.name", port_name, is_valid_port_name(port_name))
    elif number:
        value = as_int(number)
        if value is None or is_valid_port_num(value):
            out.append(invalid(f"{path}.service.port.number", number,
                               "must be between 1 and 65535, inclusive"))
    else:
        out.append(required(path, "port name or number is required"))
    return out


def _typed_reference(ref: Obj, path: str) -> list[StatusCause]:
    """validateIngressTypedLocalObjectReference."""
    out: list[StatusCause] = []
    if ref.get("apiGroup") is not None:
        group = as_str(ref.get("apiGroup"))
        out += each(f"{path}.apiGroup", group, is_dns1123_subdomain(group))
    for key in ("kind", "name"):
        value = as_str(ref.get(key))
        if not value:
            out.append(required(f"{path}.{key}"))
        else:
            out += each(f"{path}.{key}", value, is_valid_path_segment_name(value))
    return out


# --- NetworkPolicy -------------------------------------------------------------------------

def _network_policy_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    for direction in ("ingress", "egress"):
        for rule in as_list(spec.get(direction)):
            for port in as_list(as_dict(rule).get("ports")):
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not as_list(spec.get("policyTypes")):
        spec["policyTypes"] = ["Ingress", "Egress"] if as_list(spec.get("egress")) \
            else ["Ingress"]


def _network_policy(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateNetworkPolicy / ValidateNetworkPolicyUpdate (invalid selector values the
    stored podSelector had stay allowed)."""
    spec = as_dict(obj.get("spec"))
    allow = old is not None and bool(label_selector(
        as_dict(old.get("spec")).get("podSelector"), "spec.podSelector"))
    out = label_selector(spec.get("podSelector"), "spec.podSelector",
                         allow_invalid_values=allow)
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(as_list(spec.get(direction))):
            rule, rule_path = as_dict(rule), f"spec.{direction}[{i}]"
            for j, port in enumerate(as_list(rule.get("ports"))):
                out += _policy_port(as_dict(port), f"{rule_path}.ports[{j}]")
            for j, peer in enumerate(as_list(rule.get(peers))):
                out += _peer(as_dict(peer), f"{rule_path}.{peers}[{j}]", allow)
    types = as_list(spec.get("policyTypes"))
    if len(types) > 2:
        shown = go_string_slice([as_str(t) for t in types], "[]networking.PolicyType")
        return [*out, invalid("spec.policyTypes", Raw(shown),
                              "may not specify more than two policyTypes")]
    return out + [not_supported(f"spec.policyTypes[{i}]", t, ["Ingress", "Egress"])
                  for i, t in enumerate(types) if t not in ("Ingress", "Egress")]


def _policy_port(port: Obj, path: str) -> list[StatusCause]:
    """ValidateNetworkPolicyPort."""
    out: list[StatusCause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
        out.append(not_supported(f"{path}.protocol", protocol, ["TCP", "UDP", "SCTP"]))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            out.append(invalid(f"{path}.endPort", end,
                               "may not be specified when `port` is not specified"))
    elif isinstance(number, str):
        if end is not None:
            out.append(invalid(f"{path}.endPort", end,
                               "may not be specified when `port` is non-numeric"))
        out += each(f"{path}.port", number, is_valid_port_name(number))
    else:
        value = as_int(number)
        if value is None or is_valid_port_num(value):
            out.append(invalid(f"{path}.port", number,
                               "must be between 1 and 65535, inclusive"))
        if end is not None:
            last = as_int(end)
            if last is None or (value is not None and last < value):
                out.append(invalid(f"{path}.endPort", end,
                                   "must be greater than or equal to `port`"))
            if last is None or is_valid_port_num(last):
                out.append(invalid(f"{path}.endPort", end,
                                   "must be between 1 and 65535, inclusive"))
    return out


def _peer(peer: Obj, path: str, allow_invalid: bool) -> list[StatusCause]:
    """ValidateNetworkPolicyPeer."""
    out: list[StatusCause] = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            out += label_selector(peer.get(key), f"{path}.{key}",
                                  allow_invalid_values=allow_invalid)
    if peer.get("ipBlock") is not None:
        count += 1
        out += _ip_block(as_dict(peer.get("ipBlock")), f"{path}.ipBlock")
    if count == 0:
        out.append(required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        out.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return out


def _ip_block(block: Obj, path: str) -> list[StatusCause]:
    """ValidateIPBlock."""
    cidr = as_str(block.get("cidr"))
    if not cidr:
        return [required(f"{path}.cidr")]
    out = cidr_errors(f"{path}.cidr", cidr)
    network = parse_cidr(cidr)
    if network is None:
        return out
    for i, value in enumerate(as_list(block.get("except"))):
        text = as_str(value)
        problems = cidr_errors(f"{path}.except[{i}]", text)
        out += problems
        inner = parse_cidr(text)
        if inner is None:
            continue
        if inner.version != network.version or inner.network_address not in network or \
                network.prefixlen >= inner.prefixlen:
            out.append(invalid(f"{path}.except[{i}]", text,
                               "must be a strict subset of `cidr`"))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {INGRESSES: _ingress_defaults,
                                        NETWORKPOLICIES: _network_policy_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {INGRESSES: _ingress, NETWORKPOLICIES: _network_policy}
