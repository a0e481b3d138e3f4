"""CRD lifecycle inside the store: register served types, conditions, cleanup on deletion.

On every committed create/update of a CRD the served types are (re)registered synchronously,
so discovery lists them before the write returns (Helm relies on it), and the CRD's status
gets NamesAccepted/Established conditions and acceptedNames in a following MODIFIED event.
Deleting a CRD adds the `customresourcecleanup.apiextensions.k8s.io` finalizer while its
objects are deleted; when the last one is gone the finalizer is removed and the types are
unregistered. Invariant: a type is served iff its CRD exists with NamesAccepted=True.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from asyncop.apiserver.core import crds
from asyncop.apiserver.core.registry import CRD_GR
from asyncop.apiserver.core.resources import ResourceType

if TYPE_CHECKING:
    from asyncop.apiserver.storage.store import Store
    from asyncop.apiserver.storage.writer import Writer

log = structlog.get_logger("asyncop.apiserver.core.crds")

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def served_gr(crd: dict[str, Any]) -> tuple[str, str]:
    spec = crd.get("spec") or {}
    return (str(spec.get("group", "")), str((spec.get("names") or {}).get("plural", "")))


def _condition(type_: str, status: str, reason: str, message: str, now: str,
               previous: list[dict[str, Any]]) -> dict[str, Any]:
    for cond in previous:
        if cond.get("type") == type_ and cond.get("status") == status:
            return {**cond, "reason": reason, "message": message}
    return {"type": type_, "status": status, "lastTransitionTime": now, "reason": reason,
            "message": message}


def _name_conflict(store: Store, crd: dict[str, Any]) -> tuple[str, str] | None:
    """(reason, message) when another CRD of the same group already uses one of the names."""
    spec = crd["spec"]
    names = spec.get("names") or {}
    for other in store.raw_items(CRD_GR):
        if other["metadata"]["name"] == crd["metadata"]["name"]:
            continue
        ospec = other.get("spec") or {}
        if ospec.get("group") != spec.get("group"):
            continue
        accepted = (other.get("status") or {}).get("acceptedNames") or {}
        if names.get("kind") and names.get("kind") == accepted.get("kind"):
            return "KindConflict", f'"{names["kind"]}" is already in use'
        if names.get("singular") and names.get("singular") == accepted.get("singular"):
            return "SingularConflict", f'"{names["singular"]}" is already in use'
        taken = set(accepted.get("shortNames") or ())
        for short in names.get("shortNames") or ():
            if short in taken:
                return "ShortNamesConflict", f'"{short}" is already in use'
    return None


def established(store: Store, crd: dict[str, Any]) -> dict[str, Any]:
    """Register the CRD's types and record NamesAccepted/Established in its status."""
    meta = crd["metadata"]
    status = dict(crd.get("status") or {})
    previous = list(status.get("conditions") or [])
    now = store.now()
    conflict = _name_conflict(store, crd)
    conditions: list[dict[str, Any]]
    if conflict is not None:
        reason, message = conflict
        store.registry.unregister_crd(meta["name"])
        conditions = [
            _condition("NamesAccepted", "False", reason, message, now, previous),
            _condition("Established", "False", "NotAccepted", "not all names are accepted",
                       now, previous),
        ]
    else:
        types: list[ResourceType] = crds.resource_types(crd)
        store.registry.register_crd(meta["name"], types)
        names = dict(crd["spec"].get("names") or {})
        status["acceptedNames"] = names
        conditions = [
            _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now,
                       previous),
            _condition("Established", "True", "InitialNamesAccepted",
                       "the initial names have been accepted", now, previous),
        ]
    keep = [c for c in previous if c.get("type") not in ("NamesAccepted", "Established")]
    status["conditions"] = conditions + keep
    if status == crd.get("status"):
        return crd
    new = {**crd, "metadata": dict(meta), "status": status}
    return store.commit("MODIFIED", CRD_GR, new, crd)


def terminating(store: Store, writer: Writer, crd: dict[str, Any]) -> dict[str, Any]:
    """A CRD got its deletionTimestamp: mark it Terminating and delete every object."""
    status = dict(crd.get("status") or {})
    previous = list(status.get("conditions") or [])
    status["conditions"] = [c for c in previous if c.get("type") != "Terminating"] + [
        _condition("Terminating", "True", "InstanceDeletionInProgress",
                   "CustomResource deletion is in progress", store.now(), previous)]
    new = {**crd, "metadata": dict(crd["metadata"]), "status": status}
    stored = store.commit("MODIFIED", CRD_GR, new, crd)
    gr = served_gr(crd)
    rt = store.registry.storage_type(gr)
    if rt is None:
        return stored
    for obj in store.raw_items(gr):
        meta = obj["metadata"]
        if store.raw_get(gr, meta.get("namespace") or "", meta["name"]) is None:
            continue
        try:
            writer.delete(rt, meta.get("namespace"), meta["name"])
        except Exception:
            log.exception("deleting custom object failed", crd=crd["metadata"]["name"])
    _maybe_finish(store, writer, crd["metadata"]["name"])
    return store.raw_get(CRD_GR, "", crd["metadata"]["name"]) or stored


def custom_object_removed(store: Store, writer: Writer, rt: ResourceType) -> None:
    if rt.crd_name:
        _maybe_finish(store, writer, rt.crd_name)


def _maybe_finish(store: Store, writer: Writer, crd_name: str) -> None:
    crd = store.raw_get(CRD_GR, "", crd_name)
    if crd is None or not crd["metadata"].get("deletionTimestamp"):
        return
    if store.count(served_gr(crd)) > 0:
        return
    finalizers = [f for f in crd["metadata"].get("finalizers") or () if f != CLEANUP_FINALIZER]
    if finalizers == list(crd["metadata"].get("finalizers") or ()):
        return
    new = {**crd, "metadata": {**crd["metadata"], "finalizers": finalizers}}
    if not finalizers:
        new["metadata"].pop("finalizers")
        crd_rt = store.registry.storage_type(CRD_GR)
        assert crd_rt is not None
        writer._remove(crd_rt, new, crd)
    else:
        store.commit("MODIFIED", CRD_GR, new, crd)


def removed(store: Store, crd: dict[str, Any]) -> None:
    """The CRD is gone: stop serving its types and drop any objects left."""
    store.registry.unregister_crd(crd["metadata"]["name"])
    store.drop_objects(served_gr(crd))
    store.hub.cut_resource(served_gr(crd))
    group = (crd.get("spec") or {}).get("group")
    for other in store.raw_items(CRD_GR):  # names it held may now be accepted elsewhere
        if (other.get("spec") or {}).get("group") != group or \
                other["metadata"].get("deletionTimestamp"):
            continue
        conditions = (other.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "NamesAccepted" and c.get("status") == "False"
               for c in conditions):
            established(store, other)
