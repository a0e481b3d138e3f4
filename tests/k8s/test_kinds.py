"""The Kind constants of asyncop.api.kinds agree with what the embedded server serves and with
Kubernetes' REST paths.

Every built-in type the server's registry serves (BUILTINS and the access reviews) has a
constant with the same group, version, plural, kind and scope; every constant is a GA kind
of kube 1.33 (kubespec's group/version/kind index) whose collection path exists in
kubernetes_asyncio's generated API clients (kube's own paths: `/apis/apps/v1/namespaces/
{namespace}/deployments` for a namespaced kind, no namespace segment for a cluster one).
"""

from __future__ import annotations

import re
from pathlib import Path

import kubernetes_asyncio.client.api as client_api

from asyncop.api import Kind, kinds
from asyncop.apiserver.core import reviews
from asyncop.apiserver.core.registry import BUILTINS
from asyncop.kubespec import definitions


def constants() -> dict[str, Kind]:
    return {name: v for name, v in vars(kinds).items() if isinstance(v, Kind)}


def test_every_served_builtin_has_its_constant() -> None:
    # kube: the served types are asyncop's registry; the constants must match them exactly
    by_value = {(k.group, k.version, k.plural): k for k in kinds.BUILTIN}
    for rt in (*BUILTINS, *reviews.TYPES):
        k = by_value.get((rt.group, rt.version, rt.plural))
        assert k is not None, f"no constant in asyncop.api.kinds for {rt.plural}.{rt.group}"
        assert (k.kind, k.namespaced) == (rt.kind, rt.namespaced), rt.plural


def test_builtin_lists_every_constant_once() -> None:
    assert set(constants().values()) == set(kinds.BUILTIN)
    assert len(kinds.BUILTIN) == len(set(kinds.BUILTIN)) == len(constants())
    assert kinds.JOB.path("ns", "pi") == "/apis/batch/v1/namespaces/ns/jobs/pi"
    assert kinds.CLUSTERROLE.path("ignored") == "/apis/rbac.authorization.k8s.io/v1/clusterroles"


def test_constants_are_kube_kinds_with_kube_paths() -> None:
    # kube: the GVK index of its OpenAPI definitions, and the REST paths of the generated clients
    gvks = definitions().kinds()
    source = "\n".join(p.read_text() for p in Path(client_api.__file__).parent.glob("*_api.py"))
    paths = set(re.findall(r"'(/apis?/[^']+)'", source))
    for name, k in constants().items():
        assert (k.group, k.version, k.kind) in gvks, name
        root = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
        namespaced = f"{root}/namespaces/{{namespace}}/{k.plural}"
        if k.namespaced:
            assert namespaced in paths, name
            assert k.path("{namespace}") == namespaced
        else:
            assert f"{root}/{k.plural}" in paths, name
            assert namespaced not in paths, f"{name}: kube serves it per namespace"
