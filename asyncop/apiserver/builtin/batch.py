"""batch/v1 Job: kube's defaults (pkg/apis/batch/v1/defaults.go), the Job strategy's
generated selector (pkg/registry/batch/job) and validation (pkg/apis/batch/validation);
`job_spec` is shared with CronJobs' job templates (`cronjobs.py`).

A Job's pod template must restart `OnFailure` or `Never` (kube defaults it to `Always` like
every pod spec and then refuses it: `Required value: valid values: "OnFailure", "Never"`).
Unless `manualSelector` is true, kube labels the template with the Job's name and uid
(`batch.kubernetes.io/job-name`, `job-name`, `batch.kubernetes.io/controller-uid`,
`controller-uid`) and selects on `batch.kubernetes.io/controller-uid`; the uid only exists
once the object is named, so that happens here when the Job is validated on create (the
one mutation a validator makes; kube's strategy does it just before). Selector, template
(bar the scheduling directives of a suspended Job that never started), completions (unless
an elastic indexed Job), completionMode and the policies are immutable.
Invariant: defaults fill only absent fields; validators never mutate `old`.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import (
    IMMUTABLE_MSG,
    byte_len,
    is_dns1123_label,
    is_dns1123_subdomain,
)
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    each,
    invalid,
    label_selector,
    nonnegative,
    not_supported,
    required,
    selector_matches,
    spec_of,
    too_long_max,
)
from asyncop.apiserver.builtin.gofmt import Raw, go_label_selector, go_string_map
from asyncop.apiserver.builtin.jobpolicies import completion_mode, policies
from asyncop.apiserver.builtin.poddefaults import template_defaults
from asyncop.apiserver.builtin.podspec import pod_template
from asyncop.apiserver.builtin.workloads import selector_parses

JOBS = ("batch", "jobs")
JOB_NAME = "batch.kubernetes.io/job-name"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
_LEGACY_NAME, _LEGACY_UID = "job-name", "controller-uid"
_MAX_INT32 = 2**31 - 1
_HTTP_PATH = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"


# --- defaults ----------------------------------------------------------------------------------

def job_spec_defaults(spec: Obj) -> None:
    """SetDefaults_Job's spec part (1.33): completions/parallelism 1 unless a work queue,
    backoffLimit 6 (MaxInt32 with a per-index limit), NonIndexed, not suspended, pods
    replaced once terminating or failed (once failed with a pod failure policy), no manual
    selector; plus the template's pod defaults (restartPolicy Always included)."""
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit",
                    _MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    policy = spec.get("podFailurePolicy")
    for rule in as_list(as_dict(policy).get("rules")):
        for pattern in as_list(as_dict(rule).get("onPodConditions")):
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    spec.setdefault("podReplacementPolicy",
                    "Failed" if isinstance(policy, dict) else "TerminatingOrFailed")
    spec.setdefault("manualSelector", False)
    template_defaults(spec)


def _job_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    template_labels = as_dict(as_dict(spec.get("template")).get("metadata")).get("labels")
    meta = obj.setdefault("metadata", {})
    if isinstance(template_labels, dict) and isinstance(meta, dict) and not meta.get("labels"):
        meta["labels"] = dict(template_labels)  # SetDefaults_Job: the template's labels
    job_spec_defaults(spec)


def generate_selector(obj: Obj) -> None:
    """The Job strategy's generateSelector: template labels and the uid selector."""
    meta, spec = as_dict(obj.get("metadata")), as_dict(obj.get("spec"))
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    tmeta = template.setdefault("metadata", {})
    if not isinstance(tmeta, dict):
        return
    labels = tmeta.setdefault("labels", {})
    if not isinstance(labels, dict):
        return
    name, uid = as_str(meta.get("name")), as_str(meta.get("uid"))
    for key in (_LEGACY_NAME, JOB_NAME):
        labels.setdefault(key, name)
    for key in (_LEGACY_UID, CONTROLLER_UID):
        labels.setdefault(key, uid)
    selector = spec.setdefault("selector", {})
    if isinstance(selector, dict):
        match = selector.setdefault("matchLabels", {})
        if isinstance(match, dict):
            match.setdefault(CONTROLLER_UID, uid)


