"""batch/v1 CronJob: kube's defaults (SetDefaults_CronJob) and validation
(ValidateCronJobCreate, ValidateCronJobUpdate in pkg/apis/batch/validation).

A CronJob needs a schedule robfig/cron accepts (`cron.py`, kube's parser and its error
text), without `TZ=`/`CRON_TZ=` (kube points to `timeZone`, which must name an IANA zone;
a schedule that already had one may keep it), a concurrencyPolicy of Allow, Forbid or
Replace, non-negative deadlines and history limits, a name of at most 52 characters (the
controller appends an 11-character suffix), and a jobTemplate valid as a Job spec with
neither a selector nor manualSelector. Invariant: defaults fill only absent fields;
validation is pure.
"""

from __future__ import annotations

import re
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from asyncop.api import StatusCause
from asyncop.apiserver.builtin import cron
from asyncop.apiserver.builtin.batch import job_spec
from asyncop.apiserver.builtin.checks import byte_len
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_str,
    invalid,
    nonnegative,
    not_supported,
    required,
    spec_of,
)
from asyncop.apiserver.builtin.gofmt import go_label_selector
from asyncop.apiserver.builtin.poddefaults import template_defaults

CRONJOBS = ("batch", "cronjobs")
_ZONE_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")


def _cronjob_defaults(obj: Obj, old: Obj | None) -> None:
    """SetDefaults_CronJob; the Job template gets pod template defaults only (kube applies
    the Job-level defaults when the controller creates a Job from it)."""
    spec = spec_of(obj)
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict) and isinstance(job_template.get("spec"), dict):
        template_defaults(job_template["spec"])


def _schedule(schedule: str, *, allow_tz: bool, time_zone: Any) -> Causes:
    """validateScheduleFormat."""
    out: Causes = []
    try:
        cron.parse_schedule(schedule)
    except cron.CronError as err:
        out.append(invalid("spec.schedule", schedule, str(err)))
    if allow_tz and "TZ" in schedule and time_zone is not None:
        out.append(invalid("spec.schedule", schedule,
                           "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    elif not allow_tz and "TZ" in schedule:
        out.append(invalid("spec.schedule", schedule,
                           "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    return out


def _time_zone(value: Any) -> Causes:
    """validateTimeZone: an explicit IANA zone name."""
    if not isinstance(value, str):
        return []
    path = "spec.timeZone"
    if not value:
        return [invalid(path, value, "timeZone must be nil or non-empty string")]
    for part in value.split("/"):
        if part in (".", "..") or part.startswith("-") or not _ZONE_PART.match(part):
            return [invalid(path, value, f"unknown time zone {value}")]
    out: Causes = []
    if value.lower() == "local":
        out.append(invalid(path, value, "timeZone must be an explicit time zone as defined in "
                           "https://www.iana.org/time-zones"))
    if value == "Local":  # time.LoadLocation("Local") answers the local zone, no error
        return out
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        out.append(invalid(path, value, f"unknown time zone {value}"))
    return out


def _cronjob(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateCronJobCreate / ValidateCronJobUpdate."""
    spec = as_dict(obj.get("spec"))
    old_spec = as_dict(old.get("spec")) if old is not None else None
    out: Causes = []
    schedule = as_str(spec.get("schedule"))
    if not schedule:
        out.append(required("spec.schedule"))
    else:
        allow_tz = old_spec is not None and "TZ" in as_str(old_spec.get("schedule"))
        out += _schedule(schedule, allow_tz=allow_tz, time_zone=spec.get("timeZone"))
    out += nonnegative(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds")
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        out += _time_zone(spec.get("timeZone"))
    policy = as_str(spec.get("concurrencyPolicy"))
    if not policy:
        out.append(required("spec.concurrencyPolicy"))
    elif policy not in ("Allow", "Forbid", "Replace"):
        out.append(not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid",
                                                                   "Replace")))
    job = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    out += job_spec(job, "spec.jobTemplate.spec")
    if isinstance(job.get("selector"), dict):
        out.append(invalid("spec.jobTemplate.spec.selector", go_label_selector(job["selector"]),
                           "`selector` will be auto-generated"))
    if job.get("manualSelector") is True:
        out.append(not_supported("spec.jobTemplate.spec.manualSelector", True, ("nil", "false")))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        out += nonnegative(spec.get(key), f"spec.{key}")
    name = as_str(as_dict(obj.get("metadata")).get("name"))
    if old is None and byte_len(name) > 52:  # the controller appends an 11-character suffix
        out.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {CRONJOBS: _cronjob_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {CRONJOBS: _cronjob}
