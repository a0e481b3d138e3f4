"""Server-side Tables for `kubectl get` (asyncop.apiserver.tables.table)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from asyncop.apiserver.core.crds import resource_types
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.tables.jsonpath import find
from asyncop.apiserver.tables.table import to_table
from asyncop.apiserver.tables.timefmt import human_duration
from tests.apiserver.test_crds import crdkind_crd

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def _ts(ago: float) -> str:
    return (NOW - timedelta(seconds=ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _obj(name: str, ago: float = 30, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "X",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": _ts(ago),
                         "labels": {"app": name}},
            **fields}


def _names(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-5, "<invalid>"), (-1, "0s"), (0, "0s"), (59, "59s"), (119, "119s"), (120, "2m"),
     (312, "5m12s"), (600, "10m"), (3 * 3600 - 1, "179m"), (3 * 3600, "3h"),
     (2 * 3600 + 5 * 60 + 3 * 3600, "5h5m"), (47 * 3600, "47h"), (48 * 3600, "2d"),
     (3 * 86400 + 3 * 3600, "3d3h"), (9 * 86400, "9d"), (800 * 86400, "2y70d"),
     (3000 * 86400, "8y")],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_jsonpath_forms() -> None:
    obj = {"spec": {"items": [{"n": 1}, {"n": 2}], "x.y": "dotted"},
           "status": {"conditions": [{"type": "Ready", "status": "True"},
                                     {"type": "Synced", "status": "False"}]}}
    assert find(obj, ".spec.items[1].n") == [2]
    assert find(obj, ".spec.items[*].n") == [1, 2]
    assert find(obj, ".spec.items[-1].n") == [2]
    assert find(obj, "{.spec['x.y']}") == ["dotted"]
    assert find(obj, '.status.conditions[?(@.type=="Ready")].status') == ["True"]
    assert find(obj, ".status.conditions[?(@.type=='Synced')].status") == ["False"]
    assert find(obj, ".status.conditions[?(@.type!='Synced')].type") == ["Ready"]
    assert find(obj, ".spec.missing.deeper") == []
    with pytest.raises(ValueError):
        find(obj, ".spec[")


def test_custom_resource_table_with_printer_columns() -> None:
    (rt,) = resource_types(crdkind_crd())
    objs = [_obj("a", 312, spec={"choice": "mysql", "replicas": 3}), _obj("b", 5, spec={})]
    table = to_table(rt, objs, now=NOW, resource_version="42")
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "42"}
    assert _names(table) == ["Name", "DBorWAS", "replicas", "Age"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 1, 0]
    assert table["columnDefinitions"][0]["format"] == "name"
    assert table["rows"][0]["cells"] == ["a", "mysql", "3", "5m12s"]
    assert table["rows"][1]["cells"] == ["b", None, None, "5s"]
    row_obj = table["rows"][0]["object"]
    assert row_obj["kind"] == "PartialObjectMetadata"
    assert row_obj["metadata"]["labels"] == {"app": "a"}
    assert "spec" not in row_obj


def test_typed_cells_and_include_object() -> None:
    rt = ResourceType(group="example.com", version="v1", plural="widgets", kind="Widget",
                      crd_name="widgets.example.com", printer_columns=(
                          {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                          {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
                          {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
                          {"name": "Ready", "type": "string",
                           "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                          {"name": "Since", "type": "date", "jsonPath": ".status.since"},
                      ))
    obj = _obj("w", spec={"size": 3.0, "ratio": 0.5, "on": True},
               status={"conditions": [{"type": "Ready", "status": "True"}],
                       "since": _ts(7200)})
    table = to_table(rt, [obj], include_object="Object", now=NOW)
    assert table["rows"][0]["cells"] == ["w", 3, 0.5, True, "True", "120m"]
    assert table["rows"][0]["object"] is obj
    bad = _obj("v", spec={"size": "big", "on": "yes"}, status={"since": "never"})
    table = to_table(rt, [bad], include_object="None", now=NOW)
    assert table["rows"][0]["cells"] == ["v", None, None, None, None, "<invalid>"]
    assert "object" not in table["rows"][0]


def test_crd_without_columns_gets_name_and_age() -> None:
    crd = crdkind_crd()
    del crd["spec"]["versions"][0]["additionalPrinterColumns"]
    (rt,) = resource_types(crd)
    table = to_table(rt, [_obj("a", 90)], now=NOW)
    assert _names(table) == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["a", "90s"]


def _builtin(group: str, plural: str, kind: str) -> ResourceType:
    return ResourceType(group=group, version="v1", plural=plural, kind=kind)


def test_pod_table() -> None:
    pod = _obj("p", 30, spec={"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
               status={"phase": "Running", "podIP": "10.0.0.5", "containerStatuses": [
                   {"ready": True, "restartCount": 2, "state": {"running": {}}},
                   {"ready": False, "restartCount": 1,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]})
    table = to_table(_builtin("", "pods", "Pod"), [pod], now=NOW)
    assert _names(table)[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    cells = table["rows"][0]["cells"]
    assert cells[:7] == ["p", "1/2", "CrashLoopBackOff", "3", "30s", "10.0.0.5", "n1"]
    assert [c["priority"] for c in table["columnDefinitions"]][5:7] == [1, 1]


@pytest.mark.parametrize(
    ("status", "text"),
    [
        ({"phase": "Pending"}, "Pending"),
        ({"phase": "Succeeded", "containerStatuses": [
            {"state": {"terminated": {"reason": "Completed", "exitCode": 0}}}]}, "Completed"),
        ({"phase": "Failed", "containerStatuses": [
            {"state": {"terminated": {"exitCode": 3}}}]}, "ExitCode:3"),
        ({"phase": "Pending", "initContainerStatuses": [
            {"state": {"terminated": {"exitCode": 0}}},
            {"state": {"running": {}}}]}, "Init:1/2"),
        ({"phase": "Pending", "initContainerStatuses": [
            {"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}, "Init:CrashLoopBackOff"),
        ({"phase": "Failed", "reason": "Evicted"}, "Evicted"),
    ],
)
def test_pod_status_column(status: dict[str, Any], text: str) -> None:
    pod = _obj("p", spec={"initContainers": [{"name": "i1"}, {"name": "i2"}],
                          "containers": [{"name": "c"}]}, status=status)
    table = to_table(_builtin("", "pods", "Pod"), [pod], now=NOW)
    assert table["rows"][0]["cells"][2] == text
    pod["metadata"]["deletionTimestamp"] = _ts(0)
    table = to_table(_builtin("", "pods", "Pod"), [pod], now=NOW)
    assert table["rows"][0]["cells"][2] == "Terminating"


def test_deployment_service_and_simple_builtins() -> None:
    dep = _obj("web", spec={"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"spec": {"containers": [{"name": "c",
                                                                  "image": "nginx:1"}]}}},
               status={"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2})
    table = to_table(_builtin("apps", "deployments", "Deployment"), [dep], now=NOW)
    assert _names(table) == ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers",
                             "Images", "Selector"]
    assert table["rows"][0]["cells"] == ["web", "2/3", 3, 2, "30s", "c", "nginx:1", "app=web"]
    svc = _obj("s", spec={"type": "NodePort", "clusterIP": "10.96.0.10", "selector": {"a": "b"},
                          "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                                    {"port": 53, "protocol": "UDP"}]})
    table = to_table(_builtin("", "services", "Service"), [svc], now=NOW)
    assert table["rows"][0]["cells"] == ["s", "NodePort", "10.96.0.10", "<none>",
                                         "80:30080/TCP,53/UDP", "30s", "a=b"]
    cm = _obj("c", data={"a": "1", "b": "2"})
    table = to_table(_builtin("", "configmaps", "ConfigMap"), [cm], now=NOW)
    assert (_names(table), table["rows"][0]["cells"]) == (["Name", "Data", "Age"], ["c", 2, "30s"])
    ns = _obj("n", status={"phase": "Terminating"})
    table = to_table(_builtin("", "namespaces", "Namespace"), [ns], now=NOW)
    assert table["rows"][0]["cells"] == ["n", "Terminating", "30s"]
    secret = _obj("s", type="kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""})
    table = to_table(_builtin("", "secrets", "Secret"), [secret], now=NOW)
    assert table["rows"][0]["cells"] == ["s", "kubernetes.io/tls", 2, "30s"]
    crd = _obj("widgets.example.com")
    table = to_table(_builtin("apiextensions.k8s.io", "customresourcedefinitions",
                              "CustomResourceDefinition"), [crd], now=NOW)
    assert _names(table) == ["Name", "Created At"]
    assert table["rows"][0]["cells"] == ["widgets.example.com", _ts(30)]
    other = to_table(_builtin("", "limitranges", "LimitRange"), [_obj("e", 150)], now=NOW)
    assert (_names(other), other["rows"][0]["cells"]) == (["Name", "Age"], ["e", "2m30s"])


def test_event_table_and_watch_variant() -> None:
    ev = _obj("e1", type="Warning", reason="Failed", message="boom", lastTimestamp=_ts(60),
              involvedObject={"kind": "Pod", "name": "p"})
    table = to_table(_builtin("", "events", "Event"), [ev], now=NOW, include_columns=False)
    assert table["columnDefinitions"] is None
    assert table["rows"][0]["cells"][:5] == ["60s", "Warning", "Failed", "pod/p", "boom"]


def test_default_now_is_the_real_clock() -> None:
    table = to_table(_builtin("", "configmaps", "ConfigMap"), [_obj("c", 0)])
    age = table["rows"][0]["cells"][2]
    assert age.endswith(("d", "y")) or age[0].isdigit()


def test_job_cronjob_daemonset_tables() -> None:
    job = _obj("j", spec={"completions": 2, "template": {"spec": {"containers": [
        {"name": "c", "image": "busybox"}]}}},
               status={"succeeded": 2, "startTime": _ts(100), "completionTime": _ts(40),
                       "conditions": [{"type": "Complete", "status": "True"}]})
    table = to_table(_builtin("batch", "jobs", "Job"), [job], now=NOW)
    assert _names(table)[:5] == ["Name", "Status", "Completions", "Duration", "Age"]
    assert table["rows"][0]["cells"][:5] == ["j", "Complete", "2/2", "60s", "30s"]
    running = _obj("r", spec={}, status={"startTime": _ts(10)})
    table = to_table(_builtin("batch", "jobs", "Job"), [running], now=NOW)
    assert table["rows"][0]["cells"][1:4] == ["Running", "0/1", "10s"]
    cron = _obj("cj", spec={"schedule": "*/5 * * * *"}, status={"active": [{}],
                                                               "lastScheduleTime": _ts(300)})
    table = to_table(_builtin("batch", "cronjobs", "CronJob"), [cron], now=NOW)
    assert table["rows"][0]["cells"][:7] == ["cj", "*/5 * * * *", "<none>", False, 1, "5m",
                                             "30s"]
    ds = _obj("ds", spec={"template": {"spec": {"nodeSelector": {"disk": "ssd"}}}},
              status={"desiredNumberScheduled": 3, "currentNumberScheduled": 3,
                      "numberReady": 2, "updatedNumberScheduled": 3, "numberAvailable": 2})
    table = to_table(_builtin("apps", "daemonsets", "DaemonSet"), [ds], now=NOW)
    assert table["rows"][0]["cells"][:8] == ["ds", 3, 3, 2, 3, 2, "disk=ssd", "30s"]


def test_node_endpoints_pvc_ingress_tables() -> None:
    node = _obj("n1", status={"conditions": [{"type": "Ready", "status": "True"}],
                              "nodeInfo": {"kubeletVersion": "v1.33.0"}})
    node["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = ""
    table = to_table(_builtin("", "nodes", "Node"), [node], now=NOW)
    assert table["rows"][0]["cells"] == ["n1", "Ready", "control-plane", "30s", "v1.33.0"]
    ep = _obj("svc", subsets=[{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
                               "ports": [{"port": 80}]}])
    table = to_table(_builtin("", "endpoints", "Endpoints"), [ep], now=NOW)
    assert table["rows"][0]["cells"] == ["svc", "10.0.0.1:80,10.0.0.2:80", "30s"]
    pvc = _obj("data", spec={"volumeName": "pv1", "storageClassName": "fast"},
               status={"phase": "Bound", "capacity": {"storage": "1Gi"},
                       "accessModes": ["ReadWriteOnce"]})
    table = to_table(_builtin("", "persistentvolumeclaims", "PersistentVolumeClaim"), [pvc],
                     now=NOW)
    assert table["rows"][0]["cells"][:8] == ["data", "Bound", "pv1", "1Gi", "RWO", "fast",
                                             "<unset>", "30s"]
    ing = _obj("web", spec={"ingressClassName": "nginx", "rules": [{"host": "a.example.com"}],
                            "tls": [{}]})
    table = to_table(_builtin("networking.k8s.io", "ingresses", "Ingress"), [ing], now=NOW)
    assert table["rows"][0]["cells"] == ["web", "nginx", "a.example.com", "", "80, 443", "30s"]
