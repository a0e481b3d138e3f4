"""Kind: where a resource type lives in the API (group, version, plural) and what it is called.

Invariant: a Kind is an immutable value; `path()` builds the REST path for any verb.
`kind.metadata()` is the same Kind read as metadata only (PartialObjectMetadata, as
controller-runtime's `OnlyMetadata`): the client asks for it with
`Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`, and a cache
keeps a separate informer for it. It is not equal to the full Kind (a separate cache key) but
names the same resource: same path, same RBAC.
`KindSource` is anything that names its Kind in a `KIND` attribute (a typed resource class
from `asyncop.crd`, for one); `kind_of` accepts either, so runtime code takes both.

The constants (`POD`, `DEPLOYMENT`, `JOB`, `CRONJOB`, ...; all in `BUILTIN`) name every
built-in kind the embedded API server serves and the other GA kinds of Kubernetes 1.33; the
typed views in `asyncop.k8s` carry them as their `KIND`.
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
    metadata_only: bool = False
    """Read as PartialObjectMetadata (see `metadata()`)."""

    def metadata(self) -> Kind:
        """This Kind read as metadata only: lists, watches and gets return each object's
        `metadata` alone (PartialObjectMetadata), which a cache keeps in an informer of its
        own."""
        return Kind(self.group, self.version, self.plural, self.kind, self.namespaced, True)

    def full(self) -> Kind:
        """This Kind read whole (the inverse of `metadata()`)."""
        return Kind(self.group, self.version, self.plural, self.kind, self.namespaced)

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


# Every built-in kind the embedded API server serves (asyncop/apiserver/core/registry.py
# BUILTINS and its access reviews), and the other GA kinds of Kubernetes 1.33, so each typed
# view in `asyncop.k8s` has its Kind. Names are the kind in capitals; EVENT_V1 is
# events.k8s.io's Event, HORIZONTALPODAUTOSCALER_V1 autoscaling/v1's (the server serves v2).
# tests/k8s/test_kinds.py checks them against the server's registry and the REST paths of
# kubernetes_asyncio.

# core (v1)
NAMESPACE = Kind("", "v1", "namespaces", "Namespace", namespaced=False)
POD = Kind("", "v1", "pods", "Pod")
SERVICE = Kind("", "v1", "services", "Service")
CONFIGMAP = Kind("", "v1", "configmaps", "ConfigMap")
SECRET = Kind("", "v1", "secrets", "Secret")
SERVICEACCOUNT = Kind("", "v1", "serviceaccounts", "ServiceAccount")
EVENT = Kind("", "v1", "events", "Event")
ENDPOINTS = Kind("", "v1", "endpoints", "Endpoints")
NODE = Kind("", "v1", "nodes", "Node", namespaced=False)
PERSISTENTVOLUMECLAIM = Kind("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
PERSISTENTVOLUME = Kind("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
RESOURCEQUOTA = Kind("", "v1", "resourcequotas", "ResourceQuota")
LIMITRANGE = Kind("", "v1", "limitranges", "LimitRange")
REPLICATIONCONTROLLER = Kind("", "v1", "replicationcontrollers", "ReplicationController")
PODTEMPLATE = Kind("", "v1", "podtemplates", "PodTemplate")
COMPONENTSTATUS = Kind("", "v1", "componentstatuses", "ComponentStatus", namespaced=False)

# apps/v1
DEPLOYMENT = Kind("apps", "v1", "deployments", "Deployment")
REPLICASET = Kind("apps", "v1", "replicasets", "ReplicaSet")
STATEFULSET = Kind("apps", "v1", "statefulsets", "StatefulSet")
DAEMONSET = Kind("apps", "v1", "daemonsets", "DaemonSet")
CONTROLLERREVISION = Kind("apps", "v1", "controllerrevisions", "ControllerRevision")

# batch/v1
JOB = Kind("batch", "v1", "jobs", "Job")
CRONJOB = Kind("batch", "v1", "cronjobs", "CronJob")

# autoscaling
HORIZONTALPODAUTOSCALER = Kind("autoscaling", "v2", "horizontalpodautoscalers",
                               "HorizontalPodAutoscaler")
HORIZONTALPODAUTOSCALER_V1 = Kind("autoscaling", "v1", "horizontalpodautoscalers",
                                  "HorizontalPodAutoscaler")

# policy/v1, networking.k8s.io/v1, discovery.k8s.io/v1, events.k8s.io/v1
PODDISRUPTIONBUDGET = Kind("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget")
INGRESS = Kind("networking.k8s.io", "v1", "ingresses", "Ingress")
INGRESSCLASS = Kind("networking.k8s.io", "v1", "ingressclasses", "IngressClass",
                    namespaced=False)
NETWORKPOLICY = Kind("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy")
IPADDRESS = Kind("networking.k8s.io", "v1", "ipaddresses", "IPAddress", namespaced=False)
SERVICECIDR = Kind("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", namespaced=False)
ENDPOINTSLICE = Kind("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice")
EVENT_V1 = Kind("events.k8s.io", "v1", "events", "Event")

# rbac.authorization.k8s.io/v1
ROLE = Kind("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLEBINDING = Kind("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
CLUSTERROLE = Kind("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                   namespaced=False)
CLUSTERROLEBINDING = Kind("rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                          "ClusterRoleBinding", namespaced=False)

# access and identity reviews (create-only)
SELFSUBJECTACCESSREVIEW = Kind("authorization.k8s.io", "v1", "selfsubjectaccessreviews",
                               "SelfSubjectAccessReview", namespaced=False)
SELFSUBJECTRULESREVIEW = Kind("authorization.k8s.io", "v1", "selfsubjectrulesreviews",
                              "SelfSubjectRulesReview", namespaced=False)
SUBJECTACCESSREVIEW = Kind("authorization.k8s.io", "v1", "subjectaccessreviews",
                           "SubjectAccessReview", namespaced=False)
LOCALSUBJECTACCESSREVIEW = Kind("authorization.k8s.io", "v1", "localsubjectaccessreviews",
                                "LocalSubjectAccessReview")
SELFSUBJECTREVIEW = Kind("authentication.k8s.io", "v1", "selfsubjectreviews",
                         "SelfSubjectReview", namespaced=False)
TOKENREVIEW = Kind("authentication.k8s.io", "v1", "tokenreviews", "TokenReview",
                   namespaced=False)

# coordination, scheduling, node, storage, certificates, flow control
LEASE = Kind("coordination.k8s.io", "v1", "leases", "Lease")
PRIORITYCLASS = Kind("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass",
                     namespaced=False)
RUNTIMECLASS = Kind("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False)
STORAGECLASS = Kind("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False)
CSIDRIVER = Kind("storage.k8s.io", "v1", "csidrivers", "CSIDriver", namespaced=False)
CSINODE = Kind("storage.k8s.io", "v1", "csinodes", "CSINode", namespaced=False)
CSISTORAGECAPACITY = Kind("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity")
VOLUMEATTACHMENT = Kind("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment",
                        namespaced=False)
CERTIFICATESIGNINGREQUEST = Kind("certificates.k8s.io", "v1", "certificatesigningrequests",
                                 "CertificateSigningRequest", namespaced=False)
FLOWSCHEMA = Kind("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema",
                  namespaced=False)
PRIORITYLEVELCONFIGURATION = Kind("flowcontrol.apiserver.k8s.io", "v1",
                                  "prioritylevelconfigurations", "PriorityLevelConfiguration",
                                  namespaced=False)

# API machinery: CRDs, aggregated APIs, admission
CRD = Kind("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
           namespaced=False)
APISERVICE = Kind("apiregistration.k8s.io", "v1", "apiservices", "APIService", namespaced=False)
VALIDATING_WEBHOOK_CONFIGURATION = Kind(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration", namespaced=False)
MUTATING_WEBHOOK_CONFIGURATION = Kind(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration", namespaced=False)
VALIDATINGADMISSIONPOLICY = Kind(
    "admissionregistration.k8s.io", "v1", "validatingadmissionpolicies",
    "ValidatingAdmissionPolicy", namespaced=False)
VALIDATINGADMISSIONPOLICYBINDING = Kind(
    "admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding", namespaced=False)

BUILTIN: tuple[Kind, ...] = tuple(v for v in tuple(globals().values()) if isinstance(v, Kind))
"""Every Kind constant above."""

