"""A pod spec and a pod template, validated as kube's ValidatePodSpec and
ValidatePodTemplateSpec do (pkg/apis/core/validation), in kube's order so the joined 422
message reads the same.

`pod_spec` walks volumes, containers (names unique across containers and init containers,
probes and lifecycle only where kube allows them, sidecars = init containers with
`restartPolicy: Always`), host ports, restartPolicy, dnsPolicy, nodeSelector, the pod
securityContext, affinity, DNS config, gates, topology spread, serviceAccountName,
nodeName, activeDeadlineSeconds, hostname/subdomain, tolerations, host aliases, priority
class, runtime class, preemption policy and os. `pod_template` adds the template's labels
and annotations; every workload prefixes the paths with its template's path.
Invariant: pure; never raises on a value of the wrong shape.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from asyncop.apiserver.builtin import (
    containers,
    probes,
    scheduling,
    security,
    specrecall,
    volumes,
)
from asyncop.apiserver.builtin.checks import (
    inclusive_range_error,
    is_valid_id,
    name_is_dns_subdomain,
)
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    dns1123_label,
    dns1123_subdomain,
    duplicate,
    each,
    forbidden,
    invalid,
    labels,
    not_supported,
    required,
)
from asyncop.apiserver.builtin.knownvalid import KnownValid, memory_key, text_key
from asyncop.apiserver.builtin.specmemo import (
    CONTAINER_LISTS,
    MAX_SPEC_KEY_BYTES,
    KnownTexts,
    containers_text,
    outside_text,
)

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_MAX_INT32 = 2**31 - 1


_REGULAR_VALID = KnownValid()


def _containers(items: list[Any], path: str, vols: dict[str, Obj], grace: int | None,
                host_users: bool) -> Causes:
    """validateContainers. A container whose fields other than `env` passed
    validateContainerCommon and the probe and lifecycle rules before, with the same volumes
    to mount, hostUsers and grace period (`knownvalid`), has only its env validated."""
    if not items:
        return [required(path)]
    out: Causes = []
    names: set[str] = set()
    mountable = tuple(vols)
    for i, ctr in enumerate(items):
        ctr, at = as_dict(ctr), f"{path}[{i}]"
        key = memory_key({k: v for k, v in ctr.items() if k != "env"},
                         (mountable, host_users, grace))
        if key in _REGULAR_VALID:  # only its env can hold an error
            common = containers.env(as_list(ctr["env"]), f"{at}.env") if "env" in ctr else []
            probe_causes: Causes = []
        else:
            common = containers.container_common(ctr, at, vols, host_users=host_users)
            probe_causes = probes.container_probes(ctr, at, grace)
            if not common and not probe_causes:
                _REGULAR_VALID.remember(key)
        out += common
        name = as_str(ctr.get("name"))
        if name in names:
            out.append(duplicate(f"{at}.name", name))
        names.add(name)
        out += probe_causes
        if ctr.get("restartPolicy") is not None:
            out.append(forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    return out + _host_port_conflicts([as_dict(c) for c in items], path)


def _init_containers(items: list[Any], regular: list[Any], path: str, vols: dict[str, Obj],
                     grace: int | None, host_users: bool) -> Causes:
    """validateInitContainers."""
    out: Causes = []
    names = {as_str(as_dict(c).get("name")) for c in regular}
    for i, ctr in enumerate(items):
        ctr, at = as_dict(ctr), f"{path}[{i}]"
        out += containers.container_common(ctr, at, vols, host_users=host_users)
        policy = ctr.get("restartPolicy")
        if isinstance(policy, str) and policy != "Always":
            out.append(not_supported(f"{at}.restartPolicy", policy, ("Always",)))
        name = as_str(ctr.get("name"))
        if name in names:
            out.append(duplicate(f"{at}.name", name))
        elif name:
            names.add(name)
        out += _host_port_conflicts([ctr], path)
        if policy == "Always":
            out += probes.container_probes(ctr, at, grace)
        else:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if isinstance(ctr.get(key), dict):
                    out.append(forbidden(f"{at}.{key}", "may not be set for init containers "
                                         "without restartPolicy=Always"))
    return out


def _host_port_conflicts(items: list[Obj], path: str) -> Causes:
    """AccumulateUniqueHostPorts: protocol/hostIP/hostPort unique."""
    out: Causes = []
    seen: set[str] = set()
    for ci, ctr in enumerate(items):
        for pi, port in enumerate(as_list(ctr.get("ports"))):
            port = as_dict(port)
            host = as_int(port.get("hostPort")) or 0
            if not host:
                continue
            key = f"{as_str(port.get('protocol'))}/{as_str(port.get('hostIP'))}/{host}"
            if key in seen:
                out.append(duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return out


def _security_context(spec: Obj, path: str) -> Causes:
    """validatePodSpecSecurityContext."""
    sc = spec.get("securityContext")
    if not isinstance(sc, dict):
        return []
    out: Causes = []
    for key in ("fsGroup", "runAsUser", "runAsGroup"):
        number = as_int(sc.get(key))
        if number is not None:
            out += each(f"{path}.{key}", number, is_valid_id(number))
    for i, gid in enumerate(as_list(sc.get("supplementalGroups"))):
        number = as_int(gid)
        if number is not None:
            out += each(f"{path}.supplementalGroups[{i}]", number, is_valid_id(number))
    if sc.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        out.append(invalid(f"{path}.shareProcessNamespace", True,
                           "ShareProcessNamespace and HostPID cannot both be enabled"))
    names: set[str] = set()
    for i, sysctl in enumerate(as_list(sc.get("sysctls"))):
        name = as_str(as_dict(sysctl).get("name"))
        if not name:
            out.append(required(f"{path}.sysctls[{i}].name"))
        elif name in names:
            out.append(duplicate(f"{path}.sysctls[{i}].name", name))
        names.add(name)
    policy = sc.get("fsGroupChangePolicy")
    if isinstance(policy, str) and policy not in ("Always", "OnRootMismatch"):
        out.append(not_supported(f"{path}.fsGroupChangePolicy", policy,
                                 ("Always", "OnRootMismatch")))
    out += security.seccomp_profile(sc.get("seccompProfile"), f"{path}.seccompProfile")
    out += security.app_armor_profile(sc.get("appArmorProfile"), f"{path}.appArmorProfile")
    groups = sc.get("supplementalGroupsPolicy")
    if isinstance(groups, str) and groups not in ("Merge", "Strict"):
        out.append(not_supported(f"{path}.supplementalGroupsPolicy", groups, ("Merge", "Strict")))
    return out


def _dns_config(raw: Any, policy: str, path: str) -> Causes:
    """validatePodDNSConfig."""
    if policy == "None":
        if not isinstance(raw, dict):
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not as_list(raw.get("nameservers")):
            return [required(f"{path}.nameservers", "must provide at least one DNS nameserver "
                             "when `dnsPolicy` is None")]
    if not isinstance(raw, dict):
        return []
    out: Causes = []
    servers = as_list(raw.get("nameservers"))
    if len(servers) > 3:
        out.append(invalid(f"{path}.nameservers", servers, "must not have more than 3 "
                           "nameservers"))
    for i, server in enumerate(servers):
        out += _ip(as_str(server), f"{path}.nameservers[{i}]")
    searches = [as_str(s) for s in as_list(raw.get("searches"))]
    if len(searches) > 32:
        out.append(invalid(f"{path}.searches", searches, "must not have more than 32 search "
                           "paths"))
    if len(" ".join(searches)) > 2048:
        out.append(invalid(f"{path}.searches", searches, "must not have more than 2048 "
                           "characters (including spaces) in the search list"))
    for i, option in enumerate(as_list(raw.get("options"))):
        if not as_str(as_dict(option).get("name")):
            out.append(required(f"{path}.options[{i}]", "must not be empty"))
    return out


def _ip(value: str, path: str) -> Causes:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return [invalid(path, value, _IP_MSG)]
    return []


_SPEC_VALID = KnownValid()
_WHOLE_VALID = KnownTexts()
_OUTSIDE_SEEN = KnownTexts()


def pod_spec(spec: Obj, path: str, *, is_pod: bool = False, strict_node_values: bool = True,
             pod_rules: Callable[[Obj], Causes] | None = None) -> Causes:
    """ValidatePodSpec (is_pod: the Pod kind itself, not a template), then `pod_rules`
    (a Pod's own rules on its spec, reported after). Replicas repeat a spec but for env
    values: a spec whose skeleton (`specmemo`: the spec with each env reduced to its names
    and its vars with a source) was found valid before, with the same context, is answered
    `[]`; any other is validated in full (`_pod_spec`). The skeleton is built only for a
    spec whose text outside its containers was seen in a valid spec with this context
    before (a pod of a StatefulSet, whose hostname is its own, never pays for it): the
    first replica is remembered by that text, the second by its skeleton, the third on is
    answered from memory."""
    outside = outside_text(spec)
    context = (is_pod, strict_node_values, pod_rules)
    key = None
    if outside is not None and (outside, context) in _OUTSIDE_SEEN:
        inside = containers_text(spec)
        if inside is not None and len(outside) + len(inside) <= MAX_SPEC_KEY_BYTES:
            key = (outside, inside, context)
            if key in _WHOLE_VALID:
                return []
    out = _pod_spec(spec, path, outside, is_pod=is_pod, strict_node_values=strict_node_values)
    if pod_rules is not None:
        out += pod_rules(spec)
    if not out and outside is not None:
        if key is not None:
            _WHOLE_VALID.remember(key)
        else:
            _OUTSIDE_SEEN.remember((outside, context))
    return out


def _pod_spec(spec: Obj, path: str, outside: bytes | None, *, is_pod: bool,
              strict_node_values: bool) -> Causes:
    """ValidatePodSpec in full. The rules on the spec outside its containers depend on
    nothing else; replicas repeat them, so a spec whose other fields were found valid
    before (`knownvalid`, keyed by their JSON text: `outside`, when the caller wrote it)
    has only its containers validated."""
    grace = as_int(spec.get("terminationGracePeriodSeconds"))
    host_users = as_dict(spec.get("securityContext")).get("hostUsers") is not False
    key = text_key(outside, strict_node_values) if outside is not None else memory_key(
        {k: v for k, v in spec.items() if k not in CONTAINER_LISTS}, strict_node_values)
    if key in _SPEC_VALID:  # every volume valid: all of them may be mounted
        vols = {as_str(vol.get("name")): vol for vol in as_list(spec.get("volumes"))
                if isinstance(vol, dict)}
        return _container_rules(spec, path, vols, grace, host_users, is_pod)
    out: Causes = []
    if "terminationGracePeriodSeconds" not in spec:
        out.append(required(f"{path}.terminationGracePeriodSeconds"))
    vol_causes, vols = volumes.validate(as_list(spec.get("volumes")), f"{path}.volumes")
    out += vol_causes
    tail = _spec_rules(spec, path, host_users, strict_node_values)
    if not out and not tail:
        _SPEC_VALID.remember(key)
    return out + _container_rules(spec, path, vols, grace, host_users, is_pod) + tail


def _container_rules(spec: Obj, path: str, vols: dict[str, Obj], grace: int | None,
                     host_users: bool, is_pod: bool) -> Causes:
    """ValidatePodSpec's rules on containers, init containers and their host ports."""
    regular = as_list(spec.get("containers"))
    out = _containers(regular, f"{path}.containers", vols, grace, host_users)
    out += _init_containers(as_list(spec.get("initContainers")), regular,
                            f"{path}.initContainers", vols, grace, host_users)
    if spec.get("hostNetwork") is True:
        for i, ctr in enumerate(regular):
            for j, port in enumerate(as_list(as_dict(ctr).get("ports"))):
                port = as_dict(port)
                host, ctr_port = as_int(port.get("hostPort")) or 0, port.get("containerPort")
                if (is_pod or host != 0) and host != ctr_port:
                    out.append(invalid(f"{path}.containers[{i}].ports[{j}].hostPort", host,
                                       "must match `containerPort` when `hostNetwork` is true"))
    return out


def _spec_rules(spec: Obj, path: str, host_users: bool, strict_node_values: bool) -> Causes:
    """ValidatePodSpec's rules after the containers (none of them reads a container)."""
    out: Causes = []
    restart = as_str(spec.get("restartPolicy"))
    if not restart:
        out.append(required(f"{path}.restartPolicy"))
    elif restart not in RESTART_POLICIES:
        out.append(not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES))
    dns = as_str(spec.get("dnsPolicy"))
    if not dns:
        out.append(required(f"{path}.dnsPolicy"))
    elif dns not in DNS_POLICIES:
        out.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    out += labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    out += _security_context(spec, f"{path}.securityContext")
    out += scheduling.affinity(spec.get("affinity"), f"{path}.affinity",
                               strict_node_values=strict_node_values)
    out += _dns_config(spec.get("dnsConfig"), dns, f"{path}.dnsConfig")
    out += scheduling.gates(as_list(spec.get("readinessGates")), f"{path}.readinessGates",
                            key="conditionType", unique=False)
    out += scheduling.gates(as_list(spec.get("schedulingGates")), f"{path}.schedulingGates",
                            key="name", unique=True)
    out += scheduling.topology_spread(as_list(spec.get("topologySpreadConstraints")),
                                      f"{path}.topologySpreadConstraints")
    if not host_users:
        for key, shown in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"),
                           ("hostIPC", "HostIPC")):
            if spec.get(key) is True:
                out.append(forbidden(f"{path}.{shown}", "when `pod.Spec.HostUsers` is false"))
    out += _names(spec, path)
    out += _spec_tail(spec, path)
    return out


