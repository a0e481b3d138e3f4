"""In-process helpers for the built-in kind tests: a Store and its Writer, without HTTP.

`Kit` writes through `store.writer` exactly as the HTTP layer does (defaults, admission,
validation, commit), so a refused write raises the same `ApiError` the server would send as
a Status. Invariant: every helper works on copies of the bodies it is given.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from asyncop.api import ApiError, Invalid
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.apiserver.simulators.services import ServiceAllocator
from asyncop.apiserver.storage.store import Store
from asyncop.clock import RealClock

Obj = dict[str, Any]

PATHS = {
    "services": ("", "v1"), "configmaps": ("", "v1"), "secrets": ("", "v1"),
    "namespaces": ("", "v1"), "serviceaccounts": ("", "v1"), "events": ("", "v1"),
    "events.k8s.io": ("events.k8s.io", "v1"), "leases": ("coordination.k8s.io", "v1"),
    "ingresses": ("networking.k8s.io", "v1"), "networkpolicies": ("networking.k8s.io", "v1"),
    "horizontalpodautoscalers": ("autoscaling", "v2"),
    "poddisruptionbudgets": ("policy", "v1"),
    "roles": ("rbac.authorization.k8s.io", "v1"),
    "rolebindings": ("rbac.authorization.k8s.io", "v1"),
    "clusterroles": ("rbac.authorization.k8s.io", "v1"),
    "clusterrolebindings": ("rbac.authorization.k8s.io", "v1"),
}


class Kit:
    """A fresh in-process store (with the service allocator unless told otherwise)."""

    def __init__(self, *, allocator: bool = True) -> None:
        self.store = Store(clock=RealClock(), seed=7)
        if allocator:
            ServiceAllocator(self.store, SimulatorConfig()).install()

    def rt(self, resource: str) -> ResourceType:
        group, version = PATHS[resource]
        plural = "events" if resource == "events.k8s.io" else resource
        return self.store.resolve(group, version, plural)

    def create(self, resource: str, body: Obj, *, namespace: str = "default") -> Obj:
        rt = self.rt(resource)
        out: Obj = self.store.writer.create(rt, copy.deepcopy(body),
                                            namespace=namespace if rt.namespaced else None)
        return out

    def update(self, resource: str, body: Obj, *, namespace: str = "default") -> Obj:
        rt = self.rt(resource)
        body = copy.deepcopy(body)
        name = body["metadata"]["name"]
        out: Obj = self.store.writer.update(rt, body, name=name,
                                            namespace=namespace if rt.namespaced else None)
        return out

    def refused(self, resource: str, body: Obj, *, old: Obj | None = None,
                namespace: str = "default") -> ApiError:
        """The error of a write kube refuses (a create, or an update of `old` to `body`);
        asserts nothing was stored or changed."""
        rt = self.rt(resource)
        name = body["metadata"].get("name", "")
        ns = namespace if rt.namespaced else ""
        before = self.store.raw_get(rt.gr, ns, name)
        with pytest.raises(ApiError) as err:
            if old is None:
                self.create(resource, body, namespace=namespace)
            else:
                self.update(resource, body, namespace=namespace)
        assert self.store.raw_get(rt.gr, ns, name) is before
        return err.value


def invalid_message(err: ApiError) -> str:
    """The message of a 422, asserting it is one."""
    assert isinstance(err, Invalid) and err.code == 422, err.status
    return err.message
