"""Registry: which resource types the server serves, built-in and CRD-backed.

Built-in types come from the static `BUILTINS` table; CRD types are added when a CRD becomes
Established and removed when it is deleted. Lookups are by (group, version, plural), by
(apiVersion, kind) and by storage identity (group, plural). Invariant: every served version
of a resource shares one storage identity `gr`; `storage_type(gr)` is the version objects are
stored in.
"""

from __future__ import annotations

from dataclasses import replace

from asyncop.apiserver.core import reviews
from asyncop.apiserver.core.resources import ResourceType, ScaleSpec

_ALL = ("all",)
_SCALE = ScaleSpec(label_selector_path="status.selector")


def _rt(group: str, plural: str, kind: str, *, namespaced: bool = True,
        short: tuple[str, ...] = (), cats: tuple[str, ...] = (), status: bool = False,
        scale: ScaleSpec | None = None, version: str = "v1",
        verbs: tuple[str, ...] | None = None) -> ResourceType:
    rt = ResourceType(group=group, version=version, plural=plural, kind=kind,
                      namespaced=namespaced, short_names=short, categories=cats,
                      has_status=status, scale=scale, storage_version=version)
    return replace(rt, verbs=verbs) if verbs else rt


BUILTINS: tuple[ResourceType, ...] = (
    _rt("", "namespaces", "Namespace", namespaced=False, short=("ns",), status=True,
        verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    _rt("", "pods", "Pod", short=("po",), cats=_ALL, status=True),
    _rt("", "services", "Service", short=("svc",), cats=_ALL, status=True),
    _rt("", "configmaps", "ConfigMap", short=("cm",)),
    _rt("", "secrets", "Secret"),
    _rt("", "serviceaccounts", "ServiceAccount", short=("sa",)),
    _rt("", "events", "Event", short=("ev",)),
    _rt("", "endpoints", "Endpoints", short=("ep",)),
    _rt("", "nodes", "Node", namespaced=False, short=("no",), status=True),
    _rt("", "persistentvolumeclaims", "PersistentVolumeClaim", short=("pvc",), status=True),
    _rt("", "persistentvolumes", "PersistentVolume", namespaced=False, short=("pv",),
        status=True),
    _rt("", "resourcequotas", "ResourceQuota", short=("quota",), status=True),
    _rt("", "limitranges", "LimitRange", short=("limits",)),
    _rt("", "replicationcontrollers", "ReplicationController", short=("rc",), cats=_ALL,
        status=True, scale=_SCALE),
    _rt("", "podtemplates", "PodTemplate"),
    _rt("storage.k8s.io", "storageclasses", "StorageClass", namespaced=False, short=("sc",)),
    _rt("scheduling.k8s.io", "priorityclasses", "PriorityClass", namespaced=False,
        short=("pc",)),
    _rt("discovery.k8s.io", "endpointslices", "EndpointSlice"),
    _rt("admissionregistration.k8s.io", "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration", namespaced=False),
    _rt("admissionregistration.k8s.io", "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration", namespaced=False),
    _rt("apps", "deployments", "Deployment", short=("deploy",), cats=_ALL, status=True,
        scale=_SCALE),
    _rt("apps", "replicasets", "ReplicaSet", short=("rs",), cats=_ALL, status=True,
        scale=_SCALE),
    _rt("apps", "statefulsets", "StatefulSet", short=("sts",), cats=_ALL, status=True,
        scale=_SCALE),
    _rt("apps", "daemonsets", "DaemonSet", short=("ds",), cats=_ALL, status=True),
    _rt("batch", "jobs", "Job", cats=_ALL, status=True),
    _rt("batch", "cronjobs", "CronJob", short=("cj",), cats=_ALL, status=True),
    _rt("coordination.k8s.io", "leases", "Lease"),
    replace(_rt("events.k8s.io", "events", "Event", short=("ev",)), storage_group=""),
    _rt("rbac.authorization.k8s.io", "roles", "Role"),
    _rt("rbac.authorization.k8s.io", "rolebindings", "RoleBinding"),
    _rt("rbac.authorization.k8s.io", "clusterroles", "ClusterRole", namespaced=False),
    _rt("rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding",
        namespaced=False),
    _rt("policy", "poddisruptionbudgets", "PodDisruptionBudget", short=("pdb",), status=True),
    _rt("networking.k8s.io", "ingresses", "Ingress", short=("ing",), status=True),
    _rt("networking.k8s.io", "networkpolicies", "NetworkPolicy", short=("netpol",)),
    _rt("autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short=("hpa",),
        cats=_ALL, status=True, version="v2"),
    _rt("apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition",
        namespaced=False, short=("crd", "crds"), status=True),
    _rt("apiregistration.k8s.io", "apiservices", "APIService", namespaced=False, status=True,
        cats=("api-extensions",)),
)

#: Kinds whose metadata.generation is tracked (besides every custom resource).
GENERATION_TRACKED: frozenset[tuple[str, str]] = frozenset({
    ("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"),
    ("apps", "daemonsets"), ("batch", "jobs"), ("batch", "cronjobs"),
    ("apiextensions.k8s.io", "customresourcedefinitions"), ("policy", "poddisruptionbudgets"),
    ("networking.k8s.io", "ingresses"), ("networking.k8s.io", "networkpolicies"),
    ("autoscaling", "horizontalpodautoscalers"), ("", "pods"),
})

#: Kinds whose DELETE answers the deleted object instead of a Success Status.
RETURNS_DELETED_OBJECT: frozenset[tuple[str, str]] = frozenset({
    ("", "pods"), ("", "namespaces"), ("", "serviceaccounts"), ("", "services"),
    ("", "secrets"), ("", "nodes"), ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"), ("apiextensions.k8s.io", "customresourcedefinitions"),
})

CRD_GR = ("apiextensions.k8s.io", "customresourcedefinitions")
NAMESPACE_GR = ("", "namespaces")


def _version_key(version: str) -> tuple[int, int, int, str]:
    """Kube version priority: GA > beta > alpha, higher numbers first; others last by name."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0, version)
    major = int(m.group(1))
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor, "")


class Registry:
    """The served types. Mutated only by the store (CRD registration) on the event loop."""

    def __init__(self) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._by_gr: dict[tuple[str, str], list[ResourceType]] = {}
        self._crd_types: dict[str, list[ResourceType]] = {}
        for rt in BUILTINS + reviews.TYPES:
            self._add(rt)

    def _add(self, rt: ResourceType) -> None:
        self._by_gvr[(rt.group, rt.version, rt.plural)] = rt
        versions = self._by_gr.setdefault(rt.gr, [])
        versions[:] = [v for v in versions if (v.group, v.version) != (rt.group, rt.version)]
        versions.append(rt)
        versions.sort(key=lambda t: (t.group != rt.gr[0], _version_key(t.version)))

    def resolve(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def versions_of(self, gr: tuple[str, str]) -> list[ResourceType]:
        return list(self._by_gr.get(gr, ()))

    def storage_type(self, gr: tuple[str, str]) -> ResourceType | None:
        versions = self._by_gr.get(gr)
        if not versions:
            return None
        for rt in versions:
            if rt.storage_version == rt.version and rt.group == gr[0]:
                return rt
        return versions[0]

    def type_for_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        for rt in self._by_gvr.values():
            if rt.group == group and rt.version == version and rt.kind == kind:
                return rt
        return None

    def all_types(self) -> list[ResourceType]:
        return list(self._by_gvr.values())

    def register_crd(self, crd_name: str, types: list[ResourceType]) -> None:
        self.unregister_crd(crd_name)
        self._crd_types[crd_name] = list(types)
        for rt in types:
            self._add(rt)

    def unregister_crd(self, crd_name: str) -> None:
        for rt in self._crd_types.pop(crd_name, []):
            self._by_gvr.pop((rt.group, rt.version, rt.plural), None)
            versions = self._by_gr.get(rt.gr, [])
            versions[:] = [v for v in versions if (v.group, v.version) != (rt.group, rt.version)]
            if not versions:
                self._by_gr.pop(rt.gr, None)

    def crd_types(self, crd_name: str) -> list[ResourceType]:
        return list(self._crd_types.get(crd_name, ()))

    def groups(self) -> dict[str, list[str]]:
        """group -> versions in preference order (core group "" included)."""
        out: dict[str, list[str]] = {}
        for rt in self._by_gvr.values():
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        for versions in out.values():
            versions.sort(key=_version_key)
        return out

    def types_in(self, group: str, version: str) -> list[ResourceType]:
        return sorted((rt for rt in self._by_gvr.values()
                       if rt.group == group and rt.version == version), key=lambda t: t.plural)

    def tracks_generation(self, rt: ResourceType) -> bool:
        return rt.is_custom or rt.gr in GENERATION_TRACKED
