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
from asyncop.apiserver.builtin.fieldkit import (
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    cidr_errors,
    dns1035_label_errors,
    dns1123_subdomain_errors,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
    parse_cidr,
    parse_ip,
    path_segment_errors,
    port_name_errors,
    port_num_errors,
    spec_of,
    validate_label_selector,
    wildcard_dns1123_subdomain_errors,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_string_slice

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
            out.append(field_invalid(f"annotations.{CLASS_ANNOTATION}", cls,
                                     "must match `ingressClassName` when both are specified"))
    return out


def _ingress_spec(spec: Obj, *, allow_secret: bool, allow_wildcard: bool) -> list[StatusCause]:
    """ValidateIngressSpec."""
    out: list[StatusCause] = []
    rules = as_list(spec.get("rules"))
    if not rules and spec.get("defaultBackend") is None:
        shown = "[]networking.IngressRule(nil)" if spec.get("rules") is None else \
            "[]networking.IngressRule{}"
        out.append(field_invalid("spec", Raw(shown),
                                 "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        out += _backend(as_dict(spec.get("defaultBackend")), "spec.defaultBackend")
    for i, rule in enumerate(rules):
        out += _rule(as_dict(rule), f"spec.rules[{i}]", allow_wildcard=allow_wildcard)
    for i, tls in enumerate(as_list(spec.get("tls"))):
        tls = as_dict(tls)
        for j, host in enumerate(as_list(tls.get("hosts"))):
            text = as_str(host)
            check = wildcard_dns1123_subdomain_errors if "*" in text else \
                dns1123_subdomain_errors
            out += [field_invalid(f"spec.tls[{i}].hosts[{j}]", text, m) for m in check(text)]
        if not allow_secret:
            name = as_str(tls.get("secretName"))
            out += [field_invalid(f"spec.tls[{i}].secretName", name, m)
                    for m in _secret_name_errors(name)]
    if spec.get("ingressClassName") is not None:
        name = as_str(spec.get("ingressClassName"))
        out += [field_invalid("spec.ingressClassName", name, m)
                for m in dns1123_subdomain_errors(name)]
    return out


def _secret_name_errors(name: Any) -> list[str]:
    """validateTLSSecretName: empty is fine, else a Secret name (a DNS subdomain)."""
    text = as_str(name)
    return dns1123_subdomain_errors(text) if text else []


def _rule(rule: Obj, path: str, *, allow_wildcard: bool) -> list[StatusCause]:
    """One rule of validateIngressRules."""
    out: list[StatusCause] = []
    host = as_str(rule.get("host"))
    wildcard = False
    if host:
        if parse_ip(host) is not None:
            out.append(field_invalid(f"{path}.host", host, "must be a DNS name, not an IP "
                                                           "address"))
        if "*" in host:
            out += [field_invalid(f"{path}.host", host, m)
                    for m in wildcard_dns1123_subdomain_errors(host)]
            wildcard = True
        else:
            out += [field_invalid(f"{path}.host", host, m)
                    for m in dns1123_subdomain_errors(host)]
    if not wildcard or not allow_wildcard:
        out += _rule_value_errors(rule, path, allow_wildcard=allow_wildcard)
    return out


def _rule_value_errors(rule: Obj, path: str, *, allow_wildcard: bool) -> list[StatusCause]:
    """validateIngressRuleValue / validateHTTPIngressRuleValue."""
    http = rule.get("http")
    if http is None:
        return []
    paths = as_list(as_dict(http).get("paths"))
    out = [] if paths else [field_required(f"{path}.http.paths")]
    for i, item in enumerate(paths):
        out += _http_path(as_dict(item), f"{path}.http.paths[{i}]")
    return out


def _http_path(item: Obj, path: str) -> list[StatusCause]:
    """validateHTTPIngressPath."""
    path_type = item.get("pathType")
    if path_type is None:
        return [field_required(f"{path}.pathType", "pathType must be specified")]
    value = as_str(item.get("path"))
    out: list[StatusCause] = []
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            out.append(field_invalid(f"{path}.path", value, "must be an absolute path"))
        if value:
            out += [field_invalid(f"{path}.path", value, f"must not contain '{seq}'")
                    for seq in BAD_SEQUENCES if seq in value]
            out += [field_invalid(f"{path}.path", value, f"cannot end with '{end}'")
                    for end in BAD_SUFFIXES if value.endswith(end)]
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            out.append(field_invalid(f"{path}.path", value, "must be an absolute path"))
    else:
        out.append(field_not_supported(f"{path}.pathType", path_type, PATH_TYPES))
    return out + _backend(as_dict(item.get("backend")), f"{path}.backend")


def _backend(backend: Obj, path: str) -> list[StatusCause]:
    """validateIngressBackend."""
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [field_invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return _typed_reference(as_dict(resource), f"{path}.resource")
    if service is None:
        return [field_invalid(path, "", "resource or service backend is required")]
    service = as_dict(service)
    out: list[StatusCause] = []
    name = as_str(service.get("name"))
    if not name:
        out.append(field_required(f"{path}.service.name"))
    else:  # ValidateServiceName
        out += [field_invalid(f"{path}.service.name", name, m) for m in dns1035_label_errors(name)]
    port = as_dict(service.get("port"))
    port_name, number = as_str(port.get("name")), port.get("number")
    if port_name and number:
        out.append(field_invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        out += [field_invalid(f"{path}.service.port.name", port_name, m)
                for m in port_name_errors(port_name)]
    elif number:
        value = as_int(number)
        if value is None or port_num_errors(value):
            out.append(field_invalid(f"{path}.service.port.number", number,
                                     "must be between 1 and 65535, inclusive"))
    else:
        out.append(field_required(path, "port name or number is required"))
    return out


def _typed_reference(ref: Obj, path: str) -> list[StatusCause]:
    """validateIngressTypedLocalObjectReference."""
    out: list[StatusCause] = []
    if ref.get("apiGroup") is not None:
        group = as_str(ref.get("apiGroup"))
        out += [field_invalid(f"{path}.apiGroup", group, m)
                for m in dns1123_subdomain_errors(group)]
    for key in ("kind", "name"):
        value = as_str(ref.get(key))
        if not value:
            out.append(field_required(f"{path}.{key}"))
        else:
            out += [field_invalid(f"{path}.{key}", value, m) for m in path_segment_errors(value)]
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
    allow = old is not None and bool(validate_label_selector(
        as_dict(old.get("spec")).get("podSelector"), "spec.podSelector"))
    out = validate_label_selector(spec.get("podSelector"), "spec.podSelector",
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
        return [*out, field_invalid("spec.policyTypes", Raw(shown),
                                    "may not specify more than two policyTypes")]
    return out + [field_not_supported(f"spec.policyTypes[{i}]", t, ["Ingress", "Egress"])
                  for i, t in enumerate(types) if t not in ("Ingress", "Egress")]


def _policy_port(port: Obj, path: str) -> list[StatusCause]:
    """ValidateNetworkPolicyPort."""
    out: list[StatusCause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
        out.append(field_not_supported(f"{path}.protocol", protocol, ["TCP", "UDP", "SCTP"]))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            out.append(field_invalid(f"{path}.endPort", end,
                                     "may not be specified when `port` is not specified"))
    elif isinstance(number, str):
        if end is not None:
            out.append(field_invalid(f"{path}.endPort", end,
                                     "may not be specified when `port` is non-numeric"))
        out += [field_invalid(f"{path}.port", number, m) for m in port_name_errors(number)]
    else:
        value = as_int(number)
        if value is None or port_num_errors(value):
            out.append(field_invalid(f"{path}.port", number,
                                     "must be between 1 and 65535, inclusive"))
        if end is not None:
            last = as_int(end)
            if last is None or (value is not None and last < value):
                out.append(field_invalid(f"{path}.endPort", end,
                                         "must be greater than or equal to `port`"))
            if last is None or port_num_errors(last):
                out.append(field_invalid(f"{path}.endPort", end,
                                         "must be between 1 and 65535, inclusive"))
    return out


def _peer(peer: Obj, path: str, allow_invalid: bool) -> list[StatusCause]:
    """ValidateNetworkPolicyPeer."""
    out: list[StatusCause] = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            out += validate_label_selector(peer.get(key), f"{path}.{key}",
                                           allow_invalid_values=allow_invalid)
    if peer.get("ipBlock") is not None:
        count += 1
        out += _ip_block(as_dict(peer.get("ipBlock")), f"{path}.ipBlock")
    if count == 0:
        out.append(field_required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        out.append(field_forbidden(path, "may not specify both ipBlock and another peer"))
    return out


def _ip_block(block: Obj, path: str) -> list[StatusCause]:
    """ValidateIPBlock."""
    cidr = as_str(block.get("cidr"))
    if not cidr:
        return [field_required(f"{path}.cidr")]
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
            out.append(field_invalid(f"{path}.except[{i}]", text,
                                     "must be a strict subset of `cidr`"))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {INGRESSES: _ingress_defaults,
                                        NETWORKPOLICIES: _network_policy_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {INGRESSES: _ingress, NETWORKPOLICIES: _network_policy}
