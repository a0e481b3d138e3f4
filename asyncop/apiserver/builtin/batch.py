"""batch/v1: Job and CronJob — defaults and validation.

Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.fields import Obj, spec_of
from asyncop.apiserver.builtin.pods import template_defaults

JOBS = ("batch", "jobs")
CRONJOBS = ("batch", "cronjobs")


def job_spec_defaults(spec: Obj) -> None:
    """SetDefaults_Job (server 1.33): completions/parallelism 1 unless a work queue,
    backoffLimit 6, NonIndexed, not suspended, pods replaced once terminated or failed."""
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if not spec.get("podFailurePolicy"):
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    template_defaults(spec, restart_policy=False)


def _job_defaults(obj: Obj, old: Obj | None) -> None:
    job_spec_defaults(spec_of(obj))


def _cronjob_defaults(obj: Obj, old: Obj | None) -> None:
    """SetDefaults_CronJob; the Job template gets pod template defaults only (as in kube,
    where the Job-level defaults are applied when a Job is created from it)."""
    spec = spec_of(obj)
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict) and isinstance(job_template.get("spec"), dict):
        template_defaults(job_template["spec"], restart_policy=False)


DEFAULTS: dict[tuple[str, str], Any] = {JOBS: _job_defaults, CRONJOBS: _cronjob_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {}
