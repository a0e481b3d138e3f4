"""Namespaces: the `kubernetes.io/metadata.name` label, the `kubernetes` finalizer, phase.

Invariant: spec and status are the server's after create (updates keep the stored ones).
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.fields import Obj, spec_of

NAMESPACES = ("", "namespaces")


def _namespace_defaults(obj: Obj, old: Obj | None) -> None:
    meta = obj["metadata"]
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    labels["kubernetes.io/metadata.name"] = meta["name"]
    if old is None:
        spec = spec_of(obj)
        spec.setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
    else:
        obj["spec"] = old.get("spec", {})
        obj["status"] = old.get("status", {})


DEFAULTS: dict[tuple[str, str], Any] = {NAMESPACES: _namespace_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {}
