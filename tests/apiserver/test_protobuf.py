"""Decoding Kubernetes protobuf request bodies (k8s\\0 envelope + runtime.Unknown)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import random
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from asyncop.apiserver.protobuf.decode import ProtobufError, decode, supported_kinds

# ------------------------------------------------------------- a tiny test-only encoder


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def ld(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def vi(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def entry(number: int, key: str, value: bytes | str) -> bytes:
    return ld(number, ld(1, key) + ld(2, value))


def envelope(api_version: str, kind: str, raw: bytes, encoding: str = "") -> bytes:
    unknown = ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + ld(3, encoding) + ld(4, "")
    return b"k8s\x00" + unknown


def zero_meta(**fields: bytes) -> bytes:
    """ObjectMeta as gogo-protobuf writes it: every non-pointer field present, even if empty."""
    meta = (
        fields.get("name", ld(1, ""))
        + ld(2, "")
        + fields.get("namespace", ld(3, ""))
        + ld(4, "")
        + ld(5, "")
        + ld(6, "")
        + vi(7, 0)
        + ld(8, vi(1, 0) + vi(2, 0))
    )
    return meta + fields.get("rest", b"")


# ------------------------------------------------------------------------ tests


def test_namespace_as_sent_by_kubectl_create_namespace() -> None:
    raw = ld(1, zero_meta(name=ld(1, "foo"))) + ld(2, b"") + ld(3, ld(1, ""))
    assert decode(envelope("v1", "Namespace", raw)) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "foo"},
        "spec": {},
        "status": {},
    }


def test_secret_release_storage() -> None:
    payload = bytes(range(256))
    meta = zero_meta(
        name=ld(1, "sh.helm.release.v1.rel1.v1"),
        namespace=ld(3, "default"),
        rest=(
            entry(11, "owner", "helm") + entry(11, "name", "rel1") + entry(11, "version", "1")
            + entry(12, "note", "x y")
            + ld(13, ld(1, "Deployment") + ld(3, "web") + ld(4, "u-1") + ld(5, "apps/v1")
                 + vi(6, 1) + vi(7, 0))
            + ld(14, "a/b") + ld(14, "c")
        ),
    )
    raw = (
        ld(1, meta) + entry(2, "release", payload) + entry(2, "empty", b"")
        + ld(3, "helm.sh/release.v1") + entry(4, "plain", "text") + vi(5, 1)
    )
    obj = decode(envelope("v1", "Secret", raw))
    assert obj == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "sh.helm.release.v1.rel1.v1",
            "namespace": "default",
            "labels": {"owner": "helm", "name": "rel1", "version": "1"},
            "annotations": {"note": "x y"},
            "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "u-1",
                                 "apiVersion": "apps/v1", "controller": True,
                                 "blockOwnerDeletion": False}],
            "finalizers": ["a/b", "c"],
        },
        "data": {"release": base64.b64encode(payload).decode(), "empty": ""},
        "type": "helm.sh/release.v1",
        "stringData": {"plain": "text"},
        "immutable": True,
    }
    assert base64.b64decode(obj["data"]["release"]) == payload


def test_configmap_with_times_generation_and_managed_fields() -> None:
    fields_v1 = b'{"f:data":{"f:a":{}}}'
    managed = (ld(1, "kubectl-create") + ld(2, "Update") + ld(3, "v1")
               + ld(4, vi(1, 1714564800)) + ld(6, "FieldsV1") + ld(7, ld(1, fields_v1)))
    meta = (ld(1, "c1") + ld(2, "gen-") + ld(5, "uid-1") + ld(6, "42") + vi(7, 3)
            + ld(8, vi(1, 1714564800)) + vi(10, 30) + ld(17, managed))
    raw = ld(1, meta) + entry(2, "a", "1") + entry(3, "bin", b"\x00\xff") + vi(4, 0)
    obj = decode(envelope("v1", "ConfigMap", raw))
    assert obj["metadata"] == {
        "name": "c1", "generateName": "gen-", "uid": "uid-1", "resourceVersion": "42",
        "generation": 3, "creationTimestamp": "2024-05-01T12:00:00Z",
        "deletionGracePeriodSeconds": 30,
        "managedFields": [{"manager": "kubectl-create", "operation": "Update",
                           "apiVersion": "v1", "time": "2024-05-01T12:00:00Z",
                           "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}],
    }
    assert obj["data"] == {"a": "1"}
    assert obj["binaryData"] == {"bin": "AP8="}
    assert obj["immutable"] is False


def test_delete_options_and_negative_ints() -> None:
    raw = vi(1, -1) + ld(2, ld(1, "u") + ld(2, "7")) + ld(4, "Background") + ld(5, "All")
    assert decode(envelope("meta.k8s.io/v1", "DeleteOptions", raw)) == {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": -1,
        "preconditions": {"uid": "u", "resourceVersion": "7"},
        "propagationPolicy": "Background",
        "dryRun": ["All"],
    }
    # Helm's DELETE of a release Secret: empty DeleteOptions
    assert decode(envelope("v1", "DeleteOptions", b"")) == {
        "apiVersion": "v1", "kind": "DeleteOptions"}


def test_lease_micro_time() -> None:
    spec = (ld(1, "pod-a") + vi(2, 15) + ld(3, vi(1, 1714564800) + vi(2, 123456000))
            + ld(4, vi(1, 1714564810)) + vi(5, 2))
    obj = decode(envelope("coordination.k8s.io/v1", "Lease",
                          ld(1, zero_meta(name=ld(1, "op"))) + ld(2, spec)))
    assert obj["spec"] == {
        "holderIdentity": "pod-a", "leaseDurationSeconds": 15,
        "acquireTime": "2024-05-01T12:00:00.123456Z",
        "renewTime": "2024-05-01T12:00:10.000000Z", "leaseTransitions": 2,
    }


def test_deployment_as_sent_by_kubectl_create_deployment() -> None:
    labels = entry(1, "app", "web")
    port = ld(1, "") + vi(2, 0) + vi(3, 8080) + ld(4, "TCP") + ld(5, "")
    resources = ld(1, ld(1, "cpu") + ld(2, ld(1, "500m"))) + ld(2, ld(1, "memory")
                                                                 + ld(2, ld(1, "64Mi")))
    container = (ld(1, "nginx") + ld(2, "nginx:1.27") + ld(3, "nginx") + ld(3, "-g")
                 + ld(5, "") + ld(6, port) + ld(8, resources) + ld(13, "") + ld(14, "")
                 + vi(16, 0) + vi(17, 0) + vi(18, 0) + ld(20, ""))
    pod_spec = (ld(2, container) + ld(3, "") + ld(6, "") + ld(8, "") + ld(9, "")
                + ld(10, "") + vi(11, 0) + vi(12, 0) + vi(13, 0) + ld(16, "") + ld(17, "")
                + ld(19, ""))
    surge = ld(1, vi(1, 1) + vi(2, 0) + ld(3, "25%")) + ld(2, vi(1, 0) + vi(2, 2) + ld(3, ""))
    template = ld(1, zero_meta(rest=entry(11, "app", "web"))) + ld(2, pod_spec)
    spec = (vi(1, 3) + ld(2, labels) + ld(3, template)
            + ld(4, ld(1, "RollingUpdate") + ld(2, surge)) + vi(5, 0) + vi(7, 0))
    raw = ld(1, zero_meta(name=ld(1, "web"))) + ld(2, spec) + ld(3, vi(1, 0) + vi(2, 0))
    obj = decode(envelope("apps/v1", "Deployment", raw))
    assert obj["spec"] == {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{
            "name": "nginx", "image": "nginx:1.27", "command": ["nginx", "-g"],
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "64Mi"}},
        }]}},
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}},
    }
    assert obj["status"] == {}


def test_service_ports_with_int_or_string_target() -> None:
    ports = (ld(1, ld(1, "http") + ld(2, "TCP") + vi(3, 80) + ld(4, vi(1, 0) + vi(2, 8080))
                + vi(5, 0))
             + ld(1, ld(1, "https") + ld(2, "TCP") + vi(3, 443)
                  + ld(4, vi(1, 1) + vi(2, 0) + ld(3, "https")) + vi(5, 30443)))
    spec = ports + entry(2, "app", "web") + ld(3, "") + ld(4, "NodePort") + ld(7, "")
    raw = ld(1, zero_meta(name=ld(1, "web"))) + ld(2, spec) + ld(3, ld(1, b""))
    obj = decode(envelope("v1", "Service", raw))
    assert obj["spec"] == {
        "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
                  {"name": "https", "protocol": "TCP", "port": 443, "targetPort": "https",
                   "nodePort": 30443}],
        "selector": {"app": "web"},
        "type": "NodePort",
    }
    assert obj["status"] == {"loadBalancer": {}}


def test_rbac_role_binding_keeps_required_empty_strings() -> None:
    subject = ld(1, "User") + ld(2, "rbac.authorization.k8s.io") + ld(3, "bob") + ld(4, "")
    raw = (ld(1, zero_meta(name=ld(1, "rb1"))) + ld(2, subject)
           + ld(3, ld(1, "") + ld(2, "ClusterRole") + ld(3, "view")))
    obj = decode(envelope("rbac.authorization.k8s.io/v1", "RoleBinding", raw))
    assert obj["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                                "name": "bob"}]
    assert obj["roleRef"] == {"apiGroup": "", "kind": "ClusterRole", "name": "view"}
    rule = ld(1, "get") + ld(1, "list") + ld(2, "") + ld(3, "pods")
    role = decode(envelope("rbac.authorization.k8s.io/v1", "ClusterRole",
                           ld(1, zero_meta(name=ld(1, "r"))) + ld(2, rule)))
    assert role["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""],
                              "resources": ["pods"]}]


def test_events_v1_event_from_the_client_go_events_recorder() -> None:
    regarding = ld(1, "Pod") + ld(2, "default") + ld(3, "p1") + ld(4, "u1") + ld(5, "v1")
    raw = (ld(1, zero_meta(name=ld(1, "p1.17f"), namespace=ld(3, "default")))
           + ld(2, vi(1, 1714564800) + vi(2, 5000)) + ld(4, "example.com/ctl")
           + ld(5, "ctl-0") + ld(6, "Sync") + ld(7, "Synced") + ld(8, regarding)
           + ld(10, "all good") + ld(11, "Normal") + ld(12, ld(1, "") + ld(2, ""))
           + ld(13, b"") + ld(14, b"") + vi(15, 0))
    obj = decode(envelope("events.k8s.io/v1", "Event", raw))
    assert obj == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "p1.17f", "namespace": "default"},
        "eventTime": "2024-05-01T12:00:00.000005Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
        "action": "Sync", "reason": "Synced",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p1", "uid": "u1",
                      "apiVersion": "v1"},
        "note": "all good", "type": "Normal", "deprecatedSource": {},
    }


def test_unknown_fields_are_skipped() -> None:
    raw = ld(1, zero_meta(name=ld(1, "n"))) + vi(99, 5) + ld(98, b"zz") + ld(3, "Opaque")
    raw += varint(97 << 3 | 1) + b"\x00" * 8
    raw += varint(96 << 3 | 5) + b"\x00" * 4
    assert decode(envelope("v1", "Secret", raw))["type"] == "Opaque"


def test_corrupted_bodies_raise_only_protobuf_errors() -> None:
    """Any byte-level damage ends as ProtobufError (415/400), never as a crash (500)."""
    rng = random.Random(11)
    good = ld(1, zero_meta(name=ld(1, "x"), rest=entry(11, "a", "b"))) + entry(2, "k", "v")
    kinds = sorted(supported_kinds())
    for _ in range(3000):
        raw = bytearray(good + ld(3, "t"))
        for _ in range(rng.randrange(1, 4)):
            roll = rng.randrange(3)
            if roll == 0:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            elif roll == 1:
                del raw[rng.randrange(len(raw)):]
                raw = raw or bytearray(b"\x0a")
            else:
                raw += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
        api_version, kind = rng.choice(kinds)
        with contextlib.suppress(ProtobufError):
            decode(envelope(api_version, kind, bytes(raw)))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"kind":"Secret"}', "no k8s"),
        (envelope("apps/v1", "StatefulSet", b""), "not supported for StatefulSet; send JSON"),
        (envelope("apps/v1", "Deployment", vi(42, 1)), "field 42 of a Deployment body"),
        (envelope("events.k8s.io/v1beta1", "Event", b""), "not supported for Event"),
        (envelope("v1", "Secret", b"", encoding="gzip"), "content encoding"),
        (envelope("v1", "Secret", ld(1, b"\x0a\x05ab")), "truncated"),
        (b"k8s\x00\x0a", "truncated"),
        (envelope("v1", "Secret", b"\x0b"), "wire type"),
        (envelope("v1", "Secret", vi(3, 1)), "length-delimited"),
    ],
)
def test_errors(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message):
        decode(body)


# ------------------------------------------------------------------ over HTTP

PB = "application/vnd.kubernetes.protobuf"


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


async def test_http_protobuf_secret_create_update_delete(server: ApiServer) -> None:
    """The release-storage traffic of Helm: POST, unconditional PUT and DELETE in protobuf."""
    payload = bytes(range(256)) * 4
    url = f"{server.url}/api/v1/namespaces/default/secrets"
    headers = {"Content-Type": PB, "Accept": f"{PB},application/json"}

    def secret(status: str) -> bytes:
        meta = ld(1, "rel.v1") + entry(11, "owner", "helm") + entry(11, "status", status)
        raw = ld(1, meta) + entry(2, "release", payload) + ld(3, "helm.sh/release.v1")
        return envelope("v1", "Secret", raw)

    async with aiohttp.ClientSession() as http:
        async with http.post(url, data=secret("pending"), headers=headers) as resp:
            assert resp.status == 201, await resp.text()
            assert resp.content_type == "application/json"
        async with http.put(f"{url}/rel.v1", data=secret("deployed"), headers=headers) as resp:
            assert resp.status == 200, await resp.text()
        async with http.get(f"{url}?labelSelector=owner%3Dhelm,status%3Ddeployed") as resp:
            items = (await resp.json())["items"]
        assert [i["metadata"]["name"] for i in items] == ["rel.v1"]
        assert base64.b64decode(items[0]["data"]["release"]) == payload
        assert items[0]["type"] == "helm.sh/release.v1"
        async with http.delete(f"{url}/rel.v1", data=envelope("v1", "DeleteOptions", b""),
                               headers=headers) as resp:
            assert resp.status == 200, await resp.text()
    assert server.store.get(server.store.resolve("", "v1", "secrets"), "default", "rel.v1") is None


async def test_http_protobuf_for_an_unsupported_kind_is_415(server: ApiServer) -> None:
    body = envelope("apps/v1", "StatefulSet", ld(1, ld(1, "web")))
    async with aiohttp.ClientSession() as http, http.post(
        f"{server.url}/apis/apps/v1/namespaces/default/statefulsets", data=body,
        headers={"Content-Type": PB},
    ) as resp:
        assert resp.status == 415
        status = await resp.json()
    assert status["reason"] == "UnsupportedMediaType"
    assert "the body of the request was in an unknown format" in status["message"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
async def test_kubectl_1_33_typed_creates_send_protobuf(tmp_path: Path) -> None:
    async with ApiServer(simulators=False, version=("1", "33")) as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig")

        async def kubectl(*args: str) -> str:
            proc = await asyncio.create_subprocess_exec(
                "kubectl", f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache'}",
                "--request-timeout=20s", *args,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode == 0, err.decode()
            return out.decode()

        await kubectl("create", "namespace", "foo")
        # independent creates, run side by side (the namespace exists first)
        await asyncio.gather(
            kubectl("create", "secret", "generic", "s1", "-n", "foo", "--from-literal=k=v\x01"),
            kubectl("create", "configmap", "c1", "-n", "foo", "--from-literal=a=b"),
            kubectl("create", "deployment", "web", "-n", "foo", "--image=nginx:1.27",
                "--replicas=2", "--port=8080", "--", "nginx", "-g", "daemon off;"),
            kubectl("create", "service", "clusterip", "web", "-n", "foo",
                "--tcp=80:8080", "--tcp=443:https"),
            kubectl("create", "job", "j1", "-n", "foo", "--image=busybox", "--", "echo", "hi"),
            kubectl("create", "cronjob", "cj1", "-n", "foo", "--image=busybox",
                "--schedule=*/5 * * * *"),
            kubectl("create", "role", "r1", "-n", "foo", "--verb=get,list",
                "--resource=pods"),
            kubectl("create", "rolebinding", "rb1", "-n", "foo", "--role=r1",
                "--serviceaccount=foo:default"),
            kubectl("create", "clusterrole", "cr1", "--verb=get", "--resource=nodes"),
            kubectl("create", "clusterrolebinding", "crb1", "--clusterrole=cr1",
                "--user=bob"),
        )
        store = srv.store
        ns = store.get(store.resolve("", "v1", "namespaces"), None, "foo")
        assert ns is not None
        assert ns["status"]["phase"] == "Active"
        secret = store.get(store.resolve("", "v1", "secrets"), "foo", "s1")
        assert secret is not None
        assert base64.b64decode(secret["data"]["k"]) == b"v\x01"
        assert secret["type"] == "Opaque"
        cm = store.get(store.resolve("", "v1", "configmaps"), "foo", "c1")
        assert cm is not None
        assert cm["data"] == {"a": "b"}
        assert cm["metadata"]["managedFields"][0]["manager"] == "kubectl-create"
        deploy = store.get(store.resolve("apps", "v1", "deployments"), "foo", "web")
        assert deploy is not None
        assert deploy["spec"]["replicas"] == 2
        assert deploy["spec"]["selector"] == {"matchLabels": {"app": "web"}}
        container = deploy["spec"]["template"]["spec"]["containers"][0]
        assert (container["image"], container["command"]) == (
            "nginx:1.27", ["nginx", "-g", "daemon off;"])
        assert container["ports"][0]["containerPort"] == 8080
        svc = store.get(store.resolve("", "v1", "services"), "foo", "web")
        assert svc is not None
        assert [(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] == [
            (80, 8080), (443, "https")]
        assert svc["spec"]["selector"] == {"app": "web"}
        job = store.get(store.resolve("batch", "v1", "jobs"), "foo", "j1")
        assert job is not None
        pod_spec = job["spec"]["template"]["spec"]
        assert (pod_spec["restartPolicy"], pod_spec["containers"][0]["command"]) == (
            "Never", ["echo", "hi"])
        cronjob = store.get(store.resolve("batch", "v1", "cronjobs"), "foo", "cj1")
        assert cronjob is not None
        assert cronjob["spec"]["schedule"] == "*/5 * * * *"
        assert cronjob["spec"]["jobTemplate"]["metadata"]["name"] == "cj1"
        rbac = "rbac.authorization.k8s.io"
        role = store.get(store.resolve(rbac, "v1", "roles"), "foo", "r1")
        assert role is not None
        assert role["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""],
                                  "resources": ["pods"]}]
        binding = store.get(store.resolve(rbac, "v1", "rolebindings"), "foo", "rb1")
        assert binding is not None
        assert binding["roleRef"] == {"apiGroup": rbac, "kind": "Role", "name": "r1"}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "default",
                                        "namespace": "foo"}]
        cluster_binding = store.get(store.resolve(rbac, "v1", "clusterrolebindings"), None,
                                    "crb1")
        assert cluster_binding is not None
        assert cluster_binding["subjects"] == [{"kind": "User", "apiGroup": rbac, "name": "bob"}]
        assert store.get(store.resolve(rbac, "v1", "clusterroles"), None, "cr1") is not None
