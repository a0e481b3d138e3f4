"""ConfigMaps, Secrets, Namespaces, ServiceAccounts, Events and Leases as kube 1.33 checks them.

Each refused case is a manifest, the exact 422 message and the kube function that words it;
then what the server fills in (defaults, registry steps) and what an update may not change.
"""

from __future__ import annotations

import base64
from typing import Any

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from tests.apiserver import httpkit
from tests.apiserver.builtinkit import Kit, Obj, invalid_message

http = httpkit.http

KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
           "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
           "'[-._a-zA-Z0-9]+')")
QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
MIB = 1024 * 1024


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def cm(**body: Any) -> Obj:
    return {"metadata": {"name": "c"}, **body}


def secret(stype: str | None = None, **body: Any) -> Obj:
    out: Obj = {"metadata": {"name": "s"}, **body}
    if stype is not None:
        out["type"] = stype
    return out


CONFIG_MAPS: list[tuple[str, Obj, str]] = [
    # kube: ValidateConfigMap + IsConfigMapKey
    ("key", cm(data={"no/slash": "1"}), f'data[no/slash]: Invalid value: "no/slash": {KEY_MSG}'),
    ("dotdot", cm(data={"..": "1"}), 'data[..]: Invalid value: "..": must not be \'..\''),
    ("dotdot-prefix", cm(binaryData={"..x": b64("1")}),
     "binaryData[..x]: Invalid value: \"..x\": must not start with '..'"),
    # kube: ValidateConfigMap — one key, one bag
    ("both-bags", cm(data={"k": "1"}, binaryData={"k": b64("1")}),
     'data[k]: Invalid value: "k": duplicate of key present in binaryData'),
    # kube: ValidateConfigMap — 1 MiB in total, reported on the root path ("[]")
    ("size", cm(data={"a": "x" * (MIB - 10)}, binaryData={"b": b64("y" * 11)}),
     "[]: Too long: may not be more than 1048576 bytes"),
]

SECRETS: list[tuple[str, Obj, str]] = [
    # kube: ValidateSecret + IsConfigMapKey, stringData folded into data first
    ("string-data-key", secret(stringData={"a b": "1"}),
     f'data[a b]: Invalid value: "a b": {KEY_MSG}'),
    # kube: ValidateSecret — 1 MiB of decoded bytes
    ("size", secret(stringData={"big": "x" * (MIB + 1)}),
     "data: Too long: may not be more than 1048576 bytes"),
    # kube: ValidateSecret, per type
    ("tls", secret("kubernetes.io/tls", data={"ca.crt": b64("x")}),
     "[data[tls.crt]: Required value, data[tls.key]: Required value]"),
    ("docker-missing", secret("kubernetes.io/dockerconfigjson"),
     "data[.dockerconfigjson]: Required value"),
    # ... the error of Go's json.Unmarshal into a map
    ("docker-eof", secret("kubernetes.io/dockerconfigjson", data={".dockerconfigjson": b64("{")}),
     'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": unexpected end of '
     "JSON input"),
    ("docker-key", secret("kubernetes.io/dockerconfigjson",
                          data={".dockerconfigjson": b64('{auths: {}}')}),
     'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character '
     "'a' looking for beginning of object key string"),
    ("docker-array", secret("kubernetes.io/dockercfg", data={".dockercfg": b64("[]")}),
     'data[.dockercfg]: Invalid value: "<secret contents redacted>": json: cannot unmarshal '
     "array into Go value of type map[string]interface {}"),
    ("docker-trailing", secret("kubernetes.io/dockerconfigjson",
                               data={".dockerconfigjson": b64('{"auths": {}} x')}),
     'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character '
     "'x' after top-level value"),
    ("sa-token", secret("kubernetes.io/service-account-token"),
     "metadata.annotations[kubernetes.io/service-account.name]: Required value"),
    ("basic-auth", secret("kubernetes.io/basic-auth", data={"user": b64("x")}),
     "[data[username]: Required value, data[password]: Required value]"),
    ("ssh-auth", secret("kubernetes.io/ssh-auth", data={"ssh-privatekey": ""}),
     "data[ssh-privatekey]: Required value"),
]


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in CONFIG_MAPS],
                         ids=[c[0] for c in CONFIG_MAPS])
def test_config_maps_refused_as_kube_refuses(manifest: Obj, message: str) -> None:
    err = Kit().refused("configmaps", manifest)
    assert invalid_message(err) == 'ConfigMap "c" is invalid: ' + message


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in SECRETS],
                         ids=[c[0] for c in SECRETS])
def test_secrets_refused_as_kube_refuses(manifest: Obj, message: str) -> None:
    err = Kit().refused("secrets", manifest)
    assert invalid_message(err) == 'Secret "s" is invalid: ' + message


