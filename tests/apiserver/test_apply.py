"""Server-side apply: creation, ownership, conflicts, force, removal, managedFields format."""

from __future__ import annotations

import asyncio
import copy
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from asyncop.apiserver.merge.apply import ApplyConflict, record_update, server_side_apply
from asyncop.apiserver.merge.patch import PatchError

T1, T2, T3 = "2024-05-01T12:00:00Z", "2024-05-01T12:01:00Z", "2024-05-01T12:02:00Z"


def deployment(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "template": {"spec": {"containers": [
                {"name": "main", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]},
            ]}},
            **spec,
        },
    }


def managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}


def test_create_sets_managed_fields_in_fieldsv1_format() -> None:
    applied = deployment()
    before = copy.deepcopy(applied)
    obj = server_side_apply(None, applied, manager="helm", force=False, now=T1)
    assert applied == before
    assert obj["spec"] == applied["spec"]
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert obj["metadata"]["managedFields"] == [{
        "manager": "helm",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {'k:{"name":"main"}': {
                    ".": {},
                    "f:env": {'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}}},
                    "f:image": {},
                    "f:name": {},
                }}}},
            },
        },
    }]


def test_reapply_of_the_same_manifest_is_a_no_op() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    again = server_side_apply(live, deployment(), manager="helm", force=False, now=T2)
    assert again == live
    assert again["metadata"]["managedFields"][0]["time"] == T1


def test_conflict_between_two_managers() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    other = deployment(replicas=5)
    with pytest.raises(ApplyConflict) as err:
        server_side_apply(live, other, manager="kubectl", force=False, now=T2)
    assert err.value.message == (
        'Apply failed with 1 conflict: conflict with "helm" using apps/v1: .spec.replicas'
    )
    assert err.value.conflicts == ['conflict with "helm" using apps/v1: .spec.replicas']
    assert err.value.causes == [{"reason": "FieldManagerConflict",
                                 "message": 'conflict with "helm" using apps/v1',
                                 "field": ".spec.replicas"}]


def test_several_conflicts_are_listed_with_list_item_paths() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    other = deployment(replicas=5)
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    with pytest.raises(ApplyConflict) as err:
        server_side_apply(live, other, manager="kubectl", force=False, now=T2)
    assert [c.field for c in err.value.details] == [
        ".spec.replicas",
        '.spec.template.spec.containers[name="main"].image',
    ]
    assert err.value.message.startswith("Apply failed with 2 conflicts:")


def test_same_value_is_shared_ownership_without_conflict() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    shared = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    obj = server_side_apply(live, shared, manager="kubectl", force=False, now=T2)
    owners = managers(obj)
    assert owners[("kubectl", "Apply")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" in owners[("helm", "Apply")]["fieldsV1"]["f:spec"]
    # helm stops applying replicas: kubectl still owns it, so the value stays
    mine = deployment()
    del mine["spec"]["replicas"]
    obj = server_side_apply(obj, mine, manager="helm", force=False, now=T3)
    assert obj["spec"]["replicas"] == 2


def test_force_takes_ownership() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    scaled = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web"}, "spec": {"replicas": 7}}
    obj = server_side_apply(live, scaled, manager="hpa", force=True, now=T2)
    assert obj["spec"]["replicas"] == 7
    owners = managers(obj)
    assert "f:replicas" not in owners[("helm", "Apply")]["fieldsV1"]["f:spec"]
    assert owners[("hpa", "Apply")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    # now the original owner conflicts when it applies its old value
    with pytest.raises(ApplyConflict, match='conflict with "hpa"'):
        server_side_apply(obj, deployment(), manager="helm", force=False, now=T3)


def test_fields_no_longer_applied_are_removed() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    smaller = deployment()
    smaller["metadata"]["labels"] = {"tier": "web"}
    smaller["spec"]["template"]["spec"]["containers"][0]["env"] = []
    del smaller["spec"]["template"]["spec"]["containers"][0]["env"]
    obj = server_side_apply(live, smaller, manager="helm", force=False, now=T2)
    assert obj["metadata"]["labels"] == {"tier": "web"}
    assert obj["spec"]["template"]["spec"]["containers"] == [{"name": "main", "image": "nginx:1"}]
    assert obj["metadata"]["managedFields"][0]["time"] == T2


def test_associative_list_items_of_other_managers_are_kept() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    sidecar = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "b"}]}}}}
    obj = server_side_apply(live, sidecar, manager="injector", force=False, now=T2)
    names = [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]]
    assert names == ["main", "side"]
    # helm re-applies its manifest (no sidecar): the sidecar survives
    obj = server_side_apply(obj, deployment(), manager="helm", force=False, now=T3)
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["main", "side"]
    # the injector stops applying it: it is removed
    empty = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    obj = server_side_apply(obj, empty, manager="injector", force=False, now=T3)
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["main"]
    assert ("injector", "Apply") not in managers(obj)


