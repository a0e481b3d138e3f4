"""Object metadata rules: name validation, generateName, server-owned fields, generation.

Pure functions over raw dicts (docs/apiserver.md, "Metadata"). Invariants: uid, creationTimestamp,
generation, deletionTimestamp and deletionGracePeriodSeconds are server-owned (restored from
the old object on update); generation moves only when something outside metadata (and
status, for types with the status subresource) changes.
"""

from __future__ import annotations

import random
import re
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.core import errors
from asyncop.apiserver.core.errors import cause, quote
from asyncop.apiserver.core.resources import ResourceType

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_LABEL_KEY_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def generate_name(prefix: str, rng: random.Random) -> str:
    return prefix[:58] + "".join(rng.choice(_SUFFIX_ALPHABET) for _ in range(5))


#: Kinds whose names kube checks only as path segments (ValidatePathSegmentName): the RBAC
#: kinds (ValidateRBACName), PodDisruptionBudgets (no name check of their own, so only the
#: registry's) and Events written through core/v1 (legacy validation checks no name).
_PATH_SEGMENT_NAMED = frozenset({
    ("rbac.authorization.k8s.io", "roles"), ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"), ("policy", "poddisruptionbudgets"),
    ("", "events")})


def validate_name(rt: ResourceType, name: str) -> list[StatusCause]:
    """kube's name check of the kind (the nameFn its ValidateObjectMeta is given): Namespaces
    a DNS-1123 label (ValidateNamespaceName), Services a DNS-1035 label, the kinds above a
    path segment, every other kind (custom resources too) a DNS-1123 subdomain. Each problem
    is one `metadata.name: Invalid value` cause, in apimachinery's order (length first)."""
    # events.k8s.io Events share core's storage but are DNS subdomains (ValidateEventCreate)
    if rt.gr in _PATH_SEGMENT_NAMED and rt.group == rt.gr[0]:
        if name in (".", ".."):
            problems = [f"may not be '{name}'"]
        else:
            problems = [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]
        return [cause("metadata.name", "FieldValueInvalid", f"Invalid value: {quote(name)}: {p}")
                for p in problems]
    if rt.gr == ("", "namespaces"):
        pattern, limit, msg = _LABEL, 63, _LABEL_MSG
        if not pattern.fullmatch(name) and _SUBDOMAIN.fullmatch(name):
            msg = "must not contain dots"  # IsDNS1123Label: a subdomain with dots
    elif rt.gr == ("", "services"):
        pattern, limit, msg = _DNS1035, 63, _DNS1035_MSG
    else:
        pattern, limit, msg = _SUBDOMAIN, 253, _SUBDOMAIN_MSG
    causes: list[StatusCause] = []
    if len(name) > limit:  # apimachinery's MaxLenError, reported through field.Invalid
        causes.append(cause("metadata.name", "FieldValueInvalid",
                            f"Invalid value: {quote(name)}: must be no more than {limit} "
                            "characters"))
    if not pattern.fullmatch(name):
        causes.append(cause("metadata.name", "FieldValueInvalid",
                            f"Invalid value: {quote(name)}: {msg}"))
    return causes


_GO_TYPES = {"name": "string", "generateName": "string", "namespace": "string",
             "resourceVersion": "string", "uid": "types.UID", "finalizers": "[]string",
             "ownerReferences": "[]v1.OwnerReference",
             "managedFields": "[]v1.ManagedFieldsEntry"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def check_field_types(rt: ResourceType, meta: dict[str, Any]) -> None:
    """400 when a metadata field the server reads has the wrong JSON type, worded as kube's
    typed decoder words it (`json: cannot unmarshal bool into Go struct field
    ObjectMeta.metadata.finalizers of type []string`); elements of finalizers must be
    strings and of ownerReferences objects."""
    for field, go_type in _GO_TYPES.items():
        value = meta.get(field)
        if value is None:
            continue
        wanted = list if go_type.startswith("[]") else str
        bad: Any = None if isinstance(value, wanted) else value
        if bad is None and wanted is list:
            element = str if field == "finalizers" else dict
            bad = next((v for v in value if not isinstance(v, element)), None)
            go_type = go_type[2:] if bad is not None else go_type
        if bad is not None:
            raise errors.bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: json: '
                f"cannot unmarshal {_json_type(bad)} into Go struct field "
                f"ObjectMeta.metadata.{field} of type {go_type}")


