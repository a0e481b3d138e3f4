"""Validation and normalisation of built-in kinds over HTTP."""

from __future__ import annotations

import aiohttp

from asyncop.apiserver import ApiServer
from tests.apiserver import httpkit
from tests.apiserver.httpkit import call

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
MERGE = {"Content-Type": "application/merge-patch+json"}


http = httpkit.http  # the shared aiohttp session fixture


async def test_pod_needs_containers(apiserver_no_sim: ApiServer,
                                    http: aiohttp.ClientSession) -> None:
    code, body = await call(http, "POST", apiserver_no_sim.url + NS + "/pods",
                            json={"metadata": {"name": "p"}, "spec": {}})
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec.containers"
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}
    code, body = await call(http, "POST", apiserver_no_sim.url + NS + "/pods", json=pod)
    assert code == 201 and body["status"]["phase"] == "Pending"
    assert body["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"


async def test_deployment_selector_rules_and_generation(apiserver_no_sim: ApiServer,
                                                        http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + APPS + "/deployments"
    dep = {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "a"}},
        "template": {"metadata": {"labels": {"app": "b"}},
                     "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    code, body = await call(http, "POST", url, json=dep)
    assert code == 422 and "`selector` does not match template `labels`" in body["message"]
    dep["spec"]["template"]["metadata"]["labels"] = {"app": "a"}
    code, body = await call(http, "POST", url, json=dep)
    assert code == 201 and body["spec"]["replicas"] == 1 and body["metadata"]["generation"] == 1
    code, body = await call(http, "PATCH", url + "/d",
                            data=b'{"metadata":{"annotations":{"x":"y"}}}', headers=MERGE)
    assert body["metadata"]["generation"] == 2
    code, body = await call(http, "PATCH", url + "/d",
                            data=b'{"metadata":{"labels":{"x":"y"}}}', headers=MERGE)
    assert body["metadata"]["generation"] == 2
    code, body = await call(http, "PATCH", url + "/d", headers=MERGE,
                            data=b'{"spec":{"selector":{"matchLabels":{"app":"z"}}}}')
    assert code == 422
    code, body = await call(http, "PUT", url + "/d/status", json={
        "metadata": {"name": "d"}, "spec": {"replicas": 9}, "status": {"replicas": 1}})
    assert code == 200 and body["status"] == {"replicas": 1}
    assert body["metadata"]["generation"] == 2 and body["spec"]["replicas"] == 1


async def test_immutable_configmap(apiserver_no_sim: ApiServer,
                                   http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + NS + "/configmaps"
    code, _ = await call(http, "POST", url, json={"metadata": {"name": "c"},
                                                   "data": {"a": "1"}, "immutable": True})
    assert code == 201
    code, body = await call(http, "PATCH", url + "/c", data=b'{"data":{"a":"2"}}',
                            headers=MERGE)
    assert code == 422 and "field is immutable when `immutable` is set" in body["message"]
    code, _ = await call(http, "PATCH", url + "/c", data=b'{"metadata":{"labels":{"a":"b"}}}',
                         headers=MERGE)
    assert code == 200
    code, _ = await call(http, "POST", url, json={"metadata": {"name": "bad"},
                                                   "data": {"no/slash": "1"}})
    assert code == 422


async def test_secret_string_data_and_lease_micro_time(apiserver_no_sim: ApiServer,
                                                       http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    code, body = await call(http, "POST", url + NS + "/secrets",
                            json={"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    assert code == 201 and body["data"] == {"k": "dg=="} and body["type"] == "Opaque"
    assert "stringData" not in body
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a",
                                                 "renewTime": "2026-01-01T10:00:00.000000+00:00"}}
    code, body = await call(http, "POST",
                            url + "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                            json=lease)
    assert code == 201 and body["spec"]["renewTime"] == "2026-01-01T10:00:00.000000Z"
    assert "generation" not in body["metadata"]


async def test_namespace_lifecycle_without_simulators(apiserver_no_sim: ApiServer,
                                                      http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    code, body = await call(http, "POST", url + "/api/v1/namespaces",
                            json={"metadata": {"name": "team"}})
    assert code == 201 and body["spec"]["finalizers"] == ["kubernetes"]
    assert body["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    code, body = await call(http, "DELETE", url + "/api/v1/namespaces/team")
    assert code == 200 and body["status"]["phase"] == "Terminating"
    code, body = await call(http, "POST", url + "/api/v1/namespaces/team/configmaps",
                            json={"metadata": {"name": "c"}})
    assert code == 403 and "is being terminated" in body["message"]
    code, _ = await call(http, "PUT", url + "/api/v1/namespaces/team/finalize",
                         json={"metadata": {"name": "team"}, "spec": {"finalizers": []}})
    assert code == 200
    code, _ = await call(http, "GET", url + "/api/v1/namespaces/team")
    assert code == 404
    code, body = await call(http, "DELETE", url + "/api/v1/namespaces/kube-system")
    assert code == 403 and "may not be deleted" in body["message"]


async def test_bound_pods_terminate_gracefully(apiserver_no_sim: ApiServer,
                                               http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + NS + "/pods"
    pod = {"metadata": {"name": "p"},
           "spec": {"nodeName": "node-1", "terminationGracePeriodSeconds": 20,
                    "containers": [{"name": "c", "image": "x"}]}}
    await call(http, "POST", url, json=pod)
    code, body = await call(http, "DELETE", url + "/p")
    assert code == 200 and body["metadata"]["deletionGracePeriodSeconds"] == 20
    rv = body["metadata"]["resourceVersion"]
    code, body = await call(http, "DELETE", url + "/p")  # not shorter: no change
    assert code == 200 and body["metadata"]["resourceVersion"] == rv
    code, body = await call(http, "DELETE", url + "/p", json={"gracePeriodSeconds": 5})
    assert body["metadata"]["deletionGracePeriodSeconds"] == 5
    code, _ = await call(http, "GET", url + "/p")
    assert code == 200
    code, _ = await call(http, "DELETE", url + "/p?gracePeriodSeconds=0")
    assert code == 200
    code, _ = await call(http, "GET", url + "/p")
    assert code == 404
    # never scheduled: deleted at once
    await call(http, "POST", url, json={"metadata": {"name": "q"},
                                         "spec": {"containers": [{"name": "c", "image": "x"}]}})
    await call(http, "DELETE", url + "/q")
    code, _ = await call(http, "GET", url + "/q")
    assert code == 404


async def test_kubelet_simulator_confirms_graceful_deletion(apiserver: ApiServer,
                                                            http: aiohttp.ClientSession) -> None:
    from asyncop.testing import eventually

    url = apiserver.url + NS + "/pods"
    await call(http, "POST", url, json={"metadata": {"name": "p"},
                                         "spec": {"containers": [{"name": "c", "image": "x"}]}})
    rt = apiserver.store.resolve("", "v1", "pods")
    await eventually(lambda: (apiserver.store.get(rt, "default", "p") or {})
                     .get("spec", {}).get("nodeName"))
    code, body = await call(http, "DELETE", url + "/p")
    assert code == 200 and body["metadata"]["deletionGracePeriodSeconds"] == 30
    await eventually(lambda: apiserver.store.get(rt, "default", "p") is None)


async def test_namespace_mismatch_and_event_namespace(apiserver_no_sim: ApiServer,
                                                      http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url
    code, body = await call(http, "POST", url + NS + "/configmaps",
                            json={"metadata": {"name": "c", "namespace": "kube-system"}})
    assert code == 400 and "does not match the namespace" in body["message"]
    event = {"metadata": {"name": "e"}, "reason": "R", "message": "m",
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": "kube-system"}}
    code, body = await call(http, "POST", url + NS + "/events", json=event)
    assert code == 422 and body["details"]["causes"][0]["field"] == "involvedObject.namespace"
    event["involvedObject"]["namespace"] = "default"
    code, _ = await call(http, "POST", url + NS + "/events", json=event)
    assert code == 201


async def test_pod_log_is_empty(apiserver_no_sim: ApiServer,
                                http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + NS + "/pods"
    await call(http, "POST", url, json={"metadata": {"name": "p"},
                                         "spec": {"containers": [{"name": "c", "image": "x"}]}})
    async with http.get(url + "/p/log") as r:
        assert r.status == 200 and await r.read() == b""
    code, body = await call(http, "GET", url + "/p/log?container=nope")
    assert code == 400 and body["message"] == "container nope is not valid for pod p"
    code, _ = await call(http, "GET", url + "/missing/log")
    assert code == 404


async def test_pod_spec_is_mostly_immutable(apiserver_no_sim: ApiServer,
                                            http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + NS + "/pods"
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}
    await call(http, "POST", url, json=pod)
    code, body = await call(http, "PATCH", url + "/p", headers=MERGE,
                            data=b'{"spec":{"restartPolicy":"Never"}}')
    assert code == 422 and "pod updates may not change fields" in body["message"]
    patch = b'{"spec":{"containers":[{"name":"c","image":"x:2"}]}}'
    code, body = await call(http, "PATCH", url + "/p", headers=MERGE, data=patch)
    assert code == 200 and body["spec"]["containers"][0]["image"] == "x:2"
    # kube: ValidatePodUpdate — nodeName is not among the updatable fields; a pod is bound
    # through pods/binding only (BindingREST, pkg/registry/core/pod/storage)
    code, body = await call(http, "PATCH", url + "/p", headers=MERGE,
                            data=b'{"spec":{"nodeName":"node-1"}}')
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec"
    assert body["message"].startswith(
        'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than')
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    code, body = await call(http, "POST", url + "/p/binding", json=binding)
    assert code == 201 and body["status"] == "Success"
    code, body = await call(http, "GET", url + "/p")
    assert body["spec"]["nodeName"] == "node-1"
