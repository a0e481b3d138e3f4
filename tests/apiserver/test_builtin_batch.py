"""batch/v1 as kube-apiserver 1.33 validates and defaults it (builtin/batch.py,
jobpolicies.py, cronjobs.py, cron.py).

Refused cases name the kube function whose message they pin (pkg/apis/batch/validation
unless said otherwise) and list every cause in kube's order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asyncop.apiserver import Store
from tests.apiserver.podkit import (
    Obj,
    causes,
    container,
    create,
    edit,
    job,
    new_store,
    rejected,
    unique,
    update,
)

NEGATIVE = "must be greater than or equal to 0"
RESTART = "spec.template.spec.restartPolicy"
PFP = "spec.podFailurePolicy.rules"
SUCCESS = "spec.successPolicy.rules"
CJ_RESTART = "spec.jobTemplate.spec.template.spec.restartPolicy"


@pytest.fixture(scope="module")
def store() -> Store:
    return new_store()


def restart(policy: str | None, **spec: Any) -> Obj:
    """A Job whose pods restart `policy` (None: not set)."""
    def change(o: Obj) -> None:
        pod = o["spec"]["template"]["spec"]
        pod.pop("restartPolicy")
        if policy is not None:
            pod["restartPolicy"] = policy
    return edit(job(**spec), change)


def labelled(obj: Obj, labels: dict[str, str]) -> Obj:
    return edit(obj, lambda o: o["spec"]["template"].update(metadata={"labels": labels}))


def cronjob(name: str | None = None, **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name or unique("cj"), "namespace": "default"},
            "spec": {"schedule": "*/5 * * * *",
                     "jobTemplate": {"spec": {"template": {"spec": {
                         "restartPolicy": "OnFailure", "containers": [container()]}}}},
                     **spec}}


def job_template(change: Callable[[Obj], Any], **spec: Any) -> Obj:
    """A CronJob whose jobTemplate.spec is changed by `change`."""
    return edit(cronjob(**spec), lambda o: change(o["spec"]["jobTemplate"]["spec"]))


EXIT_CODES = {"operator": "In", "values": [1]}

JOB_REFUSED: list[tuple[str, Callable[[], Obj], list[tuple[str, str]]]] = [
    # validateJobSpec: kube defaults restartPolicy Always like any pod spec, then refuses it
    ("restartPolicy Always", lambda: restart("Always"),
     [(RESTART, 'Required value: valid values: "OnFailure", "Never"')]),
    ("restartPolicy absent", lambda: restart(None),
     [(RESTART, 'Required value: valid values: "OnFailure", "Never"')]),
    # the pod spec's validateRestartPolicy reports it first, then the Job's own list
    ("restartPolicy unknown", lambda: restart("Sometimes"),
     [(RESTART, 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", '
       '"Never"'),
      (RESTART, 'Unsupported value: "Sometimes": supported values: "OnFailure", "Never"')]),
    ("negative counts", lambda: job(completions=-1, parallelism=-2, backoffLimit=-3,
                                    activeDeadlineSeconds=-4, ttlSecondsAfterFinished=-5),
     [("spec.parallelism", f"Invalid value: -2: {NEGATIVE}"),
      ("spec.completions", f"Invalid value: -1: {NEGATIVE}"),
      ("spec.activeDeadlineSeconds", f"Invalid value: -4: {NEGATIVE}"),
      ("spec.backoffLimit", f"Invalid value: -3: {NEGATIVE}"),
      ("spec.ttlSecondsAfterFinished", f"Invalid value: -5: {NEGATIVE}")]),
    ("template container", lambda: job(template={"spec": {
        "restartPolicy": "Never", "containers": [container(image="")]}}),
     [("spec.template.spec.containers[0].image", "Required value")]),
    # ValidateJobSpec: a manual selector must exist and select the template's labels
    ("manual selector missing", lambda: job(manualSelector=True),
     [("spec.selector", "Required value"),
      ("spec.template.metadata.labels", "Invalid value: map[string]string(nil): `selector` "
       "does not match template `labels`")]),
    ("manual selector not matching",
     lambda: labelled(job(manualSelector=True, selector={"matchLabels": {"app": "batch"}}),
                      {"app": "other"}),
     [("spec.template.metadata.labels", 'Invalid value: map[string]string{"app":"other"}: '
       "`selector` does not match template `labels`")]),
    ("managedBy", lambda: job(managedBy="kueue"),
     [("spec.managedBy", 'Invalid value: "kueue": must be a domain-prefixed path (such as '
       '"acme.io/foo")')]),
    # completionMode
    ("completionMode", lambda: job(completionMode="Fancy"),
     [("spec.completionMode", 'Unsupported value: "Fancy": supported values: "NonIndexed", '
       '"Indexed"')]),
    ("per-index backoff without Indexed", lambda: job(backoffLimitPerIndex=1),
     [("spec.backoffLimitPerIndex", "Invalid value: 1: requires indexed completion mode")]),
    ("maxFailedIndexes without per-index backoff",
     lambda: job(completionMode="Indexed", completions=3, maxFailedIndexes=1),
     [("spec.backoffLimitPerIndex", "Required value: when maxFailedIndexes is specified")]),
    ("maxFailedIndexes over completions", lambda: job(
        completionMode="Indexed", completions=3, backoffLimitPerIndex=1, maxFailedIndexes=5),
     [("spec.maxFailedIndexes", "Invalid value: 5: must be less than or equal to "
       "completions")]),
    ("indexed parallelism", lambda: job(completionMode="Indexed", completions=5,
                                        parallelism=100_001),
     [("spec.parallelism", "Invalid value: 100001: must be less than or equal to 100000 when "
       "completion mode is Indexed")]),
    # ValidateJob: the last index's pod hostname must be a DNS label
    ("indexed name too long", lambda: job("x" * 62, completionMode="Indexed", completions=10),
     [("metadata.name", f'Invalid value: "{"x" * 62}": will not able to create pod with '
       f"invalid DNS label: {'x' * 62}-9")]),
    # validatePodFailurePolicyRule and its requirements
    ("pod failure policy with OnFailure", lambda: edit(
        job(podFailurePolicy={"rules": [{"action": "FailJob", "onExitCodes": EXIT_CODES}]}),
        lambda o: o["spec"]["template"]["spec"].update(restartPolicy="OnFailure")),
     [(RESTART, 'Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy '
       "is specified")]),
    ("rule action", lambda: job(podFailurePolicy={"rules": [{"action": "Boom"}]}),
     [(f"{PFP}[0].action", 'Unsupported value: "Boom": supported values: "Count", '
       '"FailIndex", "FailJob", "Ignore"'),
      (f"{PFP}[0]", "Invalid value: specifying one of OnExitCodes and OnPodConditions is "
       "required")]),
    ("rule without action", lambda: job(podFailurePolicy={"rules": [
        {"onExitCodes": EXIT_CODES}]}),
     [(f"{PFP}[0].action", 'Required value: valid values: ["Count" "FailIndex" "FailJob" '
       '"Ignore"]')]),
    ("FailIndex without per-index backoff", lambda: job(podFailurePolicy={"rules": [
        {"action": "FailIndex", "onExitCodes": EXIT_CODES}]}),
     [(f"{PFP}[0].action", 'Invalid value: "FailIndex": requires the backoffLimitPerIndex to '
       "be set")]),
    ("exit codes", lambda: job(podFailurePolicy={"rules": [{"action": "Count", "onExitCodes": {
        "containerName": "x", "operator": "In", "values": [0, 3, 3, 1]}}]}),
     [(f"{PFP}[0].onExitCodes.containerName", 'Invalid value: "x": must be one of the '
       "container or initContainer names in the pod template"),
      (f"{PFP}[0].onExitCodes.values[0]", "Invalid value: 0: must not be 0 for the In "
       "operator"),
      (f"{PFP}[0].onExitCodes.values[2]", "Duplicate value: 3"),
      (f"{PFP}[0].onExitCodes.values", "Invalid value: []int32{0, 3, 3, 1}: must be "
       "ordered")]),
    ("exit codes operator and values", lambda: job(podFailurePolicy={"rules": [
        {"action": "Ignore", "onExitCodes": {"values": []}}]}),
     [(f"{PFP}[0].onExitCodes.operator", 'Required value: valid values: ["In" "NotIn"]'),
      (f"{PFP}[0].onExitCodes.values", "Invalid value: []int32{}: at least one value is "
       "required")]),
    ("both requirements", lambda: job(podFailurePolicy={"rules": [{
        "action": "Ignore", "onExitCodes": EXIT_CODES,
        "onPodConditions": [{"type": "bad type", "status": "Maybe"}]}]}),
     [(f"{PFP}[0].onPodConditions[0].type", 'Invalid value: "bad type": name part must '
       "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
       "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
      (f"{PFP}[0].onPodConditions[0].status", 'Unsupported value: "Maybe": supported values: '
       '"False", "True", "Unknown"'),
      (f"{PFP}[0]", "Invalid value: specifying both OnExitCodes and OnPodConditions is not "
       "supported")]),
    ("too many rules", lambda: job(podFailurePolicy={"rules": [
        {"action": "Ignore", "onExitCodes": EXIT_CODES}] * 21}),
     [(PFP, "Too many: 21: must have at most 20 items")]),
    # validatePodReplacementPolicy: only Failed with a pod failure policy
    ("replacement policy", lambda: job(
        podReplacementPolicy="TerminatingOrFailed",
        podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [
            {"type": "DisruptionTarget"}]}]}),
     [("spec.podReplacementPolicy", 'Unsupported value: "TerminatingOrFailed": supported '
       'values: "Failed"')]),
    # validateSuccessPolicy / validateSuccessPolicyRule / validateIndexesFormat
    ("success policy without Indexed", lambda: job(successPolicy={"rules": [
        {"succeededCount": 1}]}),
     [("spec.successPolicy", "Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicy"
       "Rule{batch.SuccessPolicyRule{SucceededIndexes:(*string)(nil), SucceededCount:1}}}: "
       "requires indexed completion mode")]),
    ("success policy rules", lambda: job(completionMode="Indexed", completions=5,
                                         successPolicy={"rules": []}),
     [(SUCCESS, "Required value: at least one rules must be specified when the successPolicy "
       "is specified")]),
    ("success rule", lambda: job(completionMode="Indexed", completions=5, successPolicy={
        "rules": [{"succeededIndexes": "0-2,4-3", "succeededCount": 9}, {}]}),
     [(f"{SUCCESS}[0].succeededIndexes", 'Invalid value: "0-2,4-3": error parsing '
       "succeededIndexes: non-increasing order, previous: 4, current: 3"),
      (f"{SUCCESS}[0].succeededCount", "Invalid value: 9: must be less than or equal to 5 (the "
       "number of specified completions)"),
      # a failed parse counts no indexes, so the count also exceeds them (kube does the same)
      (f"{SUCCESS}[0].succeededCount", "Invalid value: 9: must be less than or equal to 0 (the "
       "number of indexes in the specified succeededIndexes field)"),
      (f"{SUCCESS}[1]", "Required value: at least one of succeededCount or succeededIndexes "
       "must be specified")]),
    ("succeeded indexes", lambda: job(completionMode="Indexed", completions=5, successPolicy={
        "rules": [{"succeededIndexes": "1-2-3"}, {"succeededIndexes": "x"},
                  {"succeededIndexes": "7"}, {"succeededIndexes": "0-2", "succeededCount": 4}]}),
     [(f"{SUCCESS}[0].succeededIndexes", 'Invalid value: "1-2-3": error parsing '
       'succeededIndexes: the fragment "1-2-3" violates the requirement that an index '
       "interval can have at most two parts separated by '-'"),
      (f"{SUCCESS}[1].succeededIndexes", 'Invalid value: "x": error parsing succeededIndexes: '
       'cannot convert string to integer for index: "x"'),
      (f"{SUCCESS}[2].succeededIndexes", 'Invalid value: "7": error parsing succeededIndexes: '
       'too large index: "7"'),
      (f"{SUCCESS}[3].succeededCount", "Invalid value: 4: must be less than or equal to 3 (the "
       "number of indexes in the specified succeededIndexes field)")]),
]


@pytest.mark.parametrize(("build", "expected"), [(b, e) for _, b, e in JOB_REFUSED],
                         ids=[i for i, _, _ in JOB_REFUSED])
def test_refused_jobs(store: Store, build: Callable[[], Obj],
                      expected: list[tuple[str, str]]) -> None:
    status = rejected(store, build())
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert causes(status) == expected


JOB_ACCEPTED: list[tuple[str, Callable[[], Obj]]] = [
    ("plain", job),
    ("OnFailure", lambda: restart("OnFailure")),
    ("manual selector", lambda: labelled(job(manualSelector=True, selector={
        "matchLabels": {"app": "batch"}}), {"app": "batch"})),
    ("work queue", lambda: job(parallelism=4)),
    ("indexed with success policy", lambda: job(
        completionMode="Indexed", completions=10, parallelism=3,
        successPolicy={"rules": [{"succeededIndexes": "0,2-5", "succeededCount": 3}]})),
    ("per-index backoff", lambda: job(completionMode="Indexed", completions=4,
                                      backoffLimitPerIndex=1, maxFailedIndexes=2,
                                      podFailurePolicy={"rules": [
                                          {"action": "FailIndex", "onExitCodes": EXIT_CODES}]})),
    ("pod failure policy", lambda: job(podFailurePolicy={"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
        {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "NotIn",
                                              "values": [0, 42]}}]})),
    ("managed by", lambda: job(managedBy="kueue.x-k8s.io/multikueue")),
    ("ttl and deadline", lambda: job(ttlSecondsAfterFinished=100, activeDeadlineSeconds=600)),
]


@pytest.mark.parametrize("build", [b for _, b in JOB_ACCEPTED], ids=[i for i, _ in JOB_ACCEPTED])
def test_accepted_jobs(store: Store, build: Callable[[], Obj]) -> None:
    create(store, build())


def test_job_defaults_and_generated_selector(store: Store) -> None:
    """SetDefaults_Job, and the Job strategy's generateSelector: four labels on the template
    (name and uid, legacy and prefixed) and a selector on the uid; the Job's own labels are
    the template's when it has none."""
    stored = create(store, labelled(job("pi"), {"app": "pi"}))
    uid, spec = stored["metadata"]["uid"], stored["spec"]
    assert stored["metadata"]["labels"] == {"app": "pi"}
    assert spec["template"]["metadata"]["labels"] == {
        "app": "pi", "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid, "batch.kubernetes.io/controller-uid": uid}
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert {k: spec[k] for k in ("completions", "parallelism", "backoffLimit", "completionMode",
                                 "suspend", "podReplacementPolicy", "manualSelector")} == {
        "completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
        "suspend": False, "podReplacementPolicy": "TerminatingOrFailed",
        "manualSelector": False}
    queue = create(store, job(parallelism=3))["spec"]
    assert "completions" not in queue and queue["parallelism"] == 3
    per_index = create(store, job(completionMode="Indexed", completions=2,
                                  backoffLimitPerIndex=1))["spec"]
    assert per_index["backoffLimit"] == 2**31 - 1
    with_policy = create(store, job(podFailurePolicy={"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}))["spec"]
    assert with_policy["podReplacementPolicy"] == "Failed"
    assert with_policy["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"


def test_selector_not_generated_when_set(store: Store) -> None:
    """validateGeneratedSelector: a selector the user wrote without manualSelector must be
    the generated one; kube adds the uid to it and refuses the result."""
    status = rejected(store, job("mine", selector={"matchLabels": {"app": "batch"}}))
    fields = [field for field, _ in causes(status)]
    assert fields == ["spec.selector", "spec.template.metadata.labels"]
    assert causes(status)[0][1].endswith("`selector` not auto-generated")
    assert 'MatchLabels:map[string]string{"app":"batch", "batch.kubernetes.io/controller-uid":' \
        in causes(status)[0][1]


def test_job_updates(store: Store) -> None:
    """ValidateJobSpecUpdate: completions, selector and template are immutable; parallelism
    is not; an Indexed Job's completions change in tandem with parallelism (elastic)."""
    stored = create(store, job())
    image = rejected(store, edit(stored, lambda o: o["spec"]["template"]["spec"]["containers"][0]
                                 .update(image="busybox")), old=True)
    assert [f for f, _ in causes(image)] == ["spec.template"]
    assert causes(image)[0][1].endswith(": field is immutable")
    assert causes(rejected(store, edit(stored, lambda o: o["spec"].update(completions=2)),
                           old=True)) == [("spec.completions", "Invalid value: 2: field is "
                                           "immutable")]
    assert update(store, edit(stored, lambda o: o["spec"].update(parallelism=5)))[
        "spec"]["parallelism"] == 5
    indexed = create(store, job(completionMode="Indexed", completions=3, parallelism=3))
    grown = update(store, edit(indexed, lambda o: o["spec"].update(completions=5,
                                                                  parallelism=5)))
    assert grown["spec"]["completions"] == 5
    assert causes(rejected(store, edit(grown, lambda o: o["spec"].update(completions=6)),
                           old=True)) == [("spec.completions", "Invalid value: 6: can only be "
                                           "modified in tandem with spec.parallelism")]


def test_update_reports_spec_errors_twice(store: Store) -> None:
    """The Job strategy's ValidateUpdate runs ValidateJob and ValidateJobUpdate, both of which
    validate the spec: the causes repeat, the message (ToAggregate) names each once."""
    stored = create(store, job())
    status = rejected(store, edit(stored, lambda o: o["spec"].update(parallelism=-1)), old=True)
    assert causes(status) == [("spec.parallelism", f"Invalid value: -1: {NEGATIVE}")] * 2
    assert status["message"].endswith(f"is invalid: spec.parallelism: Invalid value: -1: "
                                      f"{NEGATIVE}")


def test_suspended_job_scheduling_directives(store: Store) -> None:
    """A Job suspended before it started may change its template's node selector,
    tolerations, node affinity, labels and annotations, nothing else."""
    stored = create(store, job(suspend=True))

    def directives(o: Obj) -> None:
        o["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "batch"}
        o["spec"]["template"]["spec"]["tolerations"] = [{"key": "batch", "operator": "Exists"}]
        o["spec"]["template"]["metadata"]["annotations"] = {"queue": "a"}

    moved = update(store, edit(stored, directives))
    assert moved["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "batch"}
    image = edit(moved, lambda o: o["spec"]["template"]["spec"]["containers"][0]
                 .update(image="busybox"))
    assert [f for f, _ in causes(rejected(store, image, old=True))] == ["spec.template"]
    running = create(store, job())
    assert [f for f, _ in causes(rejected(store, edit(running, directives), old=True))] == [
        "spec.template"]


# --- CronJob -----------------------------------------------------------------------------------

def schedule_error(schedule: str, message: str) -> list[tuple[str, str]]:
    return [("spec.schedule", f'Invalid value: "{schedule}": {message}')]


CRONJOB_REFUSED: list[tuple[str, Callable[[], Obj], list[tuple[str, str]]]] = [
    # validateScheduleFormat: robfig/cron's ParseStandard errors, word for word
    ("minute out of range", lambda: cronjob(schedule="61 * * * *"),
     schedule_error("61 * * * *", "end of range (61) above maximum (59): 61")),
    ("day of week 7", lambda: cronjob(schedule="0 0 * * 7"),
     schedule_error("0 0 * * 7", "end of range (7) above maximum (6): 7")),
    ("four fields", lambda: cronjob(schedule="* * * *"),
     schedule_error("* * * *", "expected exactly 5 fields, found 4: [* * * *]")),
    ("words", lambda: cronjob(schedule="every minute"),
     schedule_error("every minute", "expected exactly 5 fields, found 2: [every minute]")),
    ("zero step", lambda: cronjob(schedule="*/0 * * * *"),
     schedule_error("*/0 * * * *", "step of range should be a positive number: */0")),
    ("reversed range", lambda: cronjob(schedule="5-2 * * * *"),
     schedule_error("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2")),
    ("bad @every", lambda: cronjob(schedule="@every 1x"),
     schedule_error("@every 1x", 'failed to parse duration @every 1x: time: invalid duration '
                    '"1x"')),
    ("TZ in schedule", lambda: cronjob(schedule="TZ=UTC 0 * * * *"),
     schedule_error("TZ=UTC 0 * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone "
                    "field instead")),
    ("unknown CRON_TZ", lambda: cronjob(schedule="CRON_TZ=Nowhere/X 0 * * * *"),
     schedule_error("CRON_TZ=Nowhere/X 0 * * * *", "provided bad location Nowhere/X: unknown "
                    "time zone Nowhere/X")
     + schedule_error("CRON_TZ=Nowhere/X 0 * * * *", "cannot use TZ or CRON_TZ in schedule, "
                      "use timeZone field instead")),
    ("empty schedule", lambda: cronjob(schedule=""), [("spec.schedule", "Required value")]),
    # validateTimeZone
    ("unknown time zone", lambda: cronjob(timeZone="Mars/Olympus"),
     [("spec.timeZone", 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus')]),
    ("time zone with bad characters", lambda: cronjob(timeZone="Europe/Paris 2"),
     [("spec.timeZone", 'Invalid value: "Europe/Paris 2": unknown time zone Europe/Paris 2')]),
    ("Local time zone", lambda: cronjob(timeZone="Local"),
     [("spec.timeZone", 'Invalid value: "Local": timeZone must be an explicit time zone as '
       "defined in https://www.iana.org/time-zones")]),
    # EqualFold "Local", then time.LoadLocation, which only knows "Local" spelled so
    ("local time zone", lambda: cronjob(timeZone="local"),
     [("spec.timeZone", 'Invalid value: "local": timeZone must be an explicit time zone as '
       "defined in https://www.iana.org/time-zones"),
      ("spec.timeZone", 'Invalid value: "local": unknown time zone local')]),
    ("empty time zone", lambda: cronjob(timeZone=""),
     [("spec.timeZone", 'Invalid value: "": timeZone must be nil or non-empty string')]),
    # validateConcurrencyPolicy
    ("concurrencyPolicy", lambda: cronjob(concurrencyPolicy="Sometimes"),
     [("spec.concurrencyPolicy", 'Unsupported value: "Sometimes": supported values: "Allow", '
       '"Forbid", "Replace"')]),
    # ValidateJobTemplateSpec: validateJobSpec, a selector is generated per Job
    ("jobTemplate restartPolicy",
     lambda: job_template(lambda s: s["template"]["spec"].pop("restartPolicy")),
     [(CJ_RESTART, 'Required value: valid values: "OnFailure", "Never"')]),
    ("jobTemplate selector", lambda: job_template(lambda s: s.update(
        selector={"matchLabels": {"a": "b"}}, manualSelector=True)),
     [("spec.jobTemplate.spec.selector", 'Invalid value: v1.LabelSelector{MatchLabels:'
       'map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
       "`selector` will be auto-generated"),
      ("spec.jobTemplate.spec.manualSelector", 'Unsupported value: true: supported values: '
       '"nil", "false"')]),
    ("jobTemplate counts", lambda: job_template(lambda s: s.update(backoffLimit=-1)),
     [("spec.jobTemplate.spec.backoffLimit", f"Invalid value: -1: {NEGATIVE}")]),
    ("negative limits", lambda: cronjob(startingDeadlineSeconds=-1,
                                        successfulJobsHistoryLimit=-2,
                                        failedJobsHistoryLimit=-3),
     [("spec.startingDeadlineSeconds", f"Invalid value: -1: {NEGATIVE}"),
      ("spec.successfulJobsHistoryLimit", f"Invalid value: -2: {NEGATIVE}"),
      ("spec.failedJobsHistoryLimit", f"Invalid value: -3: {NEGATIVE}")]),
    # ValidateCronJobCreate: 52 characters leave room for the Jobs' 11-character suffix
    ("53-character name", lambda: cronjob("a" * 53),
     [("metadata.name", f'Invalid value: "{"a" * 53}": must be no more than 52 characters')]),
]


@pytest.mark.parametrize(("build", "expected"), [(b, e) for _, b, e in CRONJOB_REFUSED],
                         ids=[i for i, _, _ in CRONJOB_REFUSED])
def test_refused_cronjobs(store: Store, build: Callable[[], Obj],
                          expected: list[tuple[str, str]]) -> None:
    status = rejected(store, build())
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert causes(status) == expected


CRONJOB_ACCEPTED: list[tuple[str, Callable[[], Obj]]] = [
    ("every five minutes", cronjob),
    ("@hourly", lambda: cronjob(schedule="@hourly")),
    ("@every", lambda: cronjob(schedule="@every 1h30m")),
    ("names", lambda: cronjob(schedule="0 9 * JAN-MAR MON-FRI")),
    ("question mark", lambda: cronjob(schedule="0 0 ? * *")),
    ("time zone", lambda: cronjob(timeZone="Europe/Paris")),
    ("UTC", lambda: cronjob(timeZone="Etc/UTC")),
    ("52-character name", lambda: cronjob("b" * 52)),
    ("Forbid", lambda: cronjob(concurrencyPolicy="Forbid", suspend=True,
                               startingDeadlineSeconds=200)),
    ("Never", lambda: job_template(lambda s: s["template"]["spec"].update(
        restartPolicy="Never"), successfulJobsHistoryLimit=0)),
]


@pytest.mark.parametrize("build", [b for _, b in CRONJOB_ACCEPTED],
                         ids=[i for i, _ in CRONJOB_ACCEPTED])
def test_accepted_cronjobs(store: Store, build: Callable[[], Obj]) -> None:
    create(store, build())


def test_cronjob_defaults(store: Store) -> None:
    """SetDefaults_CronJob; the job template gets pod defaults, not the Job's (those come
    when the controller creates a Job)."""
    spec = create(store, cronjob())["spec"]
    assert {k: spec[k] for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                 "failedJobsHistoryLimit")} == {
        "concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1}
    job_spec = spec["jobTemplate"]["spec"]
    assert "backoffLimit" not in job_spec and "selector" not in job_spec
    assert job_spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


def test_cronjob_update_validates_schedule(store: Store) -> None:
    """ValidateCronJobUpdate checks the new schedule (and refuses a TZ the old one lacked)."""
    stored = create(store, cronjob())
    assert causes(rejected(store, edit(stored, lambda o: o["spec"].update(schedule="0 25 * * *")),
                           old=True)) == schedule_error(
        "0 25 * * *", "end of range (25) above maximum (23): 25")
    assert causes(rejected(store, edit(stored, lambda o: o["spec"].update(
        schedule="TZ=UTC 0 0 * * *")), old=True)) == schedule_error(
        "TZ=UTC 0 0 * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    moved = update(store, edit(stored, lambda o: o["spec"].update(schedule="0 3 * * *",
                                                                  timeZone="Asia/Tokyo")))
    assert moved["spec"]["timeZone"] == "Asia/Tokyo"


def test_a_too_long_managed_by_is_worded_as_apimachinery_033_words_too_long(
        store: Store) -> None:
    """kube: ValidateJobSpec's managedBy length check is field.TooLongMaxLength, which
    apimachinery v0.33 made an alias of TooLong: `Too long: may not be more than 63 bytes`
    (v0.31 said `must have at most 63 bytes`)."""
    status = rejected(store, job(managedBy="example.com/" + "m" * 60))
    assert ("spec.managedBy", "Too long: may not be more than 63 bytes") in causes(status)
