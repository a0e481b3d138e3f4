"""Patch bodies: JSON patch, merge patch, strategic merge patch and server-side apply, as the
HTTP layer applies them, with kube's answers for bad patches and apply conflicts.

Built-in kinds are decoded as kube's patch handler decodes them (kube: handlers/patch.go):
`patch_strict_errors` reads the patch's own strict errors (duplicate keys; unknown fields of
JSON patch operations), `decode_result` decodes the patched object per patch type, and
`check_apply` / `apply_duplicates` are server-side apply's typed check and its YAML
duplicate-key check (docs/apiserver.md, "Decoding built-in kinds").

Invariants: `apply_patch` works on the copy it is given and returns a JSON object or raises a
Status error; `server_side_apply` never mutates `current`; a conflict is a 409 listing every
conflicting field with its manager.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin import applycheck, dupkeys, unstructured
from asyncop.apiserver.builtin.decode import decode_patched, kind_node, patch_invalid
from asyncop.apiserver.builtin.gofmt import go_quote, go_v
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
            if len(patch) > patches.MAX_JSON_PATCH_OPS:  # kube: 413 (handlers/patch.go)
                raise errors.too_large(
                    "The allowed maximum operations in a JSON patch is "
                    f"{patches.MAX_JSON_PATCH_OPS}, got {len(patch)}")
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


JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
_OP_FIELDS = {"op": "string", "path": "string", "from": "string", "value": None}


def patch_strict_errors(raw: bytes, content_type: str, validation: str) -> list[str]:
    """The strict errors of the patch body itself (kube decodes it with UnmarshalStrict
    under Strict and Warn): duplicate keys, and for a JSON patch the unknown fields of its
    operations (`json patch unknown field "[0].foo"`); a JSON patch operation of the wrong
    shape is a 400 `error decoding patch: …` there."""
    if validation == "Ignore":
        return []
    parsed = dupkeys.loads_json(raw)
    if parsed is None:
        return []
    found: list[str] = []
    if content_type == JSON_PATCH and isinstance(parsed, list):
        for i, op in enumerate(parsed):
            if not isinstance(op, dict):
                continue
            for key, value in op.items():
                wanted = _OP_FIELDS.get(key, "")
                if wanted == "":
                    found.append(f'unknown field {go_quote(f"[{i}].{key}")}')
                elif wanted == "string" and value is not None and not isinstance(value, str):
                    kind = ("bool" if isinstance(value, bool) else "number"
                            if isinstance(value, int | float) else "array"
                            if isinstance(value, list) else "object")
                    raise errors.bad_request(
                        f"error decoding patch: json: cannot unmarshal {kind} into Go struct "
                        f"field jsonPatchOp.{key} of type string")
            found += [f"duplicate field {go_quote(f'[{i}].{k}')}"
                      for k in getattr(op, "duplicates", ())]
            found += [f"duplicate field {go_quote(p)}" for p in dupkeys.duplicate_paths(
                op.get("value"), f"[{i}].value")]
        return [f"json patch {e}" for e in found]
    return [f"duplicate field {go_quote(p)}" for p in dupkeys.duplicate_paths(parsed)]


def decode_result(rt: ResourceType, result: dict[str, Any], patch: Any, content_type: str,
                  *, minor: int, validation: str, warnings: list[str],
                  patch_errors: list[str]) -> dict[str, Any]:
    """The patched object of a built-in kind decoded as kube's patcher of that type does."""
    if content_type in (JSON_PATCH, MERGE_PATCH):
        return decode_patched(rt, result, minor=minor, validation=validation,
                              warnings=warnings, patch_errors=patch_errors)
    node = kind_node(rt, minor)  # strategic merge patch: kube converts from the map
    if node is None:
        return result
    strict = validation != "Ignore"
    error, unknown = unstructured.convert(node, result, strict=strict)
    if error is not None:
        raise patch_invalid(go_v(patch), error)
    found = [*patch_errors, *unknown]
    if found:
        if validation == "Strict":
            raise patch_invalid(go_v(patch),
                                "strict decoding error: " + ", ".join(found))
        warnings.extend(found)
    return result


def check_apply(rt: ResourceType, patch: dict[str, Any], *, minor: int) -> None:
    """structured-merge-diff's typed check of a built-in kind's apply configuration (400)."""
    node = kind_node(rt, minor)
    if node is None:
        return
    meta = patch.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    error = applycheck.check(node, patch, namespace=str(meta.get("namespace") or ""),
                             name=str(meta.get("name") or ""), group=rt.group,
                             version=rt.version, kind=rt.kind)
    if error is not None:
        raise errors.bad_request(error)


def apply_duplicates(duplicates: list[str], validation: str, warnings: list[str]) -> None:
    """kube's strict YAML check of an apply body, after the apply (Strict: 400 `error
    strict decoding YAML: …`; Warn: the same error as a warning). `duplicates` are go-yaml's
    lines for the body's repeated keys (`wire.decode_yaml_checked`)."""
    if validation == "Ignore" or not duplicates:
        return
    text = f"error converting YAML to JSON: {dupkeys.yaml_unmarshal_errors(duplicates)}"
    if validation == "Strict":
        raise errors.bad_request(f"error strict decoding YAML: {text}")
    warnings.append(text)


__all__ = ["apply_conflict", "apply_duplicates", "apply_patch", "check_apply",
           "check_apply_type", "decode_result", "patch_strict_errors", "server_side_apply"]