# --- Job validation ----------------------------------------------------------------------------

def _has_label(tmeta: Obj, key: str, expected: str) -> Causes:
    """ValidateHasLabel."""
    labels = as_dict(tmeta.get("labels"))
    path = f"spec.template.metadata.labels[{key}]"
    if key not in labels:
        return [required(path, f"must be '{expected}'")]
    if labels[key] != expected:
        return [invalid(path, labels, f"must be '{expected}'")]
    return []


def _generated_selector(obj: Obj, *, prefixed: bool) -> Causes:
    """validateGeneratedSelector."""
    spec = as_dict(obj.get("spec"))
    if spec.get("manualSelector") is True or not isinstance(spec.get("selector"), dict):
        return []
    meta = as_dict(obj.get("metadata"))
    name, uid = as_str(meta.get("name")), as_str(meta.get("uid"))
    out = [] if uid else [required("metadata.uid")]
    tmeta = as_dict(as_dict(spec.get("template")).get("metadata"))
    out += _has_label(tmeta, _LEGACY_UID, uid) + _has_label(tmeta, _LEGACY_NAME, name)
    expected = {_LEGACY_UID: uid, _LEGACY_NAME: name}
    if prefixed:
        out += _has_label(tmeta, CONTROLLER_UID, uid) + _has_label(tmeta, JOB_NAME, name)
        expected.update({CONTROLLER_UID: uid, JOB_NAME: name})
    if not selector_matches(spec["selector"], expected):
        out.append(invalid("spec.selector", go_label_selector(spec["selector"]),
                           "`selector` not auto-generated"))
    return out


def _domain_prefixed_path(value: str, path: str) -> Causes:
    """IsDomainPrefixedPath (a Job's managedBy)."""
    if not value:
        return [required(path)]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    out = each(path, host, is_dns1123_subdomain(host))
    if not re.fullmatch(_HTTP_PATH, rest):
        out.append(invalid(path, rest, f"Invalid path (regex used for validation is "
                                       f"'{_HTTP_PATH}')"))
    return out


