"""Typed access (asyncop.crd) against raw dicts: what a typed view costs, and where.

The runtime's hot path — watch event -> informer -> Store -> handler -> queue — moves raw
dicts and is the same code whether or not an operator declares typed resources; typing
happens only inside a reconcile that asks for it. This benchmark measures that ask:

1. `micro`: microseconds per operation on an At as the cache holds it (status RUNNING,
   labels, annotations, an owner reference): `At.parse(raw)`, reading three fields through the
   typed view vs. through the dict, `to_raw()`, and the no-op check of `write_status` (the
   new status equals the stored one, so nothing is sent).
2. `controller`: a full Controller (handler -> queue -> worker -> reconcile with structlog
   context and metrics) over N cached Ats, with a reconciler that reads spec and status
   from the raw dict, and one that does `At.from_cache(cache, req)` and reads the same
   fields typed. Reconciles per second and per CPU-second, and the difference per reconcile.
3. `builtin`: typed views of built-in objects (`asyncop.k8s`) on a realistic Pod (2
   containers with env, ports, probes, resources, volume mounts; a status with conditions
   and container statuses) and Deployment (the same pod template, strategy, status): µs per
   `Pod.parse` / `Deployment.parse` (the first parse, which builds the validators, is not
   timed), five field reads through the view vs through the dict, and `to_raw()`.

Prints one JSON line per case. Usage: `python bench/typed.py [--keys N] [--repeat R]`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
import timeit
from typing import Any

import orjson
import structlog
from _fakes import FakeCache

from asyncop.api import Kind, RawObject, Request
from asyncop.clock import RealClock
from asyncop.controllers.at import At
from asyncop.k8s import Deployment, Pod
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.metrics import Metrics
from asyncop.runtime.reconcile import Result, reconciler

AT = At.KIND


def sample(i: int) -> RawObject:
    obj: dict[str, Any] = {
        "apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
        "metadata": {
            "name": f"at-{i}", "namespace": "default", "uid": f"2f1c0c7e-{i:08d}",
            "resourceVersion": str(1000 + i), "generation": 1,
            "creationTimestamp": "2026-11-24T10:00:00Z",
            "labels": {"app": "bench", "team": "ops"},
            "annotations": {"note": "a benchmark object"},
        },
        "spec": {"schedule": "2026-11-24T10:12:00Z", "command": "echo hello"},
        "status": {"phase": "RUNNING", "message": "running 'echo hello'",
                   "podName": f"at-{i}-pod", "startedAt": "2026-11-24T10:12:00Z",
                   "observedGeneration": 1},
    }
    return obj  # type: ignore[return-value]


class _NoClient:
    async def update_status(self, kind: Kind, obj: RawObject) -> RawObject:
        raise AssertionError("an unchanged status must not be written")


def micro(repeat: int) -> dict[str, float]:
    raw = sample(0)
    typed = At.parse(raw)
    assert typed.status is not None
    same = typed.status.model_copy()

    def raw_fields() -> object:
        return (raw["spec"]["command"], raw["status"]["phase"], raw["metadata"]["generation"])

    def typed_fields() -> object:
        assert typed.spec is not None and typed.status is not None
        return (typed.spec.command, typed.status.phase, typed.metadata.generation)

    def noop_write() -> object:
        coro = typed.write_status(_NoClient(), same)  # the unchanged path never suspends
        try:
            coro.send(None)
        except StopIteration as stop:
            return stop.value
        raise AssertionError("write_status suspended: it meant to send something")

    def per_op(fn: Any, n: int) -> float:
        return min(timeit.repeat(fn, number=n, repeat=repeat)) / n * 1e6

    out = {
        "parse_us": per_op(lambda: At.parse(raw), 5_000),
        "raw_field_reads_us": per_op(raw_fields, 200_000),
        "typed_field_reads_us": per_op(typed_fields, 200_000),
        "to_raw_us": per_op(typed.to_raw, 5_000),
        "write_status_unchanged_us": per_op(noop_write, 2_000),
    }
    return {k: round(v, 2) for k, v in out.items()}


def pod_spec(name: str) -> dict[str, Any]:
    def container(cname: str, port: int) -> dict[str, Any]:
        return {
            "name": cname, "image": f"registry.example.com/{cname}:1.4.2",
            "imagePullPolicy": "IfNotPresent", "args": ["--port", str(port), "--log=json"],
            "env": [{"name": "MODE", "value": "prod"},
                    {"name": "POD_IP", "valueFrom": {"fieldRef": {
                        "apiVersion": "v1", "fieldPath": "status.podIP"}}},
                    {"name": "TOKEN", "valueFrom": {"secretKeyRef": {
                        "name": f"{name}-secret", "key": "token"}}}],
            "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"},
                          "requests": {"cpu": "100m", "memory": "64Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http",
                                           "scheme": "HTTP"},
                               "periodSeconds": 10, "timeoutSeconds": 1,
                               "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }

    return {
        "containers": [container("web", 8080), container("sidecar", 9090)],
        "volumes": [{"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}],
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName":
        "default-scheduler", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "securityContext": {"runAsNonRoot": True, "fsGroup": 2000},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
    }


def realistic_pod() -> RawObject:
    started = "2026-11-24T10:00:05Z"
    obj: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-7d4b9c-x2x9z", "namespace": "default",
                     "uid": "0b3c1f0e-3a47-4c2d-9f44-1f2a4f3b5c6d", "resourceVersion": "4711",
                     "creationTimestamp": "2026-11-24T10:00:00Z",
                     "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": "web-7d4b9c", "uid": "9e1d7c2a-1b2c-4d5e",
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": {**pod_spec("web"), "nodeName": "node-1"},
        "status": {
            "phase": "Running", "podIP": "10.0.0.12", "podIPs": [{"ip": "10.0.0.12"}],
            "hostIP": "192.168.0.4", "startTime": "2026-11-24T10:00:01Z", "qosClass": "Burstable",
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": started}
                           for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{
                "name": c, "ready": True, "restartCount": 0, "started": True,
                "image": f"registry.example.com/{c}:1.4.2",
                "imageID": f"registry.example.com/{c}@sha256:0123456789abcdef",
                "containerID": f"containerd://{c}0123456789",
                "state": {"running": {"startedAt": started}}} for c in ("web", "sidecar")],
        },
    }
    return obj  # type: ignore[return-value]


def realistic_deployment() -> RawObject:
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": 3,
                     "uid": "6a3b6c1e-0c6f-4bd4-9d7b-4c1f4f1d2a10", "resourceVersion": "4712",
                     "creationTimestamp": "2026-11-24T09:00:00Z", "labels": {"app": "web"},
                     "annotations": {"deployment.kubernetes.io/revision": "2"}},
        "spec": {"replicas": 3, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                 "selector": {"matchLabels": {"app": "web"}},
                 "strategy": {"type": "RollingUpdate",
                              "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": pod_spec("web")}},
        "status": {"observedGeneration": 3, "replicas": 3, "updatedReplicas": 3,
                   "readyReplicas": 3, "availableReplicas": 3, "conditions": [
                       {"type": t, "status": "True", "reason": r,
                        "lastUpdateTime": "2026-11-24T10:01:00Z",
                        "lastTransitionTime": "2026-11-24T10:01:00Z"}
                       for t, r in (("Available", "MinimumReplicasAvailable"),
                                    ("Progressing", "NewReplicaSetAvailable"))]},
    }
    return obj  # type: ignore[return-value]


def builtin(repeat: int) -> dict[str, float]:
    pod_raw, dep_raw = realistic_pod(), realistic_deployment()
    pod, dep = Pod.parse(pod_raw), Deployment.parse(dep_raw)  # builds the validators
    assert pod.to_raw() == pod_raw and dep.to_raw() == dep_raw

    def raw_reads() -> object:
        s = pod_raw["spec"]
        return (pod_raw["status"]["phase"], s["containers"][0]["image"],
                s["containers"][0]["resources"]["limits"]["cpu"], s["nodeName"],
                dep_raw["spec"]["replicas"])

    def typed_reads() -> object:
        s, st, ds = pod.spec, pod.status, dep.spec
        assert s is not None and st is not None and ds is not None
        limits = s.containers[0].resources.limits if s.containers[0].resources else None
        return (st.phase, s.containers[0].image, (limits or {})["cpu"], s.node_name,
                ds.replicas)

    def per_op(fn: Any, n: int) -> float:
        return min(timeit.repeat(fn, number=n, repeat=repeat)) / n * 1e6

    out = {
        "pod_parse_us": per_op(lambda: Pod.parse(pod_raw), 2_000),
        "deployment_parse_us": per_op(lambda: Deployment.parse(dep_raw), 2_000),
        "raw_reads_us": per_op(raw_reads, 200_000),
        "typed_reads_us": per_op(typed_reads, 200_000),
        "pod_to_raw_us": per_op(pod.to_raw, 2_000),
        "pod_json_bytes": len(orjson.dumps(pod_raw)),
        "deployment_json_bytes": len(orjson.dumps(dep_raw)),
    }
    return {k: round(v, 2) for k, v in out.items()}


async def controller(*, keys: int, typed: bool) -> tuple[float, float]:
    objs = [sample(i) for i in range(keys)]
    cache = FakeCache(objs)
    processed = 0
    done = asyncio.get_running_loop().create_future()

    async def reconcile(req: Request) -> Result:
        nonlocal processed
        if typed:
            at = At.from_cache(cache, req)
            assert at is not None and at.spec is not None and at.status is not None
            seen = (at.spec.command, at.status.phase, at.metadata.generation)
        else:
            raw = cache.get(AT, req.name, req.namespace)
            assert raw is not None
            seen = (raw["spec"]["command"], raw["status"]["phase"],
                    raw["metadata"]["generation"])
        assert seen[1] == "RUNNING"
        processed += 1
        if processed == keys and not done.done():
            done.set_result(None)
        return Result()

    ctrl = Controller("bench", reconciler(reconcile), watches=[for_(At)], workers=2)
    task = asyncio.create_task(ctrl.run(cache=cache, clock=RealClock(), metrics=Metrics()))
    await asyncio.sleep(0)
    handler = cache.inf.handlers[0]
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, keys, 1000):
        for obj in objs[i: i + 1000]:
            handler.on_add(obj)
        await asyncio.sleep(0)
    await done
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return keys / elapsed, keys / cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    print(orjson.dumps({"bench": "typed", "case": "micro", **micro(args.repeat)}).decode(),
          flush=True)
    print(orjson.dumps({"bench": "typed", "case": "builtin", **builtin(args.repeat)}).decode(),
          flush=True)
    best: dict[bool, tuple[float, float]] = {}
    for typed in (False, True):
        runs = [await controller(keys=args.keys, typed=typed) for _ in range(args.repeat)]
        best[typed] = (max(r[0] for r in runs), max(r[1] for r in runs))
        print(orjson.dumps({"bench": "typed", "case": "controller", "keys": args.keys,
                            "access": "typed" if typed else "raw",
                            "reconciles_per_s": round(best[typed][0]),
                            "reconciles_per_cpu_s": round(best[typed][1])}).decode(), flush=True)
    extra_us = (1 / best[True][1] - 1 / best[False][1]) * 1e6
    print(orjson.dumps({"bench": "typed", "case": "overhead",
                        "typed_extra_cpu_us_per_reconcile": round(extra_us, 1)}).decode(),
          flush=True)


if __name__ == "__main__":
    asyncio.run(main())
