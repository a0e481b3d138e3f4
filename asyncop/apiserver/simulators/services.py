"""ServiceAllocator: kube's service allocators (clusterIPs, IP families, nodePorts), as an
admission hook on services.

It runs inside the server's write (so two writes can never pick the same value), after the
built-in defaults (`builtin/services.py`: clusterIPs synced with clusterIP, allocated values
an update left out put back, values a type change dropped) and before validation, as kube's
`beginCreate`/`beginUpdate` do (pkg/registry/core/service/storage/alloc.go):
- IP families (initIPFamilyFields): ipFamilyPolicy defaults to the old policy, to
  RequireDualStack for headless services without a selector, else SingleStack; the loose
  pre-validation (ValidateServiceClusterIPsRelatedFields) runs first; ipFamilies follow the
  clusterIPs, then the cluster's family (that of the service CIDR; this cluster is single
  stack: RequireDualStack and the other family are refused with kube's messages; a headless
  selectorless service still lists both families).
- clusterIP: on create (and when an ExternalName service changes type) ClusterIP, NodePort
  and LoadBalancer services get the next free address of the service CIDR (never the network
  address, `.1` — kept for default/kubernetes — nor the broadcast address) or the one they
  ask for, which must be in range and free (422 `failed to allocate IP …`). Headless
  services get none. An update never re-allocates: changing an IP is validation's refusal.
- nodePorts (initNodePorts/updateNodePorts): NodePort services, and LoadBalancers unless
  allocateLoadBalancerNodePorts is false, get a free port of the range for each port without
  one (ports with the same number share it); a requested one must be in range and free
  (422 `provided port is already allocated`). healthCheckNodePort likewise for LoadBalancers
  with externalTrafficPolicy Local (kube answers a bad requested one with a 500; here it is a
  422 on spec.healthCheckNodePort with the same words). A full range is a 500, as in kube.
"Allocated" means held by another stored service, so deleting a service releases its values.
A ledger remembers which service was last given each value; a value is only treated as taken
after checking that this service, as stored, still holds it (an O(1) read instead of a scan
of every service per write). Invariant: the hook never awaits; it reads the store and mutates
only the incoming object.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from asyncop.api import ApiError, Invalid, ServerError, StatusCause, status_body
from asyncop.apiserver.builtin import serviceips
from asyncop.apiserver.builtin.fields import as_dict, as_int, as_list, invalid
from asyncop.apiserver.builtin.netutils import parse_ip
from asyncop.apiserver.builtin.serviceips import cluster_ips, ip_families, ips_value
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import Obj, SimStore, name_of, ns_of
from asyncop.apiserver.simulators.config import SimulatorConfig

SvcKey = tuple[str, str]
V = TypeVar("V", bound=Hashable)


class _Ledger(Generic[V]):
    """value -> the service last given it; `held` re-checks that against the store."""

    def __init__(self, holds: Callable[[SvcKey, V], bool]) -> None:
        self._owner: dict[V, SvcKey] = {}
        self._holds = holds

    def held(self, value: V, me: SvcKey) -> bool:
        owner = self._owner.get(value)
        if owner is None or owner == me:
            return False
        if self._holds(owner, value):
            return True
        del self._owner[value]  # released (deleted, changed, or a create that failed)
        return False

    def record(self, value: V, me: SvcKey) -> None:
        self._owner[value] = me


class _Used(Generic[V]):
    """What one admission must avoid: the ledger (minus this service) plus its own picks."""

    def __init__(self, ledger: _Ledger[V], me: SvcKey) -> None:
        self.ledger, self.me = ledger, me
        self.picked: list[V] = []

    def __contains__(self, value: object) -> bool:
        return value in self.picked or self.ledger.held(value, self.me)  # type: ignore[arg-type]

    def add(self, value: V) -> None:
        self.picked.append(value)


def _ips_of(svc: Obj) -> set[str]:
    spec = as_dict(svc.get("spec"))
    ips = {ip for ip in cluster_ips(spec) if ip and ip != "None"}
    if isinstance(spec.get("clusterIP"), str) and spec["clusterIP"] not in ("", "None"):
        ips.add(spec["clusterIP"])
    return ips


def _ports_of(svc: Obj) -> set[int]:
    spec = as_dict(svc.get("spec"))
    ports = serviceips.node_ports(spec)
    health = as_int(spec.get("healthCheckNodePort"))
    return ports | {health} if health else ports


def _allocates_node_ports(spec: dict[str, Any]) -> bool:
    """shouldAllocateNodePorts."""
    if spec.get("type") == "NodePort":
        return True
    return spec.get("type") == "LoadBalancer" and \
        spec.get("allocateLoadBalancerNodePorts", True) is not False


def _invalid(name: str, causes: list[StatusCause]) -> ApiError:
    parts = [f"{c['field']}: {c['message']}" for c in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return Invalid(status_body(422, f'Service "{name}" is invalid: {text}', name=name,
                               kind="Service", causes=causes))


def _full(what: str) -> ApiError:
    return ServerError(status_body(
        500, f"Internal error occurred: failed to allocate a {what}: range is full"))


class ServiceAllocator:
    """The admission hook (`admit`) plus the allocation cursors."""

    def __init__(self, store: SimStore, config: SimulatorConfig) -> None:
        self.store = store
        self.rt: ResourceType = store.resolve("", "v1", "services")
        self.net = ipaddress.ip_network(config.service_cidr, strict=False)
        self.family = f"IPv{self.net.version}"
        self.port_lo, self.port_hi = config.node_port_range
        self._ip_cursor = 0
        self._port_cursor = 0
        self._ips: _Ledger[str] = _Ledger(lambda key, ip: ip in self._held(key, _ips_of))
        self._ports: _Ledger[int] = _Ledger(lambda key, p: p in self._held(key, _ports_of))
        self._seeded = False

    def install(self) -> None:
        """Register the hook, unless an allocator already serves this store (a restart)."""
        hooks = getattr(self.store, "admission", None)
        if callable(hooks) and any(isinstance(getattr(h, "__self__", None), ServiceAllocator)
                                   for h in hooks(self.rt.gr)):
            return
        self.store.add_admission(self.rt.gr, self.admit)

    def _held(self, key: SvcKey, values: Callable[[Obj], set[Any]]) -> set[Any]:
        """The values service `key` holds as stored (any service's, if its name is unknown)."""
        if key[1]:
            svc = self.store.get(self.rt, key[0], key[1])
            return values(svc) if svc is not None else set()
        held: set[Any] = set()  # generateName: the final name was not known at admission
        for svc in self.store.list(self.rt, key[0]):
            held |= values(svc)
        return held

    def _seed(self) -> None:
        self._seeded = True
        for svc in self.store.list(self.rt):
            key = (ns_of(svc), name_of(svc))
            for ip in _ips_of(svc):
                self._ips.record(ip, key)
            for port in _ports_of(svc):
                self._ports.record(port, key)

    def admit(self, op: str, obj: Obj, old: Obj | None) -> None:
        spec = obj.get("spec")
        if op not in ("CREATE", "UPDATE") or not isinstance(spec, dict):
            return  # a spec of the wrong shape is validation's to refuse
        ns, name = ns_of(obj), name_of(obj)
        old_spec = as_dict((old or {}).get("spec")) if op == "UPDATE" else None
        if not self._seeded:
            self._seed()
        me = (ns, name)
        for step in (self._ip_families, self._validate_ips):
            causes = step(spec, old_spec)
            if causes:
                raise _invalid(name, causes)
        used_ips, used_ports = _Used(self._ips, me), _Used(self._ports, me)
        causes = self._cluster_ip(spec, old_spec, used_ips)
        causes = causes or self._node_ports(spec, old_spec, used_ports)
        causes = causes or self._health_check_port(spec, old_spec, used_ports)
        if causes:
            raise _invalid(name, causes)
        for ip in _ips_of(obj):
            self._ips.record(ip, me)
        for port in _ports_of(obj):
            self._ports.record(port, me)

    # IP families ----------------------------------------------------------------------------
    def _ip_families(self, spec: Obj, old_spec: Obj | None) -> list[StatusCause]:
        """initIPFamilyFields up to its pre-validation: the default ipFamilyPolicy."""
        if spec.get("type") == "ExternalName":
            return []
        if spec.get("ipFamilyPolicy") is None:
            if old_spec is not None and old_spec.get("ipFamilyPolicy") is not None:
                spec["ipFamilyPolicy"] = old_spec["ipFamilyPolicy"]
            elif spec.get("clusterIP") == "None" and not spec.get("selector"):
                spec["ipFamilyPolicy"] = "RequireDualStack"
            else:
                spec["ipFamilyPolicy"] = "SingleStack"
        return serviceips.validate_cluster_ips(spec)

    def _validate_ips(self, spec: Obj, old_spec: Obj | None) -> list[StatusCause]:
        """The rest of initIPFamilyFields: policy against the given IPs and families, the
        families inferred from the IPs, then the cluster's family."""
        if spec.get("type") == "ExternalName":
            return []
        policy, path = spec["ipFamilyPolicy"], "spec.ipFamilyPolicy"
        out: list[StatusCause] = []
        if old_spec is not None and policy == "SingleStack":
            for key in ("clusterIPs", "ipFamilies"):
                same = as_list(spec.get(key)) == as_list(old_spec.get(key))
                if same and len(as_list(spec.get(key))) > 1:
                    spec[key] = as_list(spec[key])[:1]
        elif old_spec is not None:
            for key, what in (("clusterIPs", "cluster IP"), ("ipFamilies", "IP family")):
                new = as_list(spec.get(key))
                if new and len(new) < len(as_list(old_spec.get(key))):
                    out.append(invalid(path, policy, f"must be 'SingleStack' to release "
                                                     f"the secondary {what}"))
        if policy == "SingleStack":
            for key, what in (("clusterIPs", "cluster IPs"), ("ipFamilies", "IP families")):
                if len(as_list(spec.get(key))) == 2:
                    out.append(invalid(path, policy, "must be 'RequireDualStack' or "
                                       f"'PreferDualStack' when multiple {what} are "
                                       "specified"))
        families = ip_families(spec)
        for i, ip in enumerate(cluster_ips(spec)):
            if ip == "None":
                break
            if i >= len(families):
                parsed = parse_ip(ip)  # valid: checked by the step before
                family = f"IPv{parsed.version if parsed is not None else 4}"
                if family != self.family:
                    out.append(invalid(f"spec.clusterIPs[{i}]", ips_value(spec),
                                       f"{family} is not configured on this cluster"))
                else:
                    families.append(family)
        if out:
            return out
        if spec.get("clusterIP") == "None" and not spec.get("selector"):
            families = families or [self.family]
            if len(families) < 2 and policy != "SingleStack":
                families.append("IPv6" if families[0] == "IPv4" else "IPv4")
            spec["ipFamilies"] = families
            return []
        if policy == "RequireDualStack":
            out.append(invalid(path, policy,
                               "this cluster is not configured for dual-stack services"))
        out += [invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster")
                for i, family in enumerate(families) if family != self.family]
        if not out:
            spec["ipFamilies"] = families or [self.family]
        return out

    # clusterIP ----------------------------------------------------------------------------
    def _cluster_ip(self, spec: Obj, old_spec: Obj | None,
                    used: _Used[str]) -> list[StatusCause]:
        """allocClusterIPs on create; on update only for a service leaving ExternalName
        (or one stored before allocation was on)."""
        if spec.get("type") == "ExternalName" or serviceips.is_headless(spec):
            return []
        if old_spec is not None and old_spec.get("type") != "ExternalName" and \
                cluster_ips(old_spec):
            return []
        requested = next(iter(cluster_ips(spec)), "")
        if requested:
            problem = self._check_ip(requested, used)
            if problem:
                return [invalid("spec.clusterIPs", ips_value(spec),
                                f"failed to allocate IP {requested}: {problem}")]
            ip = requested
        else:
            ip = self._allocate_ip(used)
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]
        return []

    def _check_ip(self, ip: str, used: _Used[str]) -> str | None:
        addr = parse_ip(ip)
        if addr is None or addr not in self.net or addr in (self.net.network_address,
                                                            self.net.broadcast_address):
            return (f"the provided IP ({ip}) is not in the valid range. The range of valid IPs "
                    f"is {self.net}")
        if ip in used:
            return "provided IP is already allocated"
        return None

    def _allocate_ip(self, used: _Used[str]) -> str:
        size = self.net.num_addresses - 3  # network, .1 (kubernetes), broadcast
        for step in range(max(size, 0)):
            offset = 2 + (self._ip_cursor + step) % size
            ip = str(self.net.network_address + offset)
            if ip not in used:
                self._ip_cursor = (self._ip_cursor + step + 1) % size
                return ip
        raise _full("serviceIP")

    # nodePorts ----------------------------------------------------------------------------
    def _node_ports(self, spec: Obj, old_spec: Obj | None,
                    taken: _Used[int]) -> list[StatusCause]:
        if spec.get("type") not in ("NodePort", "LoadBalancer"):
            return []
        allocate = _allocates_node_ports(spec)
        kept = serviceips.node_ports(old_spec or {})
        by_port: dict[Any, int] = {}  # initNodePorts: ports with one number share a nodePort
        ports = [p for p in as_list(spec.get("ports")) if isinstance(p, dict)]
        for i, port in enumerate(ports):
            requested = port.get("nodePort")
            if requested and as_int(requested) is None:  # a wrong shape: out of any range
                return [invalid(f"spec.ports[{i}].nodePort", requested,
                                self._check_port(requested, taken) or "")]
            number = as_int(port.get("port"))
            if not requested and old_spec is None:
                requested = by_port.get(number) or next(
                    (p.get("nodePort") for p in ports[i:]
                     if p.get("port") == number and p.get("nodePort")), None)
            if not requested and not allocate:
                continue
            if requested:
                shared = old_spec is not None or by_port.get(number) == requested
                if requested not in kept and not (shared and requested in taken.picked):
                    problem = self._check_port(requested, taken)
                    if problem:
                        return [invalid(f"spec.ports[{i}].nodePort", requested, problem)]
                    taken.add(requested)
                port["nodePort"] = requested
            else:
                port["nodePort"] = self._allocate_port(taken, "nodePort")
            by_port.setdefault(number, port["nodePort"])
        return []

    def _health_check_port(self, spec: Obj, old_spec: Obj | None,
                           taken: _Used[int]) -> list[StatusCause]:
        """allocHealthCheckNodePort, when a service starts to need one."""
        if not serviceips.needs_health_check(spec) or (
                old_spec is not None and serviceips.needs_health_check(old_spec)):
            return []
        requested = spec.get("healthCheckNodePort")
        if not requested:
            spec["healthCheckNodePort"] = self._allocate_port(taken, "HealthCheck NodePort")
            return []
        problem = self._check_port(requested, taken)
        if problem:
            return [invalid("spec.healthCheckNodePort", requested,
                            f"failed to allocate requested HealthCheck NodePort "
                            f"{requested}: {problem}")]
        taken.add(requested)
        return []

    def _check_port(self, port: Any, taken: _Used[int]) -> str | None:
        if as_int(port) is None or not self.port_lo <= port <= self.port_hi:
            return (f"provided port is not in the valid range. The range of valid ports is "
                    f"{self.port_lo}-{self.port_hi}")
        if port in taken:
            return "provided port is already allocated"
        return None

    def _allocate_port(self, taken: _Used[int], what: str) -> int:
        size = self.port_hi - self.port_lo + 1
        for step in range(size):
            offset = (self._port_cursor + step) % size
            port = self.port_lo + offset
            if port not in taken:
                self._port_cursor = (offset + 1) % size
                taken.add(port)
                return port
        raise _full(what)
