"""SimulatorConfig, and the pod annotations the simulated kubelet reads: the simulators' knobs.

`SimulatorConfig` is a frozen value handed to `start_simulators` (`ApiServer(simulators=
SimulatorConfig(...))`): which simulators run and how they pace themselves. Every delay is in
seconds of the injected Clock (virtual seconds under `FakeClock`). Invariant: all simulators
are on by default; turning one off means nothing of its kind happens (pods stay Pending,
services get no clusterIP, …).

`POD_ANNOTATIONS` is the one table of what a test can ask of one pod (read by pods.py, the
only simulator that reads annotations of its own): when it starts, whether it is Ready, when a
run-to-completion pod ends and with which exit code. `pod_annotations(...)` writes them,
typed, for a pod or a pod template (a Deployment's, a Job's, a CronJob's: template metadata is
copied to the pods). Invariant: every annotation named here is read by the pod simulator, and
it reads no other; a value it cannot parse means the default (an exit code: 1).
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


START_SECONDS_ANNOTATION = "sim.asyncop.io/start-seconds"
READY_ANNOTATION = "sim.asyncop.io/ready"
RUN_SECONDS_ANNOTATION = "sim.asyncop.io/run-seconds"
EXIT_CODE_ANNOTATION = "sim.asyncop.io/exit-code"


@dataclass(frozen=True, slots=True)
class PodAnnotation:
    """One annotation the pod simulator reads: its name, values, default and effect."""

    name: str
    values: str
    default: str
    effect: str


POD_ANNOTATIONS: tuple[PodAnnotation, ...] = (
    PodAnnotation(
        START_SECONDS_ANNOTATION, "seconds (a number >= 0)",
        "`SimulatorConfig.pod_start_delay` (0)",
        "the pod stays Pending (bound, PodScheduled) this long after the simulator first sees "
        "it, then turns Running"),
    PodAnnotation(
        READY_ANNOTATION, '"true" or "false"', '"true"',
        '"false" keeps a Running pod not Ready (Ready and ContainersReady False, reason '
        "ContainersNotReady); flipping it later flips the conditions"),
    PodAnnotation(
        RUN_SECONDS_ANNOTATION, "seconds (a number >= 0)",
        "`SimulatorConfig.pod_run_duration` (1)",
        "a run-to-completion pod runs this long after it turned Running, then terminates; "
        "setting it makes a pod with restartPolicy Never or OnFailure run to completion"),
    PodAnnotation(
        EXIT_CODE_ANNOTATION, "an integer", "0",
        "the exit code of every container when the pod terminates: 0 Succeeded (reason "
        "Completed), anything else Failed (reason Error; not restarted, even for OnFailure); "
        "setting it makes a pod with restartPolicy Never or OnFailure run to completion"),
)
"""What a test can ask of one pod (pods.py reads these and no other annotations). A pod runs
to completion when its restartPolicy is Never or OnFailure and it has a command or args, a
Job controls it, or it has run-seconds or exit-code; other pods run until deleted."""


def pod_annotations(
    *,
    start_seconds: float | None = None,
    ready: bool | None = None,
    run_seconds: float | None = None,
    exit_code: int | None = None,
) -> dict[str, str]:
    """The annotations (of `POD_ANNOTATIONS`) asking the simulated kubelet for this behaviour,
    for a pod's or a pod template's `metadata.annotations`; options left None are left out.

    `pod_annotations(run_seconds=90, exit_code=1)`: the pod runs 90 s, then fails."""
    out: dict[str, str] = {}
    for name, seconds in ((START_SECONDS_ANNOTATION, start_seconds),
                          (RUN_SECONDS_ANNOTATION, run_seconds)):
        if seconds is not None:
            if (isinstance(seconds, bool) or not isinstance(seconds, int | float)
                    or not seconds >= 0):
                raise ValueError(f"{name}: seconds must be a number >= 0, not {seconds!r}")
            out[name] = str(seconds)
    if ready is not None:
        out[READY_ANNOTATION] = "true" if ready else "false"
    if exit_code is not None:
        if isinstance(exit_code, bool) or not isinstance(exit_code, int):
            raise ValueError(f"{EXIT_CODE_ANNOTATION}: must be an integer, not {exit_code!r}")
        out[EXIT_CODE_ANNOTATION] = str(exit_code)
    return dict(sorted(out.items()))
