"""Service cluster IPs and IP families: kube's rules and the registry's bookkeeping for them.

- `validate_cluster_ips` is kube's ValidateServiceClusterIPsRelatedFields (clusterIP and
  clusterIPs in sync, valid addresses, at most one per family, families and policy enums);
  the allocator (simulators/services.py) runs it before allocating, as kube's does.
- `validate_ip_update` is the upgrade/downgrade part of ValidateServiceUpdate: a primary
  clusterIP or IP family never changes once set; releasing a secondary one needs SingleStack.
- `non_special_ip_errors` (externalIPs) and `source_range_errors` (loadBalancerSourceRanges
  or their annotation) are ValidateService's other address checks.
- `normalize_cluster_ips` and `patch_allocated` are the service registry's beginCreate and
  beginUpdate steps (normalizeClusterIPs, patchAllocatedValues): clusterIPs follows a
  clusterIP given alone, and an update that leaves out allocated values keeps the old ones.

Invariant: pure functions over the `spec` dicts; values of the wrong shape are read as
absent and never raise; `old_spec` is never mutated (values copied from it are copies).
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_string_slice
from asyncop.apiserver.builtin.netutils import cidr_errors, ip_errors, ip_version, parse_ip

NONE = "None"
SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
LB_ONLY = "may only be used when `type` is 'LoadBalancer'"
IP_FAMILIES = ("IPv4", "IPv6")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")


def cluster_ips(spec: Obj) -> list[str]:
    return [ip for ip in as_list(spec.get("clusterIPs")) if isinstance(ip, str)]


def ip_families(spec: Obj) -> list[str]:
    return [f for f in as_list(spec.get("ipFamilies")) if isinstance(f, str)]


def is_headless(spec: Obj) -> bool:
    """isHeadlessService: clusterIPs is exactly ["None"]."""
    return cluster_ips(spec) == [NONE]


def needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type") != "ExternalName"


def needs_node_port(spec: Obj) -> bool:
    return spec.get("type") in ("NodePort", "LoadBalancer")


def needs_health_check(spec: Obj) -> bool:
    """NeedsHealthCheck: a LoadBalancer with externalTrafficPolicy Local."""
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def ips_value(spec: Obj) -> Raw:
    """%#v of spec.clusterIPs ([]string(nil) when absent)."""
    if "clusterIPs" not in spec or spec.get("clusterIPs") is None:
        return Raw("[]string(nil)")
    return Raw(go_string_slice(cluster_ips(spec)))


def _families_value(spec: Obj) -> Raw:
    if spec.get("ipFamilies") is None:
        return Raw("[]core.IPFamily(nil)")
    return Raw(go_string_slice(ip_families(spec), "[]core.IPFamily"))


