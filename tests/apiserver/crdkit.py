"""A Widget CRD used by the API server tests."""

from __future__ import annotations

from typing import Any

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "shortNames": ["wd"], "categories": ["all"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 10},
                    "color": {"type": "string"}}},
                "status": {"type": "object", "properties": {
                    "ready": {"type": "boolean"}, "replicas": {"type": "integer"}}}}}},
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size",
                                                      "statusReplicasPath": ".status.replicas"}},
        }],
    },
}

WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def widget(name: str, size: int = 1, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": {"size": size}, **extra}


def simple_crd(plural: str, kind: str, spec_schema: dict[str, Any] | None = None, *,
               group: str = "example.com") -> dict[str, Any]:
    """A namespaced one-version (v1) CRD; without `spec_schema` it keeps unknown fields."""
    schema: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if spec_schema is not None:
        schema = {"type": "object", "properties": {"spec": spec_schema}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}
