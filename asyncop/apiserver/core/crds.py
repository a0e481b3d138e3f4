"""CustomResourceDefinitions (apiextensions.k8s.io/v1): validation, defaults, served types.

`validate_crd(crd)` returns the kube-style causes that make a CRD invalid (422);
`default_crd(crd)` applies the server-side defaults (docs/apiserver.md, "CRD defaults") in
place; `resource_types(crd)` describes every served version as an immutable `ResourceType`.

Invariants:
- causes carry kube's field paths (`spec.versions[0].schema.openAPIV3Schema.properties[spec]
  .type`) and `field.Error` messages;
- a CRD that passes `validate_crd` always yields at least one ResourceType, with the
  storage version recorded on every type;
- a version without `additionalPrinterColumns` gets kube's default `Age` column.
"""

from __future__ import annotations

import re
from typing import Any

from asyncop.api.status import StatusCause
from asyncop.apiserver.core.resources import ResourceType, ScaleSpec
from asyncop.apiserver.schema.structural import validate_structural
from asyncop.apiserver.schema.text import go_value

__all__ = [
    "DEFAULT_AGE_COLUMN",
    "default_crd",
    "resource_types",
    "validate_crd",
    "validate_crd_update",
]

DEFAULT_AGE_COLUMN: dict[str, Any] = {
    "name": "Age",
    "type": "date",
    "jsonPath": ".metadata.creationTimestamp",
}
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _cause(reason: str, message: str, field: str) -> StatusCause:
    return {"reason": reason, "message": message, "field": field}


def _required(field: str, detail: str = "") -> StatusCause:
    return _cause("FieldValueRequired", f"Required value: {detail}" if detail else "Required value",
                  field)


def _invalid(field: str, value: Any, detail: str) -> StatusCause:
    return _cause("FieldValueInvalid", f"Invalid value: {go_value(value)}: {detail}", field)


def _unsupported(field: str, value: Any, supported: tuple[str, ...]) -> StatusCause:
    listed = ", ".join(go_value(s) for s in supported)
    message = f"Unsupported value: {go_value(value)}: supported values: {listed}"
    return _cause("FieldValueNotSupported", message, field)


def _spec(crd: dict[str, Any]) -> dict[str, Any]:
    spec = crd.get("spec")
    return spec if isinstance(spec, dict) else {}


def _names(spec: dict[str, Any]) -> dict[str, Any]:
    names = spec.get("names")
    return names if isinstance(names, dict) else {}


def _versions(spec: dict[str, Any]) -> list[dict[str, Any]]:
    versions = spec.get("versions")
    if not isinstance(versions, list):
        return []
    return [v for v in versions if isinstance(v, dict)]


