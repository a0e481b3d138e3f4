"""CronJobSimulator: Jobs from a CronJob's jobTemplate, on its schedule, in clock time.

At each scheduled time (builtin/cron.py, kube's parser; `spec.timeZone` or a `TZ=` prefix
honoured, UTC by default) after `status.lastScheduleTime` (or the creation time) a Job
`<cronjob>-<minutes since epoch>` is
created from `spec.jobTemplate` (controller-owned, annotation
`batch.kubernetes.io/cronjob-scheduled-timestamp`); only the most recent missed time runs,
and not at all once `startingDeadlineSeconds` has passed. concurrencyPolicy: Allow, Forbid
(skip while a Job is active), Replace (delete the active ones first). `spec.suspend` stops
new runs. Status: lastScheduleTime, lastSuccessfulTime, active (object references). Finished
Jobs beyond successfulJobsHistoryLimit (3) / failedJobsHistoryLimit (1) are deleted, oldest
first. A clock timer wakes the CronJob at its next time. Invariant: one Job per scheduled
time (its name is derived from the time, so a replay hits AlreadyExists). Set-up, event
routing and resync: `OwnerSimulator` (workload.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from asyncop.api import AlreadyExists, NotFound
from asyncop.apiserver.builtin.cron import next_after, parse_schedule
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    as_int,
    controller_uid,
    deleting,
    name_of,
    ns_of,
    owner_ref,
    uid_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.apiserver.simulators.jobs import finished
from asyncop.apiserver.simulators.workload import OwnerSimulator
from asyncop.clock import Clock, Timer, format_time

SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_MAX_MISSED = 1000  # scheduled times walked when catching up (the latest one runs)


def _parse_time(text: Any) -> datetime | None:
    try:
        return datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _zone(name: Any) -> tzinfo:
    if not name:
        return UTC
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def _ref(job: Obj) -> dict[str, Any]:
    meta = job["metadata"]
    return {"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"],
            "namespace": meta.get("namespace", ""), "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", "")}


class CronJobSimulator(OwnerSimulator):
    name = "cronjobs"
    owner_kind = "CronJob"
    owner = ("batch", "v1", "cronjobs")
    child = ("batch", "v1", "jobs")

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, config)
        self._timers: dict[str, Timer] = {}

    def forget(self, owner: Obj) -> None:
        timer = self._timers.pop(uid_of(owner), None)
        if timer is not None:
            timer.cancel()

    async def sync(self, key: tuple[str, str]) -> None:
        ns, name = key
        cj = self.live_owner(key)
        if cj is None:
            return
        spec = cj.get("spec") or {}
        status = dict(cj.get("status") or {})
        uid = uid_of(cj)
        jobs = [j for j in self.store.list(self.child_rt, ns) if controller_uid(j) == uid]
        active = [j for j in jobs if not finished(j) and not deleting(j)]
        try:
            schedule = parse_schedule(str(spec.get("schedule", "")))
        except ValueError as err:
            self.log.warning("cronjob schedule invalid", namespace=ns, name=name,
                             error=str(err))
            schedule = None
        zone = _zone(spec.get("timeZone") or (schedule.zone if schedule else None))
        now = self.clock.now().astimezone(zone)
        due = None
        if schedule is not None and not spec.get("suspend"):
            last = _parse_time(status.get("lastScheduleTime")) or _parse_time(
                cj["metadata"].get("creationTimestamp")) or now
            t = next_after(schedule, last.astimezone(zone))
            for _ in range(_MAX_MISSED):
                if t is None or t > now:
                    break
                due = t
                t = next_after(schedule, t)
            self._wake_at_next(cj, key, t, now)
        if due is not None:
            deadline = spec.get("startingDeadlineSeconds")
            late = isinstance(deadline, int) and (now - due).total_seconds() > deadline
            policy = spec.get("concurrencyPolicy", "Allow")
            if not late and active and policy == "Forbid":
                due = None  # retried when the active Job finishes
            elif not late:
                if active and policy == "Replace":
                    for job in active:
                        await self._delete(ns, name_of(job))
                    active = []
                active.append(await self._run(cj, due))
            if due is not None:
                status["lastScheduleTime"] = format_time(due)
        done = [j for j in jobs if finished(j) == "Complete"]
        times = [str((j.get("status") or {}).get("completionTime") or "") for j in done]
        if any(times):
            status["lastSuccessfulTime"] = max(times)
        status["active"] = [_ref(j) for j in active]
        if not status["active"]:
            del status["active"]
        await self._prune(ns, spec, jobs)
        await self.write_status(cj, status)

    def _wake_at_next(self, cj: Obj, key: tuple[str, str], t: datetime | None,
                      now: datetime) -> None:
        timer = self._timers.pop(uid_of(cj), None)
        if timer is not None:
            timer.cancel()
        if t is not None:
            delay = (t - now).total_seconds()
            self._timers[uid_of(cj)] = self.clock.call_later(delay, lambda: self.add(key))

    async def _run(self, cj: Obj, when: datetime) -> Obj:
        template = (cj.get("spec") or {}).get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        name = f"{name_of(cj)}-{int(when.timestamp()) // 60}"
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": name, "namespace": ns_of(cj),
                            "labels": dict(tmeta.get("labels") or {}),
                            "annotations": {**(tmeta.get("annotations") or {}),
                                            SCHEDULED: format_time(when)},
                            "ownerReferences": [owner_ref(cj, "batch/v1", "CronJob")]},
               "spec": template.get("spec") or {}}
        try:
            return await self.store.create(self.child_rt, job, namespace=ns_of(cj))
        except AlreadyExists:
            existing = self.store.get(self.child_rt, ns_of(cj), name)
            return existing if existing is not None else job

    async def _prune(self, ns: str, spec: dict[str, Any], jobs: list[Obj]) -> None:
        for outcome, field, default in (("Complete", "successfulJobsHistoryLimit", 3),
                                        ("Failed", "failedJobsHistoryLimit", 1)):
            limit = as_int(spec.get(field), default)
            ended = sorted((j for j in jobs if finished(j) == outcome and not deleting(j)),
                           key=lambda j: (str(j["metadata"].get("creationTimestamp") or ""),
                                          name_of(j)))
            for job in ended[: max(len(ended) - limit, 0)]:
                await self._delete(ns, name_of(job))

    async def _delete(self, ns: str, name: str) -> None:
        try:
            await self.store.delete(self.child_rt, ns, name, propagation_policy="Background")
        except NotFound:
            pass
