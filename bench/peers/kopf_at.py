"""The At logic of asyncop's `at` controller (asyncop/controllers/at.py) written for kopf:
the benchmark peer.

Run with `kopf run --standalone -A bench/peers/kopf_at.py` (KUBECONFIG set; `--quiet` for
WARNING-level logs). Written the way kopf's documentation writes operators and tuned the way
an expert would for throughput: async handlers, `kopf.TemporaryError(delay=...)` to wait for
the schedule (no polling), no Event per handler outcome (`settings.posting.level = WARNING`)
but the same two Events per At that asyncop's controller posts (PodCreated, Done) through
`kopf.event`, `kopf.adopt()` for ownership, kubernetes_asyncio for the API calls kopf does not
make itself, and the rest of kopf's defaults (progress in annotations, one worker per object).
No asyncop imports: this file is what a kopf user would write.

Flow: a new At is PENDING until its schedule; when due, RUNNING is written (before the pod
exists, so that a fast pod can never be overtaken by a stale RUNNING patch), then the pod
`<name>-pod` is created, owned by the At; the pod's terminal phase marks the At DONE with its
result.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

import kopf
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

GROUP, VERSION, PLURAL = "cnat.programming-kubernetes.info", "v1alpha1", "ats"
MERGE = "application/merge-patch+json"


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def stamp(when: datetime.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_schedule(value: str) -> datetime.datetime:
    when = datetime.datetime.fromisoformat(value.strip().replace("z", "Z"))
    if when.tzinfo is None:
        raise ValueError(f"schedule {value!r} has no time zone")
    return when.astimezone(datetime.UTC)


@kopf.on.startup()
async def connect(memo: kopf.Memo, settings: kopf.OperatorSettings, **_: Any) -> None:
    # Events: only the explicit ones below, not one per handler outcome (kopf's default).
    settings.posting.level = logging.WARNING
    await config.load_kube_config()
    memo.api = client.ApiClient()


@kopf.on.cleanup()
async def disconnect(memo: kopf.Memo, **_: Any) -> None:
    await memo.api.close()


def not_done(status: kopf.Status, **_: Any) -> bool:
    return status.get("phase") != "DONE"


@kopf.on.resume(GROUP, VERSION, PLURAL, when=not_done)
@kopf.on.create(GROUP, VERSION, PLURAL)
async def run_at(
    spec: kopf.Spec, status: kopf.Status, name: str, namespace: str, body: kopf.Body,
    patch: kopf.Patch, memo: kopf.Memo, logger: kopf.Logger, **_: Any,
) -> None:
    phase = status.get("phase") or "PENDING"
    if phase == "DONE":
        return
    if phase == "PENDING":
        try:
            when = parse_schedule(str(spec.get("schedule", "")))
        except ValueError as exc:
            patch.status["phase"] = "PENDING"
            patch.status["message"] = str(exc)
            raise kopf.PermanentError(str(exc)) from None
        remaining = (when - now()).total_seconds()
        if remaining > 0:
            if status.get("phase") != "PENDING":
                patch.status["phase"] = "PENDING"
                patch.status["message"] = f"waiting until {stamp(when)}"
            raise kopf.TemporaryError("the schedule is not due yet", delay=remaining)
        running = {
            "phase": "RUNNING",
            "message": f"running {spec.get('command')!r}",
            "podName": f"{name}-pod",
            "startedAt": stamp(now()),
        }
        await client.CustomObjectsApi(memo.api).patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, name, {"status": running}, _content_type=MERGE)
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-pod", "labels": {"app": name}},
        "spec": {
            "restartPolicy": "OnFailure",
            "containers": [{
                "name": "busybox",
                "image": "busybox",
                "command": ["/bin/sh", "-c", str(spec.get("command", ""))],
            }],
        },
    }
    kopf.adopt(pod, owner=body)
    try:
        await client.CoreV1Api(memo.api).create_namespaced_pod(namespace, pod)
    except ApiException as exc:
        if exc.status != 409:
            raise
    else:
        kopf.event(body, type="Normal", reason="PodCreated",
                   message=f"Schedule is due: created pod {pod['metadata']['name']}")
    logger.info("pod %s created", pod["metadata"]["name"])


def owned_by_at(body: kopf.Body, **_: Any) -> bool:
    return any(ref.get("kind") == "At" and ref.get("controller")
               for ref in body.metadata.get("ownerReferences", []))


@kopf.on.event("", "v1", "pods", labels={"app": kopf.PRESENT}, when=owned_by_at)
async def pod_finished(
    body: kopf.Body, namespace: str, memo: kopf.Memo, logger: kopf.Logger, **_: Any,
) -> None:
    phase = body.get("status", {}).get("phase")
    if phase not in ("Succeeded", "Failed"):
        return
    owner = next(ref for ref in body.metadata["ownerReferences"] if ref.get("kind") == "At")
    done = {
        "phase": "DONE",
        "result": phase,
        "message": f"pod {body.metadata.name} {phase.lower()}",
        "finishedAt": stamp(now()),
    }
    try:
        await client.CustomObjectsApi(memo.api).patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, owner["name"], {"status": done},
            _content_type=MERGE)
    except ApiException as exc:
        if exc.status != 404:  # the At is gone: nothing to record
            raise
        return
    at = {"apiVersion": owner["apiVersion"], "kind": "At",
          "metadata": {"name": owner["name"], "namespace": namespace, "uid": owner["uid"]}}
    kopf.event(at, type="Normal" if phase == "Succeeded" else "Warning", reason="Done",
               message=done["message"])
    logger.info("at %s done: %s", owner["name"], phase)
