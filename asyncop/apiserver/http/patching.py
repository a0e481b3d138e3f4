"""Patch bodies: JSON patch, merge patch, strategic merge patch and server-side apply, as the
HTTP layer applies them, with kube's answers for bad patches and apply conflicts.

Invariants: `apply_patch` works on the copy it is given and returns a JSON object or raises a
Status error; `server_side_apply` never mutates `current`; a conflict is a 409 listing every
conflicting field with its manager.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.core import errors
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.http import bodylimits
from asyncop.apiserver.merge import apply
from asyncop.apiserver.merge import patch as patches
from asyncop.apiserver.merge.patch import PatchError
from asyncop.apiserver.storage.objects import copy_obj


def check_apply_type(rt: ResourceType, patch: dict[str, Any]) -> None:
    """kube's field manager (versionCheckManager): an apply configuration names exactly the
    group, version and kind of the endpoint it is sent to."""
    api_version = str(patch.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    kind = str(patch.get("kind") or "")
    if (group, version, kind) != (rt.group, rt.version, rt.kind):
        raise errors.bad_request(f"invalid object type: {group}/{version}, Kind={kind}")


def server_side_apply(rt: ResourceType, current: dict[str, Any] | None, patch: Any, *,
                      manager: str, force: str | None, subresource: str,
                      now: str) -> dict[str, Any]:
    """Server-side apply of `patch` onto `current` (None: a create), errors as kube's."""
    try:
        return apply.server_side_apply(
            copy_obj(current) if current is not None else None, patch,
            manager=manager, force=(force or "").lower() == "true",
            now=now, operation_subresource=subresource,
            ignore_fields=("status",) if rt.has_status and not subresource else (),
            schema=rt.schema if rt.is_custom else None)
    except apply.ApplyConflict as exc:
        raise apply_conflict(rt, str((current or {}).get("metadata", {}).get("name", "")),
                             exc) from exc
    except PatchError as exc:
        raise errors.bad_request(str(exc)) from exc


def apply_patch(rt: ResourceType, doc: dict[str, Any], patch: Any, content_type: str,
                kind: str) -> dict[str, Any]:
    """A JSON, merge or strategic merge patch applied to `doc` (mutated), errors as kube's."""
    try:
        if content_type == "application/json-patch+json":
            if not isinstance(patch, list):
                raise errors.bad_request(
                    "error decoding patch: json: cannot unmarshal object into Go value of "
                    "type []handlers.jsonPatchOp")
            if len(patch) > 10_000:
                raise errors.invalid(rt, doc["metadata"]["name"], [errors.cause(
                    "", "FieldValueTooMany", "Too many: the JSON patch has too many ops")])
            result: Any = patches.json_patch(doc, patch)
            bodylimits.check_value(result)  # copy/move can nest an object in itself
        elif content_type == "application/merge-patch+json":
            if not isinstance(patch, dict):
                raise errors.bad_request("error decoding patch: the merge patch must be a "
                                         "JSON object")
            result = patches.merge_patch(doc, patch)
        else:
            if not isinstance(patch, dict):
                raise errors.bad_request("error decoding patch: the strategic merge patch "
                                         "must be a JSON object")
            result = patches.strategic_merge_patch(doc, patch, kind=kind)
    except PatchError as exc:
        raise errors.invalid(rt, doc["metadata"]["name"], [errors.cause(
            "", "FieldValueInvalid", str(exc))]) from exc
    if not isinstance(result, dict):
        raise errors.bad_request("the patched document is not an object")
    return result


def apply_conflict(rt: ResourceType, name: str, exc: apply.ApplyConflict) -> Any:
    err = errors.conflict(rt, name, "")
    conflicts = exc.conflicts
    n = len(conflicts)
    lines = "".join(f"\n- {c}" for c in conflicts) if n > 1 else (
        f": {conflicts[0]}" if conflicts else "")
    err.status["message"] = exc.message or \
        f"Apply failed with {n} conflict{'s' if n != 1 else ''}{lines}"
    err.status.setdefault("details", {})["causes"] = exc.causes or [
        {"reason": "FieldManagerConflict", "message": c.rsplit(": ", 1)[0],
         "field": c.rsplit(": ", 1)[-1] if ": " in c else ""} for c in conflicts]
    return err


__all__ = ["apply_conflict", "apply_patch", "check_apply_type", "server_side_apply"]