def test_valid_typed_secrets_and_string_data() -> None:
    kit = Kit()
    tls = kit.create("secrets", secret("kubernetes.io/tls", data={"tls.crt": b64("c")},
                                       stringData={"tls.key": "k", "tls.crt": "new"}))
    # kube: Convert_v1_Secret_To_core_Secret — stringData wins over data, then is dropped
    assert tls["data"] == {"tls.crt": b64("new"), "tls.key": b64("k")}
    assert "stringData" not in tls
    docker = kit.create("secrets", {
        "metadata": {"name": "pull"}, "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": b64('{"auths": {"r.io": {"auth": "eA=="}}}')}})
    assert docker["type"] == "kubernetes.io/dockerconfigjson"
    token = kit.create("secrets", {
        "metadata": {"name": "tok", "annotations": {
            "kubernetes.io/service-account.name": "default"}},
        "type": "kubernetes.io/service-account-token"})
    assert "data" not in token
    plain = {"metadata": {"name": "plain"}}
    assert kit.create("secrets", plain)["type"] == "Opaque"  # kube: SetDefaults_Secret


def test_secret_type_and_immutable_data_cannot_change() -> None:
    kit = Kit()
    made = kit.create("secrets", secret("kubernetes.io/tls", immutable=True, data={
        "tls.crt": b64("c"), "tls.key": b64("k")}))
    # kube: ValidateSecretUpdate — ValidateImmutableField on type, then the immutable rules
    changed = {**made, "type": "Opaque", "immutable": False, "data": {"x": b64("y")}}
    assert invalid_message(kit.refused("secrets", changed, old=made)) == (
        'Secret "s" is invalid: [type: Invalid value: "Opaque": field is immutable, immutable: '
        "Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is "
        "immutable when `immutable` is set]")
    relabelled = {**made, "metadata": {**made["metadata"], "labels": {"a": "b"}}}
    assert kit.update("secrets", relabelled)["metadata"]["labels"] == {"a": "b"}


def test_immutable_config_map() -> None:
    kit = Kit()
    made = kit.create("configmaps", cm(immutable=True, data={"a": "1"}))
    # kube: ValidateConfigMapUpdate
    changed = {**made, "data": {"a": "2"}, "binaryData": {"b": b64("x")}}
    assert invalid_message(kit.refused("configmaps", changed, old=made)) == (
        'ConfigMap "c" is invalid: [data: Forbidden: field is immutable when `immutable` is '
        "set, binaryData: Forbidden: field is immutable when `immutable` is set]")


def test_namespaces() -> None:
    kit = Kit()
    # kube: ValidateNamespaceName = NameIsDNSLabel (IsDNS1123Label's dot case)
    err = kit.refused("namespaces", {"metadata": {"name": "team.a"}})
    assert invalid_message(err) == (
        'Namespace "team.a" is invalid: metadata.name: Invalid value: "team.a": must not '
        "contain dots")
    # kube: ValidateNamespace + validateFinalizerName
    err = kit.refused("namespaces", {"metadata": {"name": "t"}, "spec": {"finalizers": ["x"]}})
    assert invalid_message(err) == (
        'Namespace "t" is invalid: spec.finalizers: Invalid value: "x": name is neither a '
        "standard finalizer name nor is it fully qualified")
    # kube: namespace PrepareForCreate — the kubernetes finalizer is added to the others
    made = kit.create("namespaces", {"metadata": {"name": "t"},
                                     "spec": {"finalizers": ["example.com/cleanup"]}})
    assert made["spec"] == {"finalizers": ["example.com/cleanup", "kubernetes"]}
    assert made["status"] == {"phase": "Active"}
    assert made["metadata"]["labels"] == {"kubernetes.io/metadata.name": "t"}


def test_service_accounts() -> None:
    kit = Kit()
    # kube: serviceaccount cleanSecretReferences — only the name of each secret is kept
    made = kit.create("serviceaccounts", {"metadata": {"name": "robot"},
                                          "secrets": [{"name": "tok", "namespace": "x",
                                                       "uid": "u"}],
                                          "imagePullSecrets": [{"name": "pull"}]})
    assert made["secrets"] == [{"name": "tok"}]
    assert made["imagePullSecrets"] == [{"name": "pull"}]
    # kube: ValidateServiceAccountName = NameIsDNSSubdomain
    err = kit.refused("serviceaccounts", {"metadata": {"name": "Robot"}})
    assert invalid_message(err).startswith(
        'ServiceAccount "Robot" is invalid: metadata.name: Invalid value: "Robot": a lowercase '
        "RFC 1123 subdomain")


def core_event(name: str = "e", **body: Any) -> Obj:
    return {"metadata": {"name": name}, "reason": "Started", "message": "m",
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, **body}


