"""PodSimulator: a scheduler + kubelet stand-in for the one simulated node.

Lifecycle of a pod (all timing on the injected clock, measured from when the simulator first
sees the pod):
- at once: bound through pods/binding (`spec.nodeName`, `PodScheduled=True`), `status.phase:
  Pending`;
- after `pod_start_delay` (or the `sim.asyncop.io/start-seconds` annotation): `Running` with
  hostIP, podIP(s), startTime, the conditions PodReadyToStartContainers, Initialized, Ready,
  ContainersReady, PodScheduled (all True) and a running, ready containerStatus per
  container; the annotation `sim.asyncop.io/ready: "false"` keeps it Running but not Ready
  (Ready/ContainersReady False, reason ContainersNotReady) and can be flipped at any time
  (a status written by someone else is not fought over);
- run-to-completion pods only, after `pod_run_duration` (or the `sim.asyncop.io/run-seconds`
  annotation): `Succeeded` (every container terminated, exitCode 0, reason Completed), or
  `Failed` when the annotation `sim.asyncop.io/exit-code` holds a non-zero code.

The run-to-completion rule: `spec.restartPolicy` is `Never` or `OnFailure` AND (some container
has `command` or `args`, or the run-seconds or exit-code annotation is set, or a Job controls
the pod). Pods with the default `Always`, or bare pods without a command (a server image's
entrypoint), run until deleted.
A non-zero exit code fails the pod for `OnFailure` too (no restart loop is simulated).

The annotations, their values and defaults: `POD_ANNOTATIONS` (config.py), which
`pod_annotations(...)` writes.

A pod with `deletionTimestamp` is confirmed gone at once (the grace period is treated as
elapsed), as a kubelet does with `DELETE ...?gracePeriodSeconds=0` once its containers stop.
At start the simulator registers its Node (nodes.py). Nothing is ever executed on the host.
Invariant: a pod only moves forward (Pending -> Running -> Succeeded/Failed); the simulator
never rewrites a terminal pod.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass
from typing import Any

from asyncop.api import NotFound, status_body
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    Simulator,
    controller_ref_name,
    deleting,
    name_of,
    ns_of,
    uid_of,
)
from asyncop.apiserver.simulators.config import (
    EXIT_CODE_ANNOTATION,
    READY_ANNOTATION,
    RUN_SECONDS_ANNOTATION,
    START_SECONDS_ANNOTATION,
    SimulatorConfig,
)
from asyncop.apiserver.simulators.nodes import ensure_node
from asyncop.clock import Clock, Timer, format_time

TERMINAL = ("Succeeded", "Failed")


@dataclass(slots=True)
class _Track:
    seen_at: float
    running_at: float | None = None
    ready: bool | None = None  # the readiness last written (manual edits are left alone)
    timer: Timer | None = None


def _annotation(pod: Obj, key: str) -> str | None:
    value = (pod.get("metadata", {}).get("annotations") or {}).get(key)
    return None if value is None else str(value)


def wants_ready(pod: Obj) -> bool:
    return (_annotation(pod, READY_ANNOTATION) or "true").lower() != "false"


def start_seconds(pod: Obj, default: float) -> float:
    raw = _annotation(pod, START_SECONDS_ANNOTATION)
    try:
        return max(0.0, float(raw)) if raw is not None else default
    except ValueError:
        return default


def runs_to_completion(pod: Obj) -> bool:
    """The documented rule (see the module docstring)."""
    spec = pod.get("spec") or {}
    if spec.get("restartPolicy", "Always") not in ("Never", "OnFailure"):
        return False
    annotations = pod.get("metadata", {}).get("annotations") or {}
    if EXIT_CODE_ANNOTATION in annotations or RUN_SECONDS_ANNOTATION in annotations:
        return True
    if controller_ref_name(pod, "Job") is not None:
        return True
    return any(c.get("command") or c.get("args") for c in spec.get("containers") or ())


def exit_code(pod: Obj) -> int:
    raw = (pod.get("metadata", {}).get("annotations") or {}).get(EXIT_CODE_ANNOTATION)
    try:
        return int(str(raw)) if raw is not None else 0
    except ValueError:
        return 1


def run_seconds(pod: Obj, default: float) -> float:
    raw = (pod.get("metadata", {}).get("annotations") or {}).get(RUN_SECONDS_ANNOTATION)
    try:
        return max(0.0, float(str(raw))) if raw is not None else default
    except ValueError:
        return default


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def _condition(ctype: str, status: str, when: str, reason: str | None = None) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": ctype, "status": status, "lastProbeTime": None,
                            "lastTransitionTime": when}
    if reason:
        cond["reason"] = reason
    return cond


def _has_condition(pod: Obj, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def scheduled_status(pod: Obj, when: str) -> dict[str, Any]:
    status = dict(pod.get("status") or {})
    status["phase"] = "Pending"
    status.setdefault("qosClass", "BestEffort")
    status["conditions"] = [_condition("PodScheduled", "True", when)]
    return status


def running_status(pod: Obj, *, host_ip: str, pod_ip: str, when: str,
                   ready: bool = True) -> dict[str, Any]:
    spec = pod.get("spec") or {}
    uid = uid_of(pod)
    status = dict(pod.get("status") or {})
    old = {c.get("type"): c for c in status.get("conditions") or ()}
    scheduled = (old.get("PodScheduled") or {}).get("lastTransitionTime") or when
    started = {cs.get("name"): ((cs.get("state") or {}).get("running") or {}).get("startedAt")
               for cs in status.get("containerStatuses") or ()}
    flag = "True" if ready else "False"
    why = None if ready else "ContainersNotReady"

    def cond(ctype: str, value: str, reason: str | None = None) -> dict[str, Any]:
        prev: dict[str, Any] | None = old.get(ctype)
        if prev is not None and prev.get("status") == value:
            return prev
        return _condition(ctype, value, when, reason)

    status.update({
        "phase": "Running",
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": status.get("startTime") or when,
        "conditions": [
            cond("PodReadyToStartContainers", "True"),
            cond("Initialized", "True"),
            cond("Ready", flag, why),
            cond("ContainersReady", flag, why),
            _condition("PodScheduled", "True", scheduled),
        ],
        "containerStatuses": [
            _container(uid, c, {"running": {"startedAt": started.get(c.get("name")) or when}},
                       ready=ready, started=True)
            for c in spec.get("containers") or ()],
    })
    status.setdefault("qosClass", "BestEffort")
    inits = spec.get("initContainers") or ()
    if inits:
        status["initContainerStatuses"] = [
            _container(uid, c, _terminated(0, "Completed", when, when, uid, c),
                       ready=True, started=False) for c in inits]
    return status


def terminated_status(pod: Obj, *, code: int, when: str) -> dict[str, Any]:
    spec = pod.get("spec") or {}
    uid = uid_of(pod)
    status = dict(pod.get("status") or {})
    started = status.get("startTime") or when
    phase, reason = ("Succeeded", "Completed") if code == 0 else ("Failed", "Error")
    why = "PodCompleted" if code == 0 else "PodFailed"
    conditions = []
    for cond in status.get("conditions") or ():
        if cond.get("type") in ("Ready", "ContainersReady", "PodReadyToStartContainers"):
            cond = _condition(cond["type"], "False", when, why)
        conditions.append(cond)
    status.update({
        "phase": phase,
        "conditions": conditions,
        "containerStatuses": [_container(uid, c, _terminated(code, reason, started, when, uid, c),
                                         ready=False, started=False)
                              for c in spec.get("containers") or ()],
    })
    return status


def _terminated(code: int, reason: str, started: str, finished: str, uid: str,
                container: dict[str, Any]) -> dict[str, Any]:
    return {"terminated": {"exitCode": code, "reason": reason, "startedAt": started,
                           "finishedAt": finished,
                           "containerID": "containerd://" + _digest(uid, container["name"])}}


def _container(uid: str, container: dict[str, Any], state: dict[str, Any], *, ready: bool,
               started: bool) -> dict[str, Any]:
    name = str(container.get("name", ""))
    image = str(container.get("image", ""))
    return {
        "name": name,
        "image": image,
        "imageID": f"{image.split('@')[0]}@sha256:{_digest(image)}",
        "containerID": "containerd://" + _digest(uid, name),
        "ready": ready,
        "started": started,
        "restartCount": 0,
        "state": state,
        "lastState": {},
    }


class PodSimulator(Simulator[tuple[str, str]]):
    name = "pods"
    watched = frozenset({("", "pods")})

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, retry_delay=config.retry_delay,
                         resync_period=config.resync_period)
        self.config = config
        self.rt: ResourceType = store.resolve("", "v1", "pods")
        try:
            self.node_rt: ResourceType | None = store.resolve("", "v1", "nodes")
        except NotFound:
            self.node_rt = None
        self._tracks: dict[str, _Track] = {}
        net = ipaddress.ip_network(config.pod_cidr, strict=False)
        self._pod_net = net
        self._next_ip = 0

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        if rt.gr != self.rt.gr:
            return
        if event == "DELETED":
            self._forget(uid_of(obj))
            return
        self.add((ns_of(obj), name_of(obj)))

    async def resync(self) -> None:
        if self.node_rt is not None:
            await ensure_node(self.store, self.node_rt, self.config,
                              format_time(self.clock.now()))
        for pod in self.store.list(self.rt):
            phase = (pod.get("status") or {}).get("phase")
            if phase not in TERMINAL or deleting(pod):
                self.add((ns_of(pod), name_of(pod)))

    def _forget(self, uid: str) -> None:
        track = self._tracks.pop(uid, None)
        if track is not None and track.timer is not None:
            track.timer.cancel()

    def _wake_at(self, key: tuple[str, str], track: _Track, due: float) -> None:
        if track.timer is not None:
            track.timer.cancel()
        track.timer = self.clock.call_at(due, lambda: self.add(key))

    def _pod_ip(self) -> str:
        hosts = self._pod_net.num_addresses - 3
        offset = 2 + self._next_ip % max(hosts, 1)
        self._next_ip += 1
        return str(self._pod_net.network_address + offset)

    async def sync(self, key: tuple[str, str]) -> None:
        ns, name = key
        pod = self.store.get(self.rt, ns, name)
        if pod is None:
            return
        uid = uid_of(pod)
        if deleting(pod):
            self._forget(uid)
            if not pod["metadata"].get("finalizers"):
                await self._confirm_deleted(ns, name)
            return
        status = pod.get("status") or {}
        if status.get("phase") in TERMINAL:
            self._forget(uid)
            return
        now = self.clock.monotonic()
        track = self._tracks.get(uid)
        if track is None:
            track = self._tracks[uid] = _Track(seen_at=now)
            if status.get("phase") == "Running":
                track.ready = _has_condition(pod, "Ready")
        when = format_time(self.clock.now())
        if not (pod.get("spec") or {}).get("nodeName"):
            pod = await self._bind(pod)
        if status.get("phase") != "Running":
            due = track.seen_at + start_seconds(pod, self.config.pod_start_delay)
            if now < due:
                if not _has_condition(pod, "PodScheduled"):
                    pod["status"] = scheduled_status(pod, when)
                    await self.store.update_status(self.rt, pod)
                self._wake_at(key, track, due)
                return
            pod["status"] = running_status(pod, host_ip=self.config.host_ip,
                                           pod_ip=self._pod_ip(), when=when,
                                           ready=wants_ready(pod))
            pod = await self.store.update_status(self.rt, pod)
            track.running_at = now
            track.ready = wants_ready(pod)
        elif track.ready is not None and track.ready != wants_ready(pod):
            pod["status"] = running_status(pod, host_ip=self.config.host_ip,
                                           pod_ip=str(status.get("podIP") or self._pod_ip()),
                                           when=when, ready=wants_ready(pod))
            pod = await self.store.update_status(self.rt, pod)
            track.ready = wants_ready(pod)
        if not runs_to_completion(pod):
            return
        if track.running_at is None:
            track.running_at = now
        due = track.running_at + run_seconds(pod, self.config.pod_run_duration)
        if now < due:
            self._wake_at(key, track, due)
            return
        pod["status"] = terminated_status(pod, code=exit_code(pod), when=when)
        await self.store.update_status(self.rt, pod)
        self._forget(uid)

    async def _bind(self, pod: Obj) -> Obj:
        """Bind through pods/binding, as kube-scheduler does (no generation bump)."""
        binding = {"apiVersion": "v1", "kind": "Binding",
                   "metadata": {"name": name_of(pod), "namespace": ns_of(pod),
                                "uid": uid_of(pod)},
                   "target": {"apiVersion": "v1", "kind": "Node",
                              "name": self.config.node_name}}
        await self.store.bind(self.rt, ns_of(pod), name_of(pod), binding)
        bound = self.store.get(self.rt, ns_of(pod), name_of(pod))
        if bound is None:
            raise NotFound(status_body(404, f'pods "{name_of(pod)}" not found'))
        return bound

    async def _confirm_deleted(self, ns: str, name: str) -> None:
        await self.store.delete(self.rt, ns, name)
