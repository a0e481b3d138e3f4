"""Owner references: build a controller reference and find an object's controller.

Invariant: an object has at most one owner reference with `controller: true`.
"""

from __future__ import annotations

from asyncop.api.objects import OwnerReference, RawObject


def owner_reference(owner: RawObject, *, controller: bool = True) -> OwnerReference:
    """A reference to `owner` with controller and blockOwnerDeletion set (the default)."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: RawObject) -> OwnerReference | None:
    """The owner reference with `controller: true`, if any."""
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: RawObject, owner: RawObject) -> bool:
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == owner["metadata"].get("uid")
