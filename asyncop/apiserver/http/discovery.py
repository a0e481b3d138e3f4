"""Discovery documents: /version, legacy (/api, /apis, /apis/<g>, /apis/<g>/<v>, /api/v1)
and aggregated (apidiscovery.k8s.io v2 and v2beta1) built from the live Registry.

Invariant: every document is computed from the registry at request time, so a CRD appears
the moment its types are registered and vanishes when they are unregistered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asyncop.apiserver.core.registry import Registry
from asyncop.apiserver.core.resources import ResourceType

SUB_VERBS = ["get", "patch", "update"]
AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"


def version_info(major: str, minor: str) -> dict[str, Any]:
    return {
        "major": major, "minor": minor, "gitVersion": f"v{major}.{minor}.0",
        "gitCommit": "0" * 40, "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.23.0", "compiler": "gc", "platform": "linux/amd64",
    }


def api_versions(address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


# kube-apiserver's APIService group priorities (GroupPriorityMinimum of the built-in groups'
# APIServices); discovery lists groups by priority, highest first, then by name, and every
# CRD group has 1000. So a built-in group comes before any CRD group, whatever the names,
# and kubectl resolves a plural two groups share (`cronjobs`) to the built-in one.
GROUP_PRIORITY: dict[str, int] = {
    "apiregistration.k8s.io": 18000, "apps": 17800, "events.k8s.io": 17750,
    "authentication.k8s.io": 17700, "authorization.k8s.io": 17600, "autoscaling": 17500,
    "batch": 17400, "certificates.k8s.io": 17300, "networking.k8s.io": 17200,
    "policy": 17100, "rbac.authorization.k8s.io": 17000, "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700, "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600, "coordination.k8s.io": 16500, "node.k8s.io": 16300,
    "discovery.k8s.io": 16200, "flowcontrol.apiserver.k8s.io": 16100,
}
CRD_GROUP_PRIORITY = 1000


def ordered_groups(groups: Iterable[str]) -> list[str]:
    """Named groups in kube's discovery order: priority (highest first), then name."""
    return sorted((g for g in groups if g),
                  key=lambda g: (-GROUP_PRIORITY.get(g, CRD_GROUP_PRIORITY), g))


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = registry.groups()
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group_entry(g, groups[g]) for g in ordered_groups(groups)]}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.groups().get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def _resource_entries(rt: ResourceType) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {
        "name": rt.plural, "singularName": rt.singular_name, "namespaced": rt.namespaced,
        "kind": rt.kind, "verbs": list(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    out = [entry]
    if rt.has_status:
        out.append({"name": f"{rt.plural}/status", "singularName": "",
                    "namespaced": rt.namespaced, "kind": rt.kind, "verbs": SUB_VERBS})
    if rt.scale is not None:
        out.append({"name": f"{rt.plural}/scale", "singularName": "",
                    "namespaced": rt.namespaced, "group": "autoscaling", "version": "v1",
                    "kind": "Scale", "verbs": SUB_VERBS})
    if rt.gr == ("", "namespaces"):
        out.append({"name": "namespaces/finalize", "singularName": "", "namespaced": False,
                    "kind": "Namespace", "verbs": ["update"]})
    if rt.gr == ("", "pods"):
        out.append({"name": "pods/log", "singularName": "", "namespaced": True,
                    "kind": "Pod", "verbs": ["get"]})
    return out


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = registry.types_in(group, version)
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for rt in types:
        resources.extend(_resource_entries(rt))
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": resources}


def _aggregated_resource(rt: ResourceType) -> dict[str, Any]:
    kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    entry: dict[str, Any] = {
        "resource": rt.plural, "responseKind": kind,
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular_name, "verbs": list(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subs: list[dict[str, Any]] = []
    if rt.has_status:
        subs.append({"subresource": "status", "responseKind": kind, "verbs": SUB_VERBS})
    if rt.scale is not None:
        subs.append({"subresource": "scale", "responseKind": {
            "group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": SUB_VERBS})
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(registry: Registry, *, core: bool, version: str) -> dict[str, Any]:
    groups = registry.groups()
    items: list[dict[str, Any]] = []
    names = [""] if core else ordered_groups(groups)
    for group in names:
        versions = []
        for v in groups.get(group, []):
            versions.append({"version": v, "freshness": "Current", "resources": [
                _aggregated_resource(rt) for rt in registry.types_in(group, v)]})
        item: dict[str, Any] = {"metadata": {"name": group} if group else {},
                                "versions": versions}
        items.append(item)
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": items}


def aggregated_version(accept: str) -> str | None:
    """The aggregated discovery version the Accept header asks for first (v2 or v2beta1)."""
    for part in accept.split(","):
        params = {p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip()
                  for p in part.split(";")[1:] if "=" in p}
        if params.get("as") == "APIGroupDiscoveryList" and \
                params.get("g") == "apidiscovery.k8s.io" and params.get("v") in ("v2", "v2beta1"):
            return params["v"]
    return None