def v1_event(name: str = "e", **body: Any) -> Obj:
    return {"metadata": {"name": name}, "eventTime": "2026-01-01T10:00:00.000000Z",
            "type": "Normal", "reason": "Started", "action": "Start", "note": "m",
            "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, **body}


EVENTS: list[tuple[str, str, Obj, str]] = [
    # kube: legacyValidateEvent — without eventTime the namespaces agree
    ("cluster-scoped", "events", core_event(involvedObject={"kind": "Node", "name": "n"},
                                            metadata={"name": "e", "namespace": "kube-public"}),
     'involvedObject.namespace: Invalid value: "": does not match event.namespace'),
    # ... with eventTime the reporting fields are required (and reportingController is a
    # qualified name, so an empty one fails that too)
    ("reporting", "events", core_event(eventTime="2026-01-01T10:00:00.000000Z",
                                       reportingInstance="x" * 129),
     f'[reportingController: Required value, reportingController: Invalid value: "": name '
     f"part must be non-empty, reportingController: Invalid value: \"\": {QNAME_MSG}, "
     'reportingInstance: Invalid value: "": can have at most 128 characters, action: '
     "Required value]"),
    # kube: ValidateEventCreate for events.k8s.io/v1
    ("v1-no-time", "events.k8s.io", v1_event(eventTime=None, type="Info"),
     '[eventTime: Required value, type: Invalid value: "": has invalid value: Info]'),
    ("v1-deprecated", "events.k8s.io", v1_event(deprecatedCount=3,
                                                deprecatedSource={"component": "kubelet"}),
     '[count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be '
     "unset]"),
    ("v1-series", "events.k8s.io", v1_event(series={"count": 1}),
     '[series.count: Invalid value: "": should be at least 2, series.lastObservedTime: '
     "Required value]"),
    ("v1-note", "events.k8s.io", v1_event(note="n" * 1025),
     'message: Invalid value: "": can have at most 1024 characters'),
    # kube: ValidateEventCreate checks events.k8s.io/v1 names as DNS subdomains
    ("v1-name", "events.k8s.io", v1_event("Bad_Name"),
     'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of '
     "lower case alphanumeric characters, '-' or '.', and must start and end with an "
     "alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
]


@pytest.mark.parametrize(("resource", "manifest", "message"), [c[1:] for c in EVENTS],
                         ids=[c[0] for c in EVENTS])
def test_events_refused_as_kube_refuses(resource: str, manifest: Obj, message: str) -> None:
    manifest = {k: v for k, v in manifest.items() if v is not None}
    err = Kit().refused(resource, manifest,
                        namespace=manifest["metadata"].get("namespace", "default"))
    kind = "Event.events.k8s.io" if resource == "events.k8s.io" else "Event"
    assert invalid_message(err) == f'{kind} "{manifest["metadata"]["name"]}" is invalid: ' \
        + message


def test_event_versions_and_updates() -> None:
    kit = Kit()
    # core/v1 names are only path segments (legacy validation checks none)
    assert kit.create("events", core_event("Pod_Started.1"))["metadata"]["name"]
    made = kit.create("events.k8s.io", v1_event())
    assert made["reportingComponent"] == "example.com/ctl"
    # kube: ValidateEventUpdate — through events.k8s.io/v1 only the series may change
    moved = {**v1_event(), "note": "other", "series": {
        "count": 2, "lastObservedTime": "2026-01-01T10:01:00.000000Z"}}
    moved["metadata"] = {"name": "e", "resourceVersion": made["metadata"]["resourceVersion"]}
    assert invalid_message(kit.refused("events.k8s.io", moved, old=made)) == (
        'Event.events.k8s.io "e" is invalid: message: Invalid value: "other": field is '
        "immutable")
    # through core/v1 the same change passes the legacy rules only
    legacy = {**made, "message": "other"}
    assert kit.update("events", legacy)["message"] == "other"


def test_leases() -> None:
    kit = Kit()
    lease = {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0,
                                                  "leaseTransitions": -1}}
    # kube: ValidateLeaseSpec
    assert invalid_message(kit.refused("leases", lease)) == (
        'Lease.coordination.k8s.io "l" is invalid: [spec.leaseDurationSeconds: Invalid value: '
        "0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater "
        "than or equal to 0]")
    # kube: lease PrepareForCreate drops the CoordinatedLeaderElection fields (gate off)
    made = kit.create("leases", {"metadata": {"name": "l"}, "spec": {
        "holderIdentity": "a", "strategy": "Nope", "preferredHolder": "b",
        "renewTime": "2026-01-01T12:00:00.000000+02:00"}})  # MicroTime: 6 digits
    assert made["spec"] == {"holderIdentity": "a",
                            "renewTime": "2026-01-01T10:00:00.000000Z"}


async def test_secret_over_http(apiserver_no_sim: ApiServer,
                                http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + "/api/v1/namespaces/default/secrets"
    code, body = await httpkit.call(http, "POST", url, json=secret("kubernetes.io/tls"))
    assert code == 422 and body["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "data[tls.crt]"},
        {"reason": "FieldValueRequired", "message": "Required value", "field": "data[tls.key]"}]
    code, body = await httpkit.call(http, "POST", url, json=secret(
        "kubernetes.io/basic-auth", stringData={"username": "u"}))
    assert code == 201 and body["data"] == {"username": b64("u")}
