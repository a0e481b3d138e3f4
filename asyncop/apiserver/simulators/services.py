"""ServiceAllocator: clusterIP and nodePort allocation, as an admission hook on services.

On CREATE and UPDATE (inside the server's write, so two writes can never pick the same value):
- clusterIP: ClusterIP/NodePort/LoadBalancer services get the next free address of the service
  CIDR (the network address, `.1` (kept for default/kubernetes) and the broadcast address are
  never handed out) in `spec.clusterIP` and `spec.clusterIPs`, with `ipFamilies: [IPv4]` and
  `ipFamilyPolicy: SingleStack`; `None` is headless (no allocation); ExternalName has none. A
  requested address must be a valid IP in the range and free (422 otherwise, with the real
  server's messages); once set it cannot change (422), and an update that omits it keeps it.
- nodePort: NodePort and LoadBalancer (unless allocateLoadBalancerNodePorts is false) ports
  without one get a free port of the range; a requested one must be in range and free (422
  `provided port is already allocated`); an update that omits it keeps the old port of the
  same (name, port, protocol); switching to ClusterIP releases them; range full → 500.
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
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import Obj, SimStore, name_of, ns_of
from asyncop.apiserver.simulators.config import SimulatorConfig

_NEEDS_IP = ("ClusterIP", "NodePort", "LoadBalancer")
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
    spec = svc.get("spec") or {}
    ips = {str(ip) for ip in spec.get("clusterIPs") or () if ip and ip != "None"}
    if spec.get("clusterIP") and spec["clusterIP"] != "None":
        ips.add(str(spec["clusterIP"]))
    return ips


def _ports_of(svc: Obj) -> set[int]:
    return {int(p["nodePort"]) for p in (svc.get("spec") or {}).get("ports") or ()
            if isinstance(p.get("nodePort"), int)}


def _quote_list(values: list[str]) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def _needs_node_ports(spec: dict[str, Any]) -> bool:
    stype = spec.get("type") or "ClusterIP"
    if stype == "NodePort":
        return True
    return stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True) is not False


def _port_id(port: dict[str, Any]) -> tuple[str, int, str]:
    return (str(port.get("name") or ""), int(port.get("port") or 0),
            str(port.get("protocol") or "TCP"))


class ServiceAllocator:
    """The admission hook (`admit`) plus the allocation cursors."""

    def __init__(self, store: SimStore, config: SimulatorConfig) -> None:
        self.store = store
        self.rt: ResourceType = store.resolve("", "v1", "services")
        self.net = ipaddress.ip_network(config.service_cidr, strict=False)
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
        if op not in ("CREATE", "UPDATE"):
            return
        ns, name = ns_of(obj), name_of(obj)
        spec: dict[str, Any] = obj.setdefault("spec", {})
        old_spec: dict[str, Any] = (old or {}).get("spec") or {} if op == "UPDATE" else {}
        if not self._seeded:
            self._seed()
        me = (ns, name)
        used_ips, used_ports = _Used(self._ips, me), _Used(self._ports, me)
        causes: list[StatusCause] = []
        self._cluster_ip(spec, old_spec, used_ips, causes, ns=ns, name=name)
        self._node_ports(spec, old_spec, used_ports, causes)
        if not causes:
            for ip in _ips_of(obj):
                self._ips.record(ip, me)
            for port in _ports_of(obj):
                self._ports.record(port, me)
            return
        parts = [f"{c['field']}: {c['message']}" for c in causes]
        text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        raise Invalid(status_body(422, f'Service "{name}" is invalid: {text}', name=name,
                                  kind="Service", causes=causes))

    # clusterIP ----------------------------------------------------------------------------
    def _cluster_ip(self, spec: dict[str, Any], old_spec: dict[str, Any], used: _Used[str],
                    causes: list[StatusCause], *, ns: str, name: str) -> None:
        stype = spec.get("type") or "ClusterIP"
        if stype not in _NEEDS_IP:
            for key in ("clusterIP", "clusterIPs"):
                if spec.get(key) in ("", [], None):
                    spec.pop(key, None)
            return
        requested = spec.get("clusterIP") or next(iter(spec.get("clusterIPs") or ()), None)
        old_ip = old_spec.get("clusterIP") if (old_spec.get("type") or "ClusterIP") in \
            _NEEDS_IP else None
        if not requested and old_ip:
            requested = old_ip
        if old_ip and requested != old_ip:
            causes.append({"field": "spec.clusterIPs[0]", "reason": "FieldValueInvalid",
                           "message": f"Invalid value: {_quote_list([str(requested)])}: "
                                      "may not change once set"})
            return
        if requested == "None":
            ip = "None"
        elif requested:
            ip = str(requested)
            problem = self._check_ip(ip, used)
            if problem and ip != old_ip:
                causes.append({"field": "spec.clusterIPs", "reason": "FieldValueInvalid",
                               "message": f"Invalid value: {_quote_list([ip])}: {problem}"})
                return
        else:
            ip = self._allocate_ip(used)
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")

    def _check_ip(self, ip: str, used: _Used[str]) -> str | None:
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return "must be a valid IP address"
        if addr not in self.net or addr in (self.net.network_address,
                                             self.net.broadcast_address):
            return (f"failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid "
                    f"range. The range of valid IPs is {self.net}")
        if ip in used:
            return f"failed to allocate IP {ip}: provided IP is already allocated"
        return None

    def _allocate_ip(self, used: _Used[str]) -> str:
        size = self.net.num_addresses - 3  # network, .1 (kubernetes), broadcast
        for step in range(size):
            offset = 2 + (self._ip_cursor + step) % size
            ip = str(self.net.network_address + offset)
            if ip not in used:
                self._ip_cursor = (self._ip_cursor + step + 1) % size
                return ip
        raise ServerError(status_body(
            500, "Internal error occurred: failed to allocate a serviceIP: range is full"))

    # nodePorts ----------------------------------------------------------------------------
    def _node_ports(self, spec: dict[str, Any], old_spec: dict[str, Any], taken: _Used[int],
                    causes: list[StatusCause]) -> None:
        ports: list[dict[str, Any]] = spec.get("ports") or []
        old_ports = {_port_id(p): p.get("nodePort") for p in old_spec.get("ports") or ()
                     if p.get("nodePort")}
        old_needed = bool(old_spec) and _needs_node_ports(old_spec)
        if not _needs_node_ports(spec):
            for i, port in enumerate(ports):
                np = port.get("nodePort")
                if not np:
                    continue
                if old_needed and old_ports.get(_port_id(port)) == np:
                    del port["nodePort"]  # switching to ClusterIP releases it
                elif (spec.get("type") or "ClusterIP") == "ClusterIP":
                    causes.append({"field": f"spec.ports[{i}].nodePort",
                                   "reason": "FieldValueForbidden",
                                   "message": "Forbidden: may not be used when `type` is "
                                              "'ClusterIP'"})
            return
        for i, port in enumerate(ports):
            np = port.get("nodePort")
            if not np and old_needed:
                np = old_ports.get(_port_id(port))
            if np:
                problem = None
                if not isinstance(np, int) or not self.port_lo <= np <= self.port_hi:
                    problem = (f"provided port is not in the valid range. The range of valid "
                               f"ports is {self.port_lo}-{self.port_hi}")
                elif np in taken:
                    problem = "provided port is already allocated"
                if problem:
                    causes.append({"field": f"spec.ports[{i}].nodePort",
                                   "reason": "FieldValueInvalid",
                                   "message": f"Invalid value: {np}: {problem}"})
                    continue
            else:
                np = self._allocate_port(taken)
            port["nodePort"] = np
            taken.add(np)

    def _allocate_port(self, taken: _Used[int]) -> int:
        size = self.port_hi - self.port_lo + 1
        for step in range(size):
            offset = (self._port_cursor + step) % size
            port = self.port_lo + offset
            if port not in taken:
                self._port_cursor = (offset + 1) % size
                return port
        error: ApiError = ServerError(status_body(
            500, "Internal error occurred: failed to allocate a nodePort: range is full"))
        raise error