def test_custom_resource_lists_are_atomic_and_dropped_fields_removed() -> None:
    cr = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
          "spec": {"color": "blue", "size": 3, "tags": ["a", "b"]}}
    live = server_side_apply(None, cr, manager="kubectl", force=False, now=T1)
    cr2 = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
           "spec": {"size": 5, "tags": ["c"]}}
    obj = server_side_apply(live, cr2, manager="kubectl", force=False, now=T2)
    assert obj["spec"] == {"size": 5, "tags": ["c"]}
    assert obj["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {"f:size": {}, "f:tags": {}}}


def test_finalizers_are_a_set() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "c", "finalizers": ["a.io/x"]}, "data": {"k": "v"}}
    live = server_side_apply(None, cm, manager="m1", force=False, now=T1)
    other = {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "c", "finalizers": ["b.io/y"]}}
    obj = server_side_apply(live, other, manager="m2", force=False, now=T2)
    assert obj["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    assert managers(obj)[("m2", "Apply")]["fieldsV1"] == {
        "f:metadata": {"f:finalizers": {'v:"b.io/y"': {}}}}


def test_update_records_ownership_and_apply_then_conflicts() -> None:
    created = deployment()
    record_update(None, created, manager="kubectl-create", now=T1)
    assert managers(created)[("kubectl-create", "Update")]["fieldsV1"]["f:spec"]["f:replicas"] == {}
    with pytest.raises(ApplyConflict, match='conflict with "kubectl-create" using apps/v1'):
        server_side_apply(created, deployment(replicas=3), manager="helm", force=False, now=T2)


def test_update_steals_fields_from_the_applier() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    edited = copy.deepcopy(live)
    edited["spec"]["replicas"] = 4
    record_update(live, edited, manager="kubectl-edit", now=T2)
    owners = managers(edited)
    assert owners[("kubectl-edit", "Update")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert owners[("kubectl-edit", "Update")]["time"] == T2
    assert "f:replicas" not in owners[("helm", "Apply")]["fieldsV1"]["f:spec"]
    # a write that changes nothing leaves managedFields untouched
    same = copy.deepcopy(edited)
    record_update(edited, same, manager="other", now=T3)
    assert same["metadata"]["managedFields"] == edited["metadata"]["managedFields"]


def test_status_subresource_update_is_a_separate_entry() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    with_status = copy.deepcopy(live)
    with_status["status"] = {"replicas": 2, "conditions": [{"type": "Available", "status": "True"}]}
    record_update(live, with_status, manager="deployment-controller", now=T2, subresource="status")
    entry = next(e for e in with_status["metadata"]["managedFields"]
                 if e["manager"] == "deployment-controller")
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {
        "f:conditions": {'k:{"type":"Available"}': {".": {}, "f:status": {}, "f:type": {}}},
        "f:replicas": {},
    }}
    # the applier re-applying its spec does not touch status
    obj = server_side_apply(with_status, deployment(), manager="helm", force=False, now=T3)
    assert obj["status"]["replicas"] == 2


