"""Kind: where a resource type lives in the API (group, version, plural) and what it is called.

Invariant: a Kind is an immutable value; `path()` builds the REST path for any verb.
`KindSource` is anything that names its Kind in a `KIND` attribute (a typed resource class
from `asyncop.crd`, for one); `kind_of` accepts either, so runtime code takes both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Kind:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """`plural.group` (`plural` for the core group), as kubectl and RBAC name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str = ""
    ) -> str:
        """The REST path; `namespace=None` on a namespaced Kind means all namespaces."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base

    def __str__(self) -> str:
        return self.resource


class KindSource(Protocol):
    """Anything that names its Kind: e.g. a `asyncop.crd.CustomResource` subclass."""

    @property
    def KIND(self) -> Kind: ...


def kind_of(kind: Kind | KindSource) -> Kind:
    """`kind` itself, or the Kind a resource class declares."""
    return kind if isinstance(kind, Kind) else kind.KIND


NAMESPACE = Kind("", "v1", "namespaces", "Namespace", namespaced=False)
POD = Kind("", "v1", "pods", "Pod")
SERVICE = Kind("", "v1", "services", "Service")
CONFIGMAP = Kind("", "v1", "configmaps", "ConfigMap")
SECRET = Kind("", "v1", "secrets", "Secret")
SERVICEACCOUNT = Kind("", "v1", "serviceaccounts", "ServiceAccount")
EVENT = Kind("", "v1", "events", "Event")
EVENT_V1 = Kind("events.k8s.io", "v1", "events", "Event")
DEPLOYMENT = Kind("apps", "v1", "deployments", "Deployment")
REPLICASET = Kind("apps", "v1", "replicasets", "ReplicaSet")
LEASE = Kind("coordination.k8s.io", "v1", "leases", "Lease")
CRD = Kind("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
           namespaced=False)
VALIDATING_WEBHOOK_CONFIGURATION = Kind(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration", namespaced=False)
MUTATING_WEBHOOK_CONFIGURATION = Kind(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration", namespaced=False)