def validate_cluster_ips(spec: Obj) -> list[StatusCause]:
    """ValidateServiceClusterIPsRelatedFields (nothing for ExternalName services)."""
    if spec.get("type") == "ExternalName":
        return []
    out: list[StatusCause] = []
    ips = cluster_ips(spec)
    cluster_ip = as_str(spec.get("clusterIP"))
    if cluster_ip:
        if not ips:
            out.append(required("spec.clusterIPs"))
        elif ips[0] != cluster_ip:
            out.append(invalid("spec.clusterIPs", ips_value(spec),
                               "first value must match `clusterIP`"))
    elif ips:
        out.append(invalid("spec.clusterIPs", ips_value(spec),
                           "must be empty when `clusterIP` is not specified"))
    seen: set[str] = set()
    for i, family in enumerate(as_list(spec.get("ipFamilies"))):
        if family not in IP_FAMILIES:
            out.append(not_supported(f"spec.ipFamilies[{i}]", family, IP_FAMILIES))
        if isinstance(family, str) and family in seen:
            out.append(duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(str(family))
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        out.append(not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    any_invalid = False
    for i, ip in enumerate(ips):
        if i == 0 and ip == NONE:
            if len(ips) > 1:
                any_invalid = True
                out.append(invalid("spec.clusterIPs", ips_value(spec),
                                   "'None' must be the first and only value"))
            continue
        problems = ip_errors(f"spec.clusterIPs[{i}]", ip)
        any_invalid = any_invalid or bool(problems)
        out += problems
    if len(ips) > 2:
        out.append(invalid("spec.clusterIPs", ips_value(spec),
                           "may only hold up to 2 values"))
    if any_invalid:
        return out
    if len(ips) > 1 and len({_version(ip) for ip in ips}) != len(ips):
        out.append(invalid("spec.clusterIPs", ips_value(spec),
                           "may specify no more than one IP for each IP family"))
    families = ip_families(spec)
    if not is_headless(spec) and ips and families:
        for i, ip in enumerate(ips[:len(families)]):
            if families[i] == "IPv4" and _version(ip) == 6:
                out.append(invalid(f"spec.clusterIPs[{i}]", ip, "expected an IPv4 value "
                                   f"as indicated by `ipFamilies[{i}]`"))
            if families[i] == "IPv6" and _version(ip) != 6:
                out.append(invalid(f"spec.clusterIPs[{i}]", ip, "expected an IPv6 value "
                                   f"as indicated by `ipFamilies[{i}]`"))
    return out


def _version(ip: str) -> int:
    return ip_version(ip)


def validate_ip_update(spec: Obj, old_spec: Obj) -> list[StatusCause]:
    """validateUpgradeDowngradeClusterIPs, then validateUpgradeDowngradeIPFamilies."""
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return []
    out: list[StatusCause] = []
    new_headless, old_headless = is_headless(spec), is_headless(old_spec)
    if not (old_headless and new_headless):
        out += _ips_update(spec, old_spec)
    if new_headless == old_headless and not new_headless:
        out += _families_update(spec, old_spec)
    return out


def _policy_value(spec: Obj) -> Any:
    return spec.get("ipFamilyPolicy")


def _ips_update(spec: Obj, old_spec: Obj) -> list[StatusCause]:
    new, old = cluster_ips(spec), cluster_ips(old_spec)
    value = ips_value(spec)
    out: list[StatusCause] = []
    if len(old) == len(new):
        out += [invalid(f"spec.clusterIPs[{i}]", value, "may not change once set")
                for i, ip in enumerate(old) if ip != new[i]]
    elif len(old) > len(new):
        if not new:
            out.append(invalid("spec.clusterIPs[0]", value,
                               "primary clusterIP can not be unset"))
        if old and new and new[0] != old[0]:
            out.append(invalid("spec.clusterIPs[0]", value, "may not change once set"))
        if len(new) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            out.append(invalid("spec.ipFamilyPolicy", _policy_value(spec),
                               "must be set to 'SingleStack' when releasing the "
                               "secondary clusterIP"))
    elif old and new[0] != old[0]:
        out.append(invalid("spec.clusterIPs[0]", value, "may not change once set"))
    return out


def _families_update(spec: Obj, old_spec: Obj) -> list[StatusCause]:
    new, old = ip_families(spec), ip_families(old_spec)
    out: list[StatusCause] = []
    if len(old) == len(new):
        out += [invalid("spec.ipFamilies[0]", _families_value(spec),
                        "may not change once set")
                for i, family in enumerate(old) if family != new[i]]
    elif len(old) > len(new):
        if not cluster_ips(spec):
            out.append(invalid("spec.ipFamilies[0]", _families_value(spec),
                               "primary ipFamily can not be unset"))
        if new and new[0] != old[0]:
            out.append(invalid("spec.ipFamilies[0]", ips_value(spec),
                               "may not change once set"))
        if len(new) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            out.append(invalid("spec.ipFamilyPolicy", _policy_value(spec),
                               "must be set to 'SingleStack' when releasing the "
                               "secondary ipFamily"))
    elif old and new and new[0] != old[0]:
        out.append(invalid("spec.ipFamilies[0]", ips_value(spec),
                           "may not change once set"))
    return out


def same_cluster_ips(a: Obj, b: Obj) -> bool:
    return cluster_ips(a) == cluster_ips(b)


def normalize_cluster_ips(spec: Obj, old_spec: Obj | None) -> None:
    """normalizeClusterIPs: a clusterIP given without clusterIPs (an old client) fills it;
    on update an old client's missing clusterIPs are kept, a cleared clusterIP clears them."""
    cluster_ip = as_str(spec.get("clusterIP"))
    if old_spec is None:
        if cluster_ip and not cluster_ips(spec):
            spec["clusterIPs"] = [cluster_ip]
        return
    old_ip = as_str(old_spec.get("clusterIP"))
    if cluster_ips(old_spec) and not cluster_ips(spec) and old_ip == cluster_ip:
        spec["clusterIPs"] = list(cluster_ips(old_spec))
    if old_ip != cluster_ip:
        if old_ip and not cluster_ip:
            if same_cluster_ips(old_spec, spec):
                spec.pop("clusterIPs", None)
        elif same_cluster_ips(old_spec, spec):
            spec["clusterIPs"] = [cluster_ip]


def patch_allocated(spec: Obj, old_spec: Obj) -> None:
    """patchAllocatedValues: an update keeps the clusterIP(s), nodePorts (matched by port
    name, unless another port now uses that number) and healthCheckNodePort it leaves out."""
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec):
        if not as_str(spec.get("clusterIP")) and as_str(old_spec.get("clusterIP")):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not cluster_ips(spec) and cluster_ips(old_spec):
            spec["clusterIPs"] = list(cluster_ips(old_spec))
    if needs_node_port(old_spec) and needs_node_port(spec):
        used = node_ports(old_spec) & node_ports(spec)
        by_name: dict[str, int] = {}
        for port in as_list(old_spec.get("ports")):
            port = as_dict(port)
            by_name[as_str(port.get("name"))] = as_int(port.get("nodePort")) or 0
        for port in as_list(spec.get("ports")):
            if isinstance(port, dict) and not port.get("nodePort"):
                value = by_name.get(as_str(port.get("name")), 0)
                if value and value not in used:
                    port["nodePort"] = value
    if needs_health_check(old_spec) and needs_health_check(spec) \
            and not spec.get("healthCheckNodePort") and old_spec.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def node_ports(spec: Obj) -> set[int]:
    return {n for p in as_list(spec.get("ports"))
            if (n := as_int(as_dict(p).get("nodePort")))}


def non_special_ip_errors(path: str, value: str) -> list[StatusCause]:
    """ValidateNonSpecialIP (externalIPs, endpoints)."""
    ip = parse_ip(value)
    if ip is None:
        return [invalid(path, value, "must be a valid IP address")]
    out: list[StatusCause] = []
    if ip.is_unspecified:
        out.append(invalid(path, value, f"may not be unspecified ({value})"))
    if ip.is_loopback:
        out.append(invalid(path, value,
                           "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if ip.is_link_local and not ip.is_multicast:
        out.append(invalid(path, value,
                           "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if _link_local_multicast(ip):
        out.append(invalid(path, value, "may not be in the link-local multicast range "
                                        "(224.0.0.0/24, ff02::/10)"))
    return out


def _link_local_multicast(ip: Any) -> bool:
    if ip.version == 4:
        return bool(ip.packed[:3] == b"\xe0\x00\x00")
    return bool(ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02)


def source_range_errors(spec: Obj, annotations: Obj) -> list[StatusCause]:
    """loadBalancerSourceRanges (kube's path is capitalised), else the annotation: CIDRs, and
    only on LoadBalancers."""
    ranges = as_list(spec.get("loadBalancerSourceRanges"))
    not_lb = spec.get("type") != "LoadBalancer"
    out: list[StatusCause] = []
    if ranges:
        path = "spec.LoadBalancerSourceRanges"  # sic: kube's path
        if not_lb:
            out.append(forbidden(path, LB_ONLY))
        for i, value in enumerate(ranges):
            out += cidr_errors(f"{path}[{i}]", as_str(value).strip())
    elif SOURCE_RANGES_ANNOTATION in annotations:
        path = f"metadata.annotations[{SOURCE_RANGES_ANNOTATION}]"
        if not_lb:
            out.append(forbidden(path, LB_ONLY))
        text = as_str(annotations[SOURCE_RANGES_ANNOTATION]).strip()
        for value in text.split(",") if text else []:
            out += cidr_errors(path, value.strip())
    return out