@pytest.mark.parametrize(
    "applied",
    [
        {"kind": "ConfigMap", "metadata": {"name": "c"}},
        {"apiVersion": "v1", "metadata": {"name": "c"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}},
        {"apiVersion": "v1", "kind": "ConfigMap"},
    ],
)
def test_malformed_configuration(applied: dict[str, Any]) -> None:
    with pytest.raises(PatchError):
        server_side_apply(None, applied, manager="m", force=False, now=T1)


# ------------------------------------------------------------------ over HTTP


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


async def _apply(http: aiohttp.ClientSession, url: str, body: str, *, manager: str,
                 force: bool = False) -> tuple[int, dict[str, Any]]:
    query = f"?fieldManager={manager}&fieldValidation=Strict&force={str(force).lower()}"
    async with http.patch(url + query, data=body.encode(),
                          headers={"Content-Type": "application/apply-patch+yaml"}) as resp:
        return resp.status, await resp.json()


CM_YAML = """apiVersion: v1
kind: ConfigMap
metadata:
  name: c1
  namespace: default
data:
{data}
"""


async def test_http_apply_create_noop_conflict_force_and_removal(server: ApiServer) -> None:
    url = f"{server.url}/api/v1/namespaces/default/configmaps/c1"
    async with aiohttp.ClientSession() as http:
        code, created = await _apply(http, url, CM_YAML.format(data="  a: '1'\n  b: '2'"),
                                     manager="alice")
        assert code == 201
        assert created["data"] == {"a": "1", "b": "2"}

        code, same = await _apply(http, url, CM_YAML.format(data="  a: '1'\n  b: '2'"),
                                  manager="alice")
        assert code == 200
        assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]

        code, status = await _apply(http, url, CM_YAML.format(data="  a: 'bob'"), manager="bob")
        assert code == 409
        assert status["reason"] == "Conflict"
        assert status["message"] == (
            'Apply failed with 1 conflict: conflict with "alice" using v1: .data.a')
        assert status["details"]["causes"] == [{"reason": "FieldManagerConflict",
                                                "message": 'conflict with "alice" using v1',
                                                "field": ".data.a"}]

        code, forced = await _apply(http, url, CM_YAML.format(data="  a: 'bob'"), manager="bob",
                                    force=True)
        assert code == 200
        assert forced["data"] == {"a": "bob", "b": "2"}

        # alice stops applying both keys: b is removed, a stays (bob owns it now)
        code, after = await _apply(http, url, CM_YAML.format(data="  c: '3'"), manager="alice")
        assert code == 200
        assert after["data"] == {"a": "bob", "c": "3"}

    stored = server.store.get(server.store.resolve("", "v1", "configmaps"), "default", "c1")
    assert stored is not None
    owners = {e["manager"]: e["fieldsV1"] for e in stored["metadata"]["managedFields"]}
    assert owners == {"alice": {"f:data": {"f:c": {}}}, "bob": {"f:data": {"f:a": {}}}}


async def test_http_update_then_apply_conflicts_with_the_updater(server: ApiServer) -> None:
    url = f"{server.url}/api/v1/namespaces/default/configmaps"
    async with aiohttp.ClientSession() as http:
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c2", "namespace": "default"}, "data": {"k": "v"}}
        async with http.post(url + "?fieldManager=creator", json=body) as resp:
            assert resp.status == 201
        code, status = await _apply(http, f"{url}/c2",
                                    CM_YAML.replace("c1", "c2").format(data="  k: 'w'"),
                                    manager="applier")
        assert code == 409
        assert status["details"]["causes"][0]["message"] == 'conflict with "creator" using v1'
        # a merge patch by someone else takes the field over without any conflict
        async with http.patch(f"{url}/c2?fieldManager=editor", json={"data": {"k": "x"}},
                              headers={"Content-Type": "application/merge-patch+json"}) as resp:
            assert resp.status == 200
            edited = await resp.json()
    owners = {(e["manager"], e["operation"]): e.get("fieldsV1")
              for e in edited["metadata"]["managedFields"]}
    assert owners[("editor", "Update")] == {"f:data": {"f:k": {}}}
    assert ("creator", "Update") not in owners  # it owned nothing else: the entry is gone


