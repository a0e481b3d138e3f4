"""Server-side defaults of built-in kinds that kubectl and Helm users see (Deployment strategy
and limits, pod template defaults, Service defaults), checked in the stored objects."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson

from asyncop.apiserver import ApiServer

APPS = "/apis/apps/v1/namespaces/default"


def _deployment(name: str, **spec: Any) -> dict[str, Any]:
    containers = [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx:1.25"},
                  {"name": "c", "image": "registry:5000/team/app"},
                  {"name": "d", "image": "busybox:latest", "ports": [{"containerPort": 80}]}]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": containers}}, **spec}}


async def _post(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any]:
    async with http.post(url, json=body) as r:
        assert r.status == 201, await r.text()
        created: dict[str, Any] = orjson.loads(await r.read())
        return created


async def test_deployment_and_pod_template_defaults(apiserver_no_sim: ApiServer) -> None:
    url = apiserver_no_sim.url + APPS
    async with aiohttp.ClientSession() as http:
        await _post(http, url + "/deployments", _deployment("web"))
        await _post(http, url + "/deployments", _deployment(
            "partial", strategy={"rollingUpdate": {"maxSurge": 1}}))
        await _post(http, url + "/deployments", _deployment(
            "recreate", strategy={"type": "Recreate"}, revisionHistoryLimit=3))
    store = apiserver_no_sim.store
    rt = store.resolve("apps", "v1", "deployments")
    web = store.get(rt, "default", "web")
    assert web is not None
    spec = web["spec"]
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) \
        == (1, 10, 600)
    pod = spec["template"]["spec"]
    assert {k: pod[k] for k in ("restartPolicy", "dnsPolicy", "schedulerName",
                                "securityContext", "terminationGracePeriodSeconds")} == {
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler", "securityContext": {},
        "terminationGracePeriodSeconds": 30}
    assert "serviceAccountName" not in pod  # admission sets it on pods, not on templates
    policies = {c["name"]: c["imagePullPolicy"] for c in pod["containers"]}
    assert policies == {"a": "Always", "b": "IfNotPresent", "c": "Always", "d": "Always"}
    for container in pod["containers"]:
        assert container["terminationMessagePath"] == "/dev/termination-log"
        assert container["terminationMessagePolicy"] == "File"
    assert pod["containers"][3]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    partial = store.get(rt, "default", "partial")
    assert partial is not None
    assert partial["spec"]["strategy"] == {
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}
    recreate = store.get(rt, "default", "recreate")
    assert recreate is not None
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}
    assert recreate["spec"]["revisionHistoryLimit"] == 3
    # an update without the defaulted fields keeps them and does not bump the generation
    body = _deployment("web")
    body["metadata"]["resourceVersion"] = web["metadata"]["resourceVersion"]
    async with aiohttp.ClientSession() as http:
        async with http.put(url + "/deployments/web", json=body) as r:
            assert r.status == 200, await r.text()
    after = store.get(rt, "default", "web")
    assert after is not None
    assert after["metadata"]["generation"] == 1
    assert after["spec"] == spec


async def test_service_defaults(apiserver_no_sim: ApiServer) -> None:
    url = apiserver_no_sim.url + "/api/v1/namespaces/default/services"
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80},
                                                         {"name": "dns", "port": 53,
                                                          "protocol": "UDP",
                                                          "targetPort": "dns"}]}}
    async with aiohttp.ClientSession() as http:
        await _post(http, url, svc)
    stored = apiserver_no_sim.store.get(apiserver_no_sim.store.resolve("", "v1", "services"),
                                        "default", "web")
    assert stored is not None
    spec = stored["spec"]
    assert (spec["type"], spec["sessionAffinity"], spec["internalTrafficPolicy"]) == (
        "ClusterIP", "None", "Cluster")
    assert spec["ports"] == [
        {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80},
        {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": "dns"}]


async def test_statefulset_and_daemonset_defaults(apiserver_no_sim: ApiServer) -> None:
    url = apiserver_no_sim.url + APPS
    template = {"metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "redis:7"}]}}
    base = {"selector": {"matchLabels": {"app": "x"}}, "template": template}
    async with aiohttp.ClientSession() as http:
        sts = await _post(http, url + "/statefulsets",
                          {"metadata": {"name": "db"}, "spec": {**base, "serviceName": "db"}})
        ds = await _post(http, url + "/daemonsets", {"metadata": {"name": "agent"}, "spec": base})
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                             "rollingUpdate": {"partition": 0}}
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady"
    assert sts["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {
        "maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert ds["spec"]["template"]["spec"]["restartPolicy"] == "Always"


async def test_job_and_cronjob_defaults(apiserver_no_sim: ApiServer) -> None:
    url = apiserver_no_sim.url + "/apis/batch/v1/namespaces/default"
    pod = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    async with aiohttp.ClientSession() as http:
        job = await _post(http, url + "/jobs", {"metadata": {"name": "once"},
                                                "spec": {"template": {"spec": pod}}})
        queue = await _post(http, url + "/jobs", {"metadata": {"name": "queue"}, "spec": {
            "parallelism": 3, "template": {"spec": pod}}})
        cron = await _post(http, url + "/cronjobs", {"metadata": {"name": "nightly"}, "spec": {
            "schedule": "0 1 * * *",
            "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure",
                "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}})
    spec = job["spec"]
    # kube: SetDefaults_Job (pkg/apis/batch/v1/defaults.go)
    assert {k: spec[k] for k in ("completions", "parallelism", "backoffLimit", "completionMode",
                                 "suspend", "podReplacementPolicy", "manualSelector")} == {
        "completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
        "suspend": False, "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": False}
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    assert "completions" not in queue["spec"]  # a work queue: no fixed completion count
    assert queue["spec"]["parallelism"] == 3
    cspec = cron["spec"]
    assert (cspec["concurrencyPolicy"], cspec["suspend"], cspec["successfulJobsHistoryLimit"],
            cspec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    template = cspec["jobTemplate"]["spec"]["template"]["spec"]
    assert template["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert template["dnsPolicy"] == "ClusterFirst"
    assert template["restartPolicy"] == "OnFailure"
    assert "backoffLimit" not in cspec["jobTemplate"]["spec"]  # Job defaults: not in templates