TOTAL_ANNOTATION_SIZE = 256 * 1024
"""kube's TotalAnnotationSizeLimitB: keys and values of all annotations together."""


def validate_metadata(meta: dict[str, Any]) -> list[StatusCause]:
    """Labels, annotations, finalizers and ownerReferences shape checks."""
    causes: list[StatusCause] = []
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if values is None:
            continue
        if not isinstance(values, dict):
            causes.append(cause(f"metadata.{field}", "FieldValueTypeInvalid",
                                "Invalid value: must be a map of strings"))
            continue
        for key, value in values.items():
            name = key.rsplit("/", 1)[-1]
            if not _LABEL_KEY_NAME.match(name) or len(name) > 63:
                causes.append(cause(f"metadata.{field}", "FieldValueInvalid",
                                    f"Invalid value: {quote(key)}: name part must consist of "
                                    "alphanumeric characters, '-', '_' or '.', and must start "
                                    "and end with an alphanumeric character"))
            if not isinstance(value, str):
                causes.append(cause(f"metadata.{field}", "FieldValueTypeInvalid",
                                    f"Invalid value: {quote(value)}: must be a string"))
            elif field == "labels" and (len(value) > 63 or (
                    value and not _LABEL_KEY_NAME.match(value))):
                causes.append(cause("metadata.labels", "FieldValueInvalid",
                                    f"Invalid value: {quote(value)}: a valid label must be an "
                                    "empty string or consist of alphanumeric characters, '-', "
                                    "'_' or '.', and must start and end with an alphanumeric "
                                    "character"))
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and sum(
            len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items()
    ) > TOTAL_ANNOTATION_SIZE:
        # kube: ValidateAnnotationsSize (apimachinery pkg/api/validation), as field.TooLong
        causes.append(cause("metadata.annotations", "FieldValueTooLong",
                            f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE} bytes"))
    owners = meta.get("ownerReferences") or []
    controllers = 0
    for ref in owners:
        causes += _owner_reference_causes(ref if isinstance(ref, dict) else {})
        if isinstance(ref, dict) and ref.get("controller"):
            controllers += 1
    if controllers > 1:
        causes.append(cause("metadata.ownerReferences", "FieldValueInvalid",
                            "Invalid value: only one reference can have Controller set to true"))
    return causes


def _owner_reference_causes(ref: dict[str, Any]) -> list[StatusCause]:
    """kube's checks of one ownerReference, worded and placed as kube does (the path has no
    index: `metadata.ownerReferences.apiVersion`)."""
    api_version = str(ref.get("apiVersion") or "")
    parts = api_version.split("/")
    version = parts[-1] if len(parts) <= 2 else ""
    checks = (("apiVersion", api_version, version, "version must not be empty"),
              ("kind", str(ref.get("kind") or ""), ref.get("kind"), "must not be empty"),
              ("name", str(ref.get("name") or ""), ref.get("name"), "must not be empty"),
              ("uid", str(ref.get("uid") or ""), ref.get("uid"), "must not be empty"))
    return [cause(f"metadata.ownerReferences.{key}", "FieldValueInvalid",
                  f"Invalid value: {quote(value)}: {message}")
            for key, value, present, message in checks if not present]


SERVER_OWNED = ("uid", "creationTimestamp", "generation", "deletionTimestamp",
                "deletionGracePeriodSeconds")


def restore_server_fields(new_meta: dict[str, Any], old_meta: dict[str, Any]) -> None:
    for key in SERVER_OWNED:
        if key in old_meta:
            new_meta[key] = old_meta[key]
        else:
            new_meta.pop(key, None)


def spec_changed(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether an update bumps metadata.generation."""
    if rt.is_custom:
        skip = {"metadata", "status"} if rt.has_status else {"metadata"}
        keys = (set(old) | set(new)) - skip - {"apiVersion", "kind"}
        return any(old.get(k) != new.get(k) for k in keys)
    if old.get("spec") != new.get("spec"):
        return True
    if rt.group == "apps":
        old_ann = (old.get("metadata") or {}).get("annotations") or {}
        new_ann = (new.get("metadata") or {}).get("annotations") or {}
        return bool(old_ann != new_ann)
    return False