def test_status_is_ignored_where_the_endpoint_resets_it() -> None:
    applied = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    live = copy.deepcopy(applied)
    live["status"] = {"replicas": 2}
    record_update(applied, live, manager="deployment-controller", now=T1, subresource="status")
    exported = deployment(replicas=2)
    exported["status"] = {"replicas": 0}
    # an exported manifest (with a stale status) applied to the main resource: no conflict
    obj = server_side_apply(live, exported, manager="exporter", force=False, now=T2,
                            ignore_fields=("status",))
    assert obj["status"] == {"replicas": 2}
    assert "f:status" not in managers(obj)[("exporter", "Apply")]["fieldsV1"]
    # applying to /status touches only the status
    on_status = deployment(replicas=9)
    on_status["status"] = {"observedGeneration": 1}
    obj = server_side_apply(obj, on_status, manager="ctl", force=False, now=T3,
                            operation_subresource="status")
    assert obj["spec"]["replicas"] == 2
    assert obj["status"] == {"replicas": 2, "observedGeneration": 1}
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "ctl")
    assert (entry["subresource"], entry["fieldsV1"]) == (
        "status", {"f:status": {"f:observedGeneration": {}}})


def test_ports_are_keyed_by_port_and_protocol() -> None:
    dns = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dns"},
           "spec": {"template": {"spec": {"containers": [{"name": "coredns", "ports": [
               {"containerPort": 53, "protocol": "UDP", "name": "dns"},
               {"containerPort": 53, "name": "dns-tcp"},
           ]}]}}}}
    live = server_side_apply(None, dns, manager="m", force=False, now=T1)
    tree = live["metadata"]["managedFields"][0]["fieldsV1"]
    ports = tree["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"coredns"}'][
        "f:ports"]
    assert sorted(ports) == ['k:{"containerPort":53,"protocol":"TCP"}',
                             'k:{"containerPort":53,"protocol":"UDP"}']
    # re-applying with the UDP port renamed changes only that item
    dns["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"] = "dns-udp"
    obj = server_side_apply(live, dns, manager="m", force=False, now=T2)
    assert [p.get("name") for p in
            obj["spec"]["template"]["spec"]["containers"][0]["ports"]] == ["dns-udp", "dns-tcp"]
    # dropping the TCP port removes just that one
    dns["spec"]["template"]["spec"]["containers"][0]["ports"].pop()
    obj = server_side_apply(obj, dns, manager="m", force=False, now=T3)
    assert obj["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 53, "protocol": "UDP", "name": "dns-udp"}]


WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"},
                     "x-kubernetes-list-type": "set"},
            "args": {"type": "array", "items": {"type": "string"}},
        }},
        "status": {"type": "object", "properties": {
            "conditions": {
                "type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
                "items": {"type": "object", "properties": {
                    "type": {"type": "string"}, "status": {"type": "string"}}},
            },
        }},
    },
}


def test_custom_resource_list_types_from_the_crd_schema() -> None:
    def widget(**status: Any) -> dict[str, Any]:
        return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                "status": status}

    live = server_side_apply(None, widget(conditions=[{"type": "Ready", "status": "True"}]),
                             manager="ready-ctl", force=False, now=T1, schema=WIDGET_SCHEMA,
                             operation_subresource="status")
    # another controller owns a different condition: both coexist (map list keyed by type)
    obj = server_side_apply(live, widget(conditions=[{"type": "Synced", "status": "False"}]),
                            manager="sync-ctl", force=False, now=T2, schema=WIDGET_SCHEMA,
                            operation_subresource="status")
    assert obj["status"]["conditions"] == [{"type": "Ready", "status": "True"},
                                           {"type": "Synced", "status": "False"}]
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "sync-ctl")
    assert entry["fieldsV1"] == {"f:status": {"f:conditions": {
        'k:{"type":"Synced"}': {".": {}, "f:status": {}, "f:type": {}}}}}
    # without the schema the list is atomic: the second controller conflicts
    with pytest.raises(ApplyConflict):
        server_side_apply(live, widget(conditions=[{"type": "Synced", "status": "False"}]),
                          manager="sync-ctl", force=False, now=T2,
                          operation_subresource="status")

    spec = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"tags": ["a"], "args": ["x"]}}
    obj = server_side_apply(obj, spec, manager="a", force=False, now=T3, schema=WIDGET_SCHEMA)
    spec2 = {**spec, "spec": {"tags": ["b"]}}
    obj = server_side_apply(obj, spec2, manager="b", force=False, now=T3, schema=WIDGET_SCHEMA)
    assert obj["spec"] == {"tags": ["a", "b"], "args": ["x"]}
    # record_update with the schema diffs the set member by member
    updated = copy.deepcopy(obj)
    updated["spec"]["tags"].append("c")
    record_update(obj, updated, manager="editor", now=T3, schema=WIDGET_SCHEMA)
    owners = managers(updated)
    assert owners[("editor", "Update")]["fieldsV1"] == {"f:spec": {"f:tags": {'v:"c"': {}}}}


