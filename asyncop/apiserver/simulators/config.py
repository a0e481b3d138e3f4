"""SimulatorConfig: which cluster simulators run and how they pace themselves.

A frozen value handed to `start_simulators`. Every delay is in seconds of the injected Clock
(virtual seconds under `FakeClock`). Invariant: all simulators are on by default; turning one
off means nothing of its kind happens (pods stay Pending, services get no clusterIP, …).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatorConfig:
    gc: bool = True
    """ownerReference garbage collection (background, foreground, orphan)."""
    namespaces: bool = True
    """Namespace lifecycle: empty a Terminating namespace, then finalize it."""
    serviceaccounts: bool = True
    """A `default` ServiceAccount in every namespace (kube-controller-manager's)."""
    deployments: bool = True
    """Deployment -> ReplicaSet -> Pod controller, with Deployment/ReplicaSet status."""
    pods: bool = True
    """Scheduler + kubelet stand-in: Pending -> Running (-> Succeeded/Failed)."""
    services: bool = True
    """clusterIP and nodePort allocation (an admission hook on services)."""
    endpoints: bool = True
    """Endpoints objects listing the (ready / not ready) pods a Service selects."""
    jobs: bool = True
    """Job -> Pod controller with Complete/Failed conditions (Helm hooks wait on it)."""
    cronjobs: bool = True
    """CronJob -> Jobs on its schedule (clock time), with history limits."""
    statefulsets: bool = True
    """StatefulSet -> ordinal Pods, revisions and status."""
    daemonsets: bool = True
    """DaemonSet -> one Pod on the one simulated node."""
    volumes: bool = True
    """PersistentVolumeClaims get a provisioned PersistentVolume and become Bound."""

    pod_start_delay: float = 0.0
    """Seconds from a pod's first sighting to Running (it is bound at once)."""
    pod_run_duration: float = 1.0
    """Seconds a run-to-completion pod runs before it terminates (annotation overrides)."""
    node_name: str = "asyncop-node"
    """spec.nodeName given to every pod."""
    host_ip: str = "172.18.0.2"
    """status.hostIP of every pod (the one simulated node)."""
    pod_cidr: str = "10.244.0.0/16"
    """Pod IPs are handed out from this range."""
    service_cidr: str = "10.96.0.0/12"
    """clusterIPs are allocated from this range (.1 is kept for default/kubernetes)."""
    node_port_range: tuple[int, int] = (30000, 32767)
    """Inclusive range of allocatable nodePorts."""
    retry_delay: float = 0.5
    """Back-off before retrying a key whose write failed with an unexpected error."""
    resync_period: float | None = None
    """If set, every simulator re-checks all of its objects this often. Off by default: the
    in-process subscription loses nothing, and a lost one (overflow) triggers a full resync."""

    def __post_init__(self) -> None:
        for name in ("pod_cidr", "service_cidr"):
            try:
                ipaddress.ip_network(getattr(self, name), strict=False)
            except ValueError as err:
                raise ValueError(f"SimulatorConfig.{name}: {err}") from None
        lo, hi = self.node_port_range
        if not 0 < lo <= hi < 65536:
            raise ValueError(f"SimulatorConfig.node_port_range: {lo}-{hi} is not a port range")
        if min(self.pod_start_delay, self.pod_run_duration, self.retry_delay) < 0:
            raise ValueError("SimulatorConfig: delays must not be negative")
