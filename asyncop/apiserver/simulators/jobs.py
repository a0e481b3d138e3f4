"""JobSimulator: the Job controller (batch/v1), enough for Helm hooks and operator tests.

A Job runs pods (`generateName: <job>-`, template labels plus `batch.kubernetes.io/job-name`,
`job-name`, `batch.kubernetes.io/controller-uid`, `controller-uid`; controller-owned) until
`spec.completions` (default 1) have Succeeded, at most `spec.parallelism` (default 1) at a
time; the pod simulator decides when each pod ends (Job pods always run to completion). More
than `spec.backoffLimit` (default 6) Failed pods fail the Job. Status: startTime, active,
ready, succeeded, failed, terminating, completionTime and the conditions kstatus and kubectl
wait read: `SuccessCriteriaMet` + `Complete` (True), or `FailureTarget` + `Failed` (True,
reason BackoffLimitExceeded). `spec.suspend` stops creating pods; `ttlSecondsAfterFinished`
deletes a finished Job (foreground) after that many clock seconds. Not simulated: indexed
completion mode, pod failure policies, activeDeadlineSeconds. Set-up, event routing and
resync: `OwnerSimulator` (workload.py). Invariant: a finished Job is never reconciled again
except for its TTL; status is written only when it changes.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    as_int,
    controller_uid,
    deleting,
    name_of,
    uid_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.apiserver.simulators.workload import OwnerSimulator, pod_from_template, pod_ready
from asyncop.clock import Clock, Timer, format_time

JOB_NAME = "batch.kubernetes.io/job-name"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"


def finished(job: Obj) -> str | None:
    """"Complete" or "Failed" once the Job is done, else None."""
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return str(cond["type"])
    return None


def _cond(ctype: str, reason: str, message: str, when: str) -> dict[str, Any]:
    return {"type": ctype, "status": "True", "lastProbeTime": when,
            "lastTransitionTime": when, "reason": reason, "message": message}


class JobSimulator(OwnerSimulator):
    name = "jobs"
    owner_kind = "Job"
    owner = ("batch", "v1", "jobs")
    child = ("", "v1", "pods")

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, config)
        self._finished_at: dict[str, float] = {}  # job uid -> clock.monotonic() when done
        self._ttl_timers: dict[str, Timer] = {}

    def forget(self, owner: Obj) -> None:
        timer = self._ttl_timers.pop(uid_of(owner), None)
        if timer is not None:
            timer.cancel()
        self._finished_at.pop(uid_of(owner), None)

    async def sync(self, key: tuple[str, str]) -> None:
        ns, name = key
        job = self.live_owner(key)
        if job is None:
            return
        if finished(job):
            await self._expire(job, key)
            return
        spec = job.get("spec") or {}
        uid = uid_of(job)
        pods = [p for p in self.store.list(self.child_rt, ns, label_selector={JOB_NAME: name})
                if controller_uid(p) == uid]
        phases = [(p.get("status") or {}).get("phase") for p in pods]
        succeeded = phases.count("Succeeded")
        failed = phases.count("Failed")
        running = [p for p, ph in zip(pods, phases, strict=True)
                   if ph not in ("Succeeded", "Failed") and not deleting(p)]
        completions = as_int(spec.get("completions"), 1)
        parallelism = as_int(spec.get("parallelism"), 1)
        when = format_time(self.clock.now())
        status = dict(job.get("status") or {})
        status.setdefault("startTime", when)
        conditions = list(status.get("conditions") or ())
        if succeeded >= completions:
            conditions += [_cond("SuccessCriteriaMet", "CompletionsReached",
                                 "Reached expected number of succeeded pods", when),
                           _cond("Complete", "CompletionsReached",
                                 "Reached expected number of succeeded pods", when)]
            status["completionTime"] = when
            running_now: list[Obj] = []
        elif failed > as_int(spec.get("backoffLimit"), 6):
            conditions += [_cond("FailureTarget", "BackoffLimitExceeded",
                                 "Job has reached the specified backoff limit", when),
                           _cond("Failed", "BackoffLimitExceeded",
                                 "Job has reached the specified backoff limit", when)]
            for pod in running:
                await self.store.delete(self.child_rt, ns, name_of(pod))
            running_now = []
        else:
            running_now = running
            if not spec.get("suspend"):
                want = min(parallelism, completions - succeeded)
                for _ in range(want - len(running)):
                    running_now.append(await self.store.create(
                        self.child_rt, self._new_pod(job), namespace=ns))
        status.update({"active": len(running_now), "ready": sum(map(pod_ready, running_now)),
                       "succeeded": succeeded, "failed": failed, "terminating": 0,
                       "uncountedTerminatedPods": {}, "conditions": conditions})
        if not conditions:
            status.pop("conditions")
        job = await self.write_status(job, status)
        if finished(job):
            self._finished_at[uid] = self.clock.monotonic()
            await self._expire(job, key)

    async def _expire(self, job: Obj, key: tuple[str, str]) -> None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if not isinstance(ttl, int):
            return
        uid = uid_of(job)
        done = self._finished_at.setdefault(uid, self.clock.monotonic())
        due = done + ttl
        if self.clock.monotonic() >= due:
            await self.store.delete(self.owner_rt, key[0], key[1], propagation_policy="Foreground")
        elif uid not in self._ttl_timers:
            self._ttl_timers[uid] = self.clock.call_at(due, lambda: self.add(key))

    def _new_pod(self, job: Obj) -> Obj:
        uid, name = uid_of(job), name_of(job)
        pod = pod_from_template(job, api_version="batch/v1", kind="Job", extra_labels={
            JOB_NAME: name, "job-name": name, CONTROLLER_UID: uid, "controller-uid": uid})
        pod["spec"].setdefault("restartPolicy", "Never")
        return pod