def test_conflicts_through_atomic_values_and_empty_maps() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    live = server_side_apply(None, cm, manager="creator", force=False, now=T1)
    # creator owns the empty map; adding keys to it is no conflict
    obj = server_side_apply(live, {**cm, "data": {"k": "v"}}, manager="filler", force=False,
                            now=T2)
    assert obj["data"] == {"k": "v"}
    # an atomic list owned by one manager: another manager setting an item below it conflicts
    cr = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
          "spec": {"args": ["a"]}}
    live = server_side_apply(None, cr, manager="one", force=False, now=T1)
    with pytest.raises(ApplyConflict, match=r"\.spec\.args"):
        server_side_apply(live, {**cr, "spec": {"args": ["b"]}}, manager="two", force=False,
                          now=T2)
    forced = server_side_apply(live, {**cr, "spec": {"args": ["b"]}}, manager="two", force=True,
                               now=T2)
    assert ("one", "Apply") not in managers(forced)


def test_update_that_sends_different_managed_fields_sets_them() -> None:
    old = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
           "data": {"a": "1"}}
    record_update(None, old, manager="kubectl-client-side-apply", now=T1)
    migrated = copy.deepcopy(old)
    migrated["metadata"]["managedFields"] = [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": T2,
        "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]
    record_update(old, migrated, manager="kubectl-patch", now=T2)
    assert [(e["manager"], e["operation"]) for e in migrated["metadata"]["managedFields"]] == [
        ("kubectl", "Apply")]
    # a round trip of the stored managedFields (GET then PUT) changes nothing
    round_trip = copy.deepcopy(migrated)
    round_trip["data"]["a"] = "2"
    record_update(migrated, round_trip, manager="editor", now=T3)
    assert managers(round_trip)[("editor", "Update")]["fieldsV1"] == {"f:data": {"f:a": {}}}
    assert ("kubectl", "Apply") not in managers(round_trip)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
async def test_kubectl_client_side_to_server_side_apply_migration(tmp_path: Path) -> None:
    manifest = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1, namespace: default}\n"
                "data: {%s}\n")
    async with ApiServer(simulators=False, version=("1", "33")) as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig")

        async def apply(*flags: str, data: str) -> None:
            proc = await asyncio.create_subprocess_exec(
                "kubectl", f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache'}",
                "--request-timeout=20s", "apply", *flags, "-f", "-",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            _, err = await asyncio.wait_for(proc.communicate((manifest % data).encode()), 60)
            assert proc.returncode == 0, err.decode()

        await apply(data='a: "1", b: "x"')
        await apply("--server-side", data='a: "1", b: "x"')
        # kubectl moved the client-side apply ownership over to its apply manager, so leaving
        # b out of the next server-side apply removes it
        await apply("--server-side", data='a: "1"')
        cm = srv.store.get(srv.store.resolve("", "v1", "configmaps"), "default", "c1")
    assert cm is not None
    assert cm["data"] == {"a": "1"}
    owners = {e["manager"]: e["fieldsV1"] for e in cm["metadata"]["managedFields"]}
    assert owners["kubectl"] == {"f:data": {"f:a": {}}}
    assert "kubectl-client-side-apply" not in owners


def test_apply_result_shares_nothing_with_its_inputs() -> None:
    live = server_side_apply(None, deployment(), manager="helm", force=False, now=T1)
    snapshot = copy.deepcopy(live)
    obj = server_side_apply(live, {"apiVersion": "apps/v1", "kind": "Deployment",
                                   "metadata": {"name": "web"}, "spec": {"paused": True}},
                            manager="other", force=False, now=T2)
    obj["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].clear()
    obj["spec"]["template"]["spec"]["containers"][0]["env"].clear()
    assert live == snapshot


CRD_YAML = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              size: {type: integer}
"""
GADGET_YAML = """apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1, namespace: default}
spec: {%s}
"""


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
async def test_kubectl_server_side_apply_of_a_crd_and_its_resources(tmp_path: Path) -> None:
    async with ApiServer(simulators=False, version=("1", "33")) as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig")

        async def kubectl(*args: str, stdin: str) -> tuple[int, str]:
            proc = await asyncio.create_subprocess_exec(
                "kubectl", f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache'}",
                "--request-timeout=20s", *args, "-f", "-",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), 60)
            return proc.returncode or 0, (out + err).decode()

        assert (await kubectl("apply", "--server-side", stdin=CRD_YAML))[0] == 0
        code, out = await kubectl("apply", "--server-side",
                                  stdin=GADGET_YAML % "color: red, size: 3")
        assert (code, "serverside-applied" in out) == (0, True)
        # the same manager drops color: it is removed
        assert (await kubectl("apply", "--server-side", stdin=GADGET_YAML % "size: 4"))[0] == 0
        # another manager changing size conflicts, unless it forces
        code, out = await kubectl("apply", "--server-side", "--field-manager=other",
                                  stdin=GADGET_YAML % "size: 5")
        assert code == 1
        assert 'conflict with "kubectl" using example.com/v1: .spec.size' in out
        code, _ = await kubectl("apply", "--server-side", "--field-manager=other",
                                "--force-conflicts", stdin=GADGET_YAML % "size: 5")
        assert code == 0
        store = srv.store
        gadget = store.get(store.resolve("example.com", "v1", "gadgets"), "default", "g1")
    assert gadget is not None
    assert gadget["spec"] == {"size": 5}
    owners = {e["manager"]: e["fieldsV1"] for e in gadget["metadata"]["managedFields"]}
    assert owners == {"other": {"f:spec": {"f:size": {}}}}


def test_dollar_keys_are_data_for_server_side_apply() -> None:
    schema_doc = {"apiVersion": "example.com/v1", "kind": "Schema", "metadata": {"name": "s"},
                  "spec": {"document": {"$schema": "draft-07", "$ref": "#/defs/a",
                                        "$patch": "delete"}}}
    live = server_side_apply(None, schema_doc, manager="m", force=False, now=T1)
    again = server_side_apply(live, schema_doc, manager="m", force=False, now=T2)
    assert again["spec"]["document"] == {"$schema": "draft-07", "$ref": "#/defs/a",
                                         "$patch": "delete"}
    assert again == live


async def test_http_apply_of_another_kind_is_refused_like_kubes_field_manager(
        server: ApiServer) -> None:
    url = f"{server.url}/api/v1/namespaces/default/pods/web"
    async with aiohttp.ClientSession() as http:
        code, status = await _apply(http, url, "apiVersion: apps/v1\nkind: Deployment\n"
                                    "metadata: {name: web}\n", manager="m")
        assert (code, status["reason"]) == (400, "BadRequest")
        assert status["message"] == "invalid object type: apps/v1, Kind=Deployment"
        code, status = await _apply(http, url, "metadata: {name: web}\n", manager="m")
        assert status["message"] == "invalid object type: /, Kind="
    pods = server.store.resolve("", "v1", "pods")
    assert server.store.get(pods, "default", "web") is None