def validate_crd(crd: dict[str, Any]) -> list[StatusCause]:
    """All validation errors of a CRD object (empty when it may be stored)."""
    out: list[StatusCause] = []
    spec = _spec(crd)
    names = _names(spec)
    group = spec.get("group")
    plural = names.get("plural")
    if not group:
        out.append(_required("spec.group"))
    elif not isinstance(group, str) or "." not in group:
        out.append(_invalid("spec.group", group, "should be a domain with at least one dot"))
    _validate_names(out, names)
    name = (crd.get("metadata") or {}).get("name")
    if group and plural and name != f"{plural}.{group}":
        out.append(_invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    scope = spec.get("scope")
    if not scope:
        out.append(_required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        out.append(_unsupported("spec.scope", scope, ("Cluster", "Namespaced")))
    if spec.get("preserveUnknownFields") is True:
        detail = ("cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                  "spec.versions[*].schema instead")
        out.append(_invalid("spec.preserveUnknownFields", True, detail))
    _validate_versions(out, spec)
    _validate_conversion(out, spec.get("conversion"))
    return out


def _validate_conversion(out: list[StatusCause], conversion: Any) -> None:
    if not isinstance(conversion, dict):
        return
    strategy = conversion.get("strategy")
    webhook = conversion.get("webhook")
    if strategy not in ("None", "Webhook"):
        out.append(_unsupported("spec.conversion.strategy", strategy, ("None", "Webhook")))
        return
    if strategy == "None":
        if webhook is not None:
            out.append(_cause("FieldValueForbidden", "Forbidden: should not be set when strategy "
                              "is not set to Webhook", "spec.conversion.webhook"))
        return
    if not isinstance(webhook, dict) or not webhook.get("clientConfig"):
        out.append(_required("spec.conversion.webhook", "required when strategy is set to "
                                                        "Webhook"))
        return
    versions = webhook.get("conversionReviewVersions")
    if not versions or not {"v1", "v1beta1"} & set(versions):
        out.append(_required("spec.conversion.webhook.conversionReviewVersions",
                             "must include at least one of v1, v1beta1"))
    client = webhook["clientConfig"]
    if not isinstance(client, dict) or ("url" in client) == ("service" in client):
        out.append(_required("spec.conversion.webhook.clientConfig",
                             "exactly one of url or service is required"))


def validate_crd_update(new: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
    """`validate_crd(new)` plus the update rules: immutable group and scope, and every
    version in `status.storedVersions` must still be listed in `spec.versions`."""
    out = validate_crd(new)
    new_spec, old_spec = _spec(new), _spec(old)
    for key in ("group", "scope"):
        if old_spec.get(key) and new_spec.get(key) != old_spec.get(key):
            out.append(_invalid(f"spec.{key}", new_spec.get(key), "field is immutable"))
    listed = {v.get("name") for v in _versions(new_spec)}
    status = new.get("status") if isinstance(new.get("status"), dict) else old.get("status")
    stored = (status or {}).get("storedVersions") or []
    for i, version in enumerate(stored if isinstance(stored, list) else []):
        if version not in listed:
            out.append(_invalid(f"status.storedVersions[{i}]", version,
                                "must appear in spec.versions"))
    return out


def _validate_names(out: list[StatusCause], names: dict[str, Any]) -> None:
    plural = names.get("plural")
    if not plural:
        out.append(_required("spec.names.plural"))
    elif not isinstance(plural, str) or not _DNS_LABEL.match(plural):
        out.append(_invalid("spec.names.plural", plural, _LABEL_MSG))
    singular = names.get("singular")
    if singular and (not isinstance(singular, str) or not _DNS_LABEL.match(singular)):
        out.append(_invalid("spec.names.singular", singular, _LABEL_MSG))
    kind = names.get("kind")
    if not kind:
        out.append(_required("spec.names.kind"))
    elif not isinstance(kind, str) or not _KIND.match(kind):
        detail = "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?"
        out.append(_invalid("spec.names.kind", kind, detail))
    list_kind = names.get("listKind")
    if list_kind and list_kind == kind:
        detail = "kind and listKind may not be the same"
        out.append(_invalid("spec.names.listKind", list_kind, detail))
    for key in ("shortNames", "categories"):
        values = names.get(key) or []
        if not isinstance(values, list):
            out.append(_invalid(f"spec.names.{key}", values, "must be a list of strings"))
            continue
        for i, v in enumerate(values):
            if not isinstance(v, str) or not _DNS_LABEL.match(v):
                out.append(_invalid(f"spec.names.{key}[{i}]", v, _LABEL_MSG))


def _validate_versions(out: list[StatusCause], spec: dict[str, Any]) -> None:
    raw = spec.get("versions")
    versions = _versions(spec)
    if not versions:
        out.append(_required("spec.versions", "must have exactly one version marked as storage "
                                              "version"))
        return
    storage = [v for v in versions if v.get("storage") is True]
    if len(storage) != 1:
        shown = [v.get("name") for v in versions]
        detail = "must have exactly one version marked as storage version"
        out.append(_invalid("spec.versions", shown, detail))
    if not any(v.get("served") is True for v in versions):
        shown = [v.get("name") for v in versions]
        out.append(_invalid("spec.versions", shown, "must have at least one served version"))
    seen: set[str] = set()
    top_sub = spec.get("subresources")
    for i, version in enumerate(versions if isinstance(raw, list) else []):
        path = f"spec.versions[{i}]"
        vname = version.get("name")
        if not vname:
            out.append(_required(f"{path}.name"))
        elif not isinstance(vname, str) or not _DNS_1035.match(vname):
            out.append(_invalid(f"{path}.name", vname, _LABEL_MSG.replace("1123", "1035")))
        elif vname in seen:
            out.append(_cause("FieldValueDuplicate", f"Duplicate value: {go_value(vname)}",
                              f"{path}.name"))
        else:
            seen.add(vname)
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            out.append(_required(f"{path}.schema.openAPIV3Schema", "schemas are required"))
        elif not isinstance(schema, dict):
            out.append(_invalid(f"{path}.schema.openAPIV3Schema", schema, "must be an object"))
        else:
            out.extend(validate_structural(schema, f"{path}.schema.openAPIV3Schema"))
        _validate_columns(out, version.get("additionalPrinterColumns"), path)
        sub = version.get("subresources", top_sub)
        _validate_subresources(out, sub, f"{path}.subresources")


def _validate_columns(out: list[StatusCause], columns: Any, path: str) -> None:
    if columns is None:
        return
    if not isinstance(columns, list):
        out.append(_invalid(f"{path}.additionalPrinterColumns", columns, "must be a list"))
        return
    for i, col in enumerate(columns):
        cpath = f"{path}.additionalPrinterColumns[{i}]"
        if not isinstance(col, dict):
            out.append(_invalid(cpath, col, "must be an object"))
            continue
        if not col.get("name"):
            out.append(_required(f"{cpath}.name"))
        ctype = col.get("type")
        if not ctype:
            out.append(_required(f"{cpath}.type"))
        elif ctype not in _COLUMN_TYPES:
            out.append(_unsupported(f"{cpath}.type", ctype, _COLUMN_TYPES))
        fmt = col.get("format")
        if fmt and fmt not in _COLUMN_FORMATS:
            out.append(_unsupported(f"{cpath}.format", fmt, _COLUMN_FORMATS))
        json_path = col.get("jsonPath")
        if not json_path:
            out.append(_required(f"{cpath}.jsonPath"))
        elif not isinstance(json_path, str) or not json_path.startswith("."):
            out.append(_invalid(f"{cpath}.jsonPath", json_path, "must be a simple json path"))


def _validate_subresources(out: list[StatusCause], sub: Any, path: str) -> None:
    if not isinstance(sub, dict):
        return
    scale = sub.get("scale")
    if not isinstance(scale, dict):
        return
    spec_path = scale.get("specReplicasPath")
    if not spec_path:
        out.append(_required(f"{path}.scale.specReplicasPath"))
    elif not str(spec_path).startswith(".spec."):
        detail = "should be a json path under .spec"
        out.append(_invalid(f"{path}.scale.specReplicasPath", spec_path, detail))
    status_path = scale.get("statusReplicasPath")
    if not status_path:
        out.append(_required(f"{path}.scale.statusReplicasPath"))
    elif not str(status_path).startswith(".status."):
        detail = "should be a json path under .status"
        out.append(_invalid(f"{path}.scale.statusReplicasPath", status_path, detail))
    selector = scale.get("labelSelectorPath")
    if selector and not (str(selector).startswith((".spec.", ".status."))):
        detail = "should be a json path under either .spec or .status"
        out.append(_invalid(f"{path}.scale.labelSelectorPath", selector, detail))


def default_crd(crd: dict[str, Any]) -> None:
    """Apply kube's CRD defaults in place: singular, listKind, conversion, storedVersions."""
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    kind = names.get("kind")
    if kind:
        names.setdefault("singular", str(kind).lower())
        names.setdefault("listKind", f"{kind}List")
    spec.setdefault("conversion", {"strategy": "None"})
    storage = [v.get("name") for v in _versions(spec) if v.get("storage") is True]
    status = crd.get("status")
    if not isinstance(status, dict):
        status = crd["status"] = {}
    stored = status.get("storedVersions")
    if not isinstance(stored, list):
        stored = status["storedVersions"] = []
    for name in storage:
        if name and name not in stored:
            stored.append(name)
    status.setdefault("conditions", [])
    status.setdefault("acceptedNames", {"plural": "", "kind": ""})


def _strip_dot(path: str) -> str:
    return path[1:] if path.startswith(".") else path


def resource_types(crd: dict[str, Any]) -> list[ResourceType]:
    """One ResourceType per served version of a (valid) CRD."""
    spec = _spec(crd)
    names = _names(spec)
    kind = str(names.get("kind") or "")
    crd_name = str((crd.get("metadata") or {}).get("name") or "")
    versions = _versions(spec)
    storage = next((str(v.get("name")) for v in versions if v.get("storage") is True), "")
    top_sub = spec.get("subresources")
    out: list[ResourceType] = []
    for version in versions:
        if version.get("served") is not True:
            continue
        sub = version.get("subresources", top_sub)
        sub = sub if isinstance(sub, dict) else {}
        scale_raw = sub.get("scale")
        scale = None
        if isinstance(scale_raw, dict):
            selector = scale_raw.get("labelSelectorPath")
            scale = ScaleSpec(
                spec_replicas_path=_strip_dot(str(scale_raw.get("specReplicasPath") or "")),
                status_replicas_path=_strip_dot(str(scale_raw.get("statusReplicasPath") or "")),
                label_selector_path=_strip_dot(str(selector)) if selector else None,
            )
        columns = version.get("additionalPrinterColumns")
        if columns is None:
            columns = spec.get("additionalPrinterColumns")
        printer = tuple(c for c in columns or [] if isinstance(c, dict)) or (DEFAULT_AGE_COLUMN,)
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        out.append(
            ResourceType(
                group=str(spec.get("group") or ""),
                version=str(version.get("name")),
                plural=str(names.get("plural") or ""),
                kind=kind,
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                singular=str(names.get("singular") or kind.lower()),
                short_names=tuple(str(s) for s in names.get("shortNames") or ()),
                categories=tuple(str(c) for c in names.get("categories") or ()),
                has_status="status" in sub,
                scale=scale,
                schema=schema if isinstance(schema, dict) else None,
                printer_columns=printer,
                crd_name=crd_name,
                storage_version=storage,
                list_kind=str(names.get("listKind") or f"{kind}List"),
            )
        )
    return out