def _names(spec: Obj, path: str) -> Causes:
    out: Causes = []
    for key in ("serviceAccountName", "nodeName"):
        name = as_str(spec.get(key))
        if name:
            out += each(f"{path}.{key}", name, name_is_dns_subdomain(name))
    deadline = as_int(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= _MAX_INT32:
        out.append(invalid(f"{path}.activeDeadlineSeconds", deadline,
                           inclusive_range_error(1, _MAX_INT32)))
    for key in ("hostname", "subdomain"):
        name = as_str(spec.get(key))
        if name:
            out += dns1123_label(name, f"{path}.{key}")
    return out


def _spec_tail(spec: Obj, path: str) -> Causes:
    out = scheduling.tolerations(as_list(spec.get("tolerations")), f"{path}.tolerations")
    for i, alias in enumerate(as_list(spec.get("hostAliases"))):
        alias = as_dict(alias)
        out += _ip(as_str(alias.get("ip")), f"{path}.hostAliases[{i}].ip")
        for j, host in enumerate(as_list(alias.get("hostnames"))):
            out += dns1123_subdomain(as_str(host), f"{path}.hostAliases[{i}].hostnames[{j}]")
    for key in ("priorityClassName", "runtimeClassName"):
        name = spec.get(key)
        if isinstance(name, str) and (name or key == "runtimeClassName"):
            out += each(f"{path}.{key}", name, name_is_dns_subdomain(name))
    preemption = spec.get("preemptionPolicy")
    if isinstance(preemption, str):
        if not preemption:
            out.append(required(f"{path}.preemptionPolicy"))
        elif preemption not in ("PreemptLowerPriority", "Never"):
            out.append(not_supported(f"{path}.preemptionPolicy", preemption,
                                     ("PreemptLowerPriority", "Never")))
    os_spec = spec.get("os")
    if isinstance(os_spec, dict):
        name = as_str(os_spec.get("name"))
        if not name:
            out.append(required(f"{path}.os.name", "cannot be empty"))
        elif name not in ("linux", "windows"):
            out.append(not_supported(f"{path}.os", name, ("linux", "windows")))
    return out


def pod_template(template: Any, path: str) -> Causes:
    """ValidatePodTemplateSpec: the template's labels and annotations (kube names them
    `<template>.labels`, without `metadata`), the pod spec, no ephemeral containers."""
    tpl = as_dict(template)
    meta = as_dict(tpl.get("metadata"))
    out = labels(meta.get("labels"), f"{path}.labels")
    spec = as_dict(tpl.get("spec"))
    if not specrecall.TEMPLATES.handed(spec):  # (a recalled spec is valid: `specrecall`)
        spec_causes = pod_spec(spec, f"{path}.spec")
        if not spec_causes:
            specrecall.TEMPLATES.validated(spec)
        out += spec_causes
    if as_list(spec.get("ephemeralContainers")):
        out.append(forbidden(f"{path}.spec.ephemeralContainers",
                             "ephemeral containers not allowed in pod template"))
    return out
