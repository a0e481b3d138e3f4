"""Namespaces: the `kubernetes.io/metadata.name` label, the `kubernetes` finalizer, phase.

kube's SetDefaults_Namespace labels every named namespace with its name; the registry's
PrepareForCreate sets status Active and adds the `kubernetes` finalizer to spec.finalizers
(keeping any others), PrepareForUpdate restores spec and status from the stored object (they
change only through /finalize and /status). ValidateNamespace checks each spec finalizer: a
qualified name, and one without a `/` must be a standard one (kubernetes, orphan,
foregroundDeletion). The name itself is a DNS-1123 label (core/objectmeta.validate_name).
Invariant: spec and status are the server's after create (updates keep the stored ones).
"""

from __future__ import annotations

from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import is_qualified_name
from asyncop.apiserver.builtin.fields import Obj, as_dict, as_list, as_str, each, invalid, spec_of

NAMESPACES = ("", "namespaces")
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")


def _namespace_defaults(obj: Obj, old: Obj | None) -> None:
    meta = obj["metadata"]
    if meta.get("name"):
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels["kubernetes.io/metadata.name"] = meta["name"]
    if old is None:
        spec = spec_of(obj)
        finalizers = as_list(spec.get("finalizers"))
        if "kubernetes" not in finalizers:
            spec["finalizers"] = [*finalizers, "kubernetes"]
        obj["status"] = {"phase": "Active"}
    else:
        obj["spec"] = old.get("spec", {})
        obj["status"] = old.get("status", {})


def finalizer_errors(name: Any, path: str) -> list[StatusCause]:
    """validateFinalizerName: ValidateFinalizerName, then validateKubeFinalizerName."""
    text = as_str(name)
    out = each(path, text, is_qualified_name(text))
    if "/" not in text and text not in STANDARD_FINALIZERS:
        out.append(invalid(path, text, "name is neither a standard finalizer name nor is "
                                       "it fully qualified"))
    return out


def _namespace(obj: Obj, old: Obj | None) -> list[StatusCause]:
    """ValidateNamespace on create (the path has no index, as in kube); an update may change
    metadata only, and its spec was just restored from the stored object."""
    if old is not None:
        return []
    out: list[StatusCause] = []
    for finalizer in as_list(as_dict(obj.get("spec")).get("finalizers")):
        out += finalizer_errors(finalizer, "spec.finalizers")
    return out


DEFAULTS: dict[tuple[str, str], Any] = {NAMESPACES: _namespace_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {NAMESPACES: _namespace}