def job_spec(spec: Obj, path: str) -> Causes:
    """validateJobSpec (shared by Jobs and CronJobs' job templates)."""
    out: Causes = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                "ttlSecondsAfterFinished", "backoffLimitPerIndex", "maxFailedIndexes"):
        out += nonnegative(spec.get(key), f"{path}.{key}")
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        out.append(required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    managed = spec.get("managedBy")
    if isinstance(managed, str):
        out += _domain_prefixed_path(managed, f"{path}.managedBy")
        if byte_len(managed) > 63:
            out.append(too_long_max(f"{path}.managedBy", 63))
    out += completion_mode(spec, path)
    out += policies(spec, path)
    out += pod_template(spec.get("template"), f"{path}.template")
    restart = as_str(as_dict(as_dict(spec.get("template")).get("spec")).get("restartPolicy"))
    at = f"{path}.template.spec.restartPolicy"
    if restart in ("Always", ""):
        out.append(required(at, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        out.append(not_supported(at, restart, ("OnFailure", "Never")))
    elif isinstance(spec.get("podFailurePolicy"), dict) and restart != "Never":
        out.append(invalid(at, restart, 'only "Never" is supported when podFailurePolicy is '
                           "specified"))
    return out


def _job(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """The Job strategy: ValidateJob on create (the generated selector first, as the
    strategy makes it); on update ValidateJob and then ValidateJobUpdate, which validates
    the spec again (kube reports its errors twice; the message names each once)."""
    spec = as_dict(obj.get("spec"))
    if old is None and spec.get("manualSelector") is not True:
        generate_selector(obj)
    prefixed = old is None or CONTROLLER_UID in as_dict(as_dict(as_dict(
        as_dict(old.get("spec")).get("template")).get("metadata")).get("labels"))
    out = _generated_selector(obj, prefixed=prefixed)
    out += _validate_job_spec(spec, lenient=old is not None)
    out += _indexed_name(obj, spec)
    if old is None:
        return out
    out += _validate_job_spec(spec, lenient=True)
    return out + _job_update(spec, as_dict(old.get("spec")), old)


def _validate_job_spec(spec: Obj, *, lenient: bool) -> Causes:
    """ValidateJobSpec: validateJobSpec plus the selector, which must select the pods'
    labels whenever it parses (a missing one selects none)."""
    out = job_spec(spec, "spec")
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        out.append(required("spec.selector"))
    else:
        out += label_selector(selector, "spec.selector", allow_invalid_values=lenient)
    labels = as_dict(as_dict(spec.get("template")).get("metadata")).get("labels")
    if (not isinstance(selector, dict) or selector_parses(selector)) and not (
            isinstance(selector, dict) and selector_matches(selector, labels)):
        out.append(invalid("spec.template.metadata.labels", Raw(go_string_map(labels)),
                           "`selector` does not match template `labels`"))
    return out


def _indexed_name(obj: Obj, spec: Obj) -> Causes:
    completions = as_int(spec.get("completions"))
    if spec.get("completionMode") != "Indexed" or not completions or completions <= 0:
        return []
    name = as_str(as_dict(obj.get("metadata")).get("name"))
    hostname = f"{name}-{completions - 1}"
    if is_dns1123_label(hostname):
        return [invalid("metadata.name", name, "will not able to create pod with invalid DNS "
                        f"label: {hostname}")]
    return []


def _job_update(spec: Obj, old_spec: Obj, old: Obj) -> Causes:
    """ValidateJobSpecUpdate's immutable fields."""
    out: Causes = []
    elastic = spec.get("completionMode") == "Indexed"
    if spec.get("completions") != old_spec.get("completions"):
        if not elastic:
            out.append(invalid("spec.completions", spec.get("completions"), IMMUTABLE_MSG))
        elif spec.get("completions") is not None and \
                spec.get("completions") != spec.get("parallelism"):
            out.append(invalid("spec.completions", spec.get("completions"),
                               "can only be modified in tandem with spec.parallelism"))
    if spec.get("selector") != old_spec.get("selector"):
        out.append(invalid("spec.selector", go_label_selector(spec.get("selector")),
                           IMMUTABLE_MSG))
    template, old_template = as_dict(spec.get("template")), as_dict(old_spec.get("template"))
    if old_spec.get("suspend") is True and not as_dict(old.get("status")).get("startTime"):
        template, old_template = _without_directives(template), _without_directives(old_template)
    if template != old_template:
        shown = "core.PodTemplateSpec" + orjson.dumps(spec.get("template")).decode()
        out.append(invalid("spec.template", Raw(shown), IMMUTABLE_MSG))
    for key in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
                "successPolicy"):
        if spec.get(key) != old_spec.get(key):
            value = spec.get(key)
            out.append(invalid(f"spec.{key}", value if not isinstance(value, dict) else
                               Raw(orjson.dumps(value).decode()), IMMUTABLE_MSG))
    return out


def _without_directives(template: Obj) -> Obj:
    """A suspended Job that never started may change its template's scheduling directives
    (node affinity, node selector, tolerations, labels, annotations, scheduling gates)."""
    meta = {k: v for k, v in as_dict(template.get("metadata")).items()
            if k not in ("labels", "annotations")}
    spec = {k: v for k, v in as_dict(template.get("spec")).items()
            if k not in ("nodeSelector", "tolerations", "schedulingGates")}
    affinity = {k: v for k, v in as_dict(spec.get("affinity")).items() if k != "nodeAffinity"}
    spec.pop("affinity", None)
    if affinity:
        spec["affinity"] = affinity
    return {**template, "metadata": meta, "spec": spec}


DEFAULTS: dict[tuple[str, str], Any] = {JOBS: _job_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {JOBS: _job}
