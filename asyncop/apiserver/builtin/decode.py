"""Decoding built-in kinds the way kube-apiserver's handlers do, with its answers.

The entry points (the walk itself is `walker`, its Go words `goerrors`):

- `decode`: a create or update body (kube: handlers/create.go and update.go). A decode
  error is a 400 `Deployment in version "v1" cannot be handled as a Deployment: <error>`;
  strict errors (unknown and duplicate fields, and go-yaml's duplicate keys of a YAML body,
  first) are that 400 under `fieldValidation=Strict` (`…: strict decoding error: unknown
  field "spec.foo", unknown field "spec.bar"`), one `Warning` each under Warn, nothing
  under Ignore. Unknown fields are dropped in every mode.
- `decode_patched`: the result of a JSON or merge patch (kube: handlers/patch.go's
  jsonPatcher): errors are a 422 with an empty kind and name, one cause on field `patch`
  whose value is the patched document (`"" is invalid: patch: Invalid value: "{…}": strict
  decoding error: …`); the patch's own strict errors (`patch_errors`) come first.

Strategic merge patches and server-side apply have their own decoders (`unstructured`,
`applycheck`). Invariants: only built-in kinds with a kube definition in the server's minor
are decoded (custom resources keep their structural schemas); nothing here keeps state.
"""

from __future__ import annotations

from typing import Any

import orjson

from asyncop.api import BadRequest, Invalid, StatusCause, status_body
from asyncop.apiserver.builtin import dupkeys, gotypes, walker
from asyncop.apiserver.builtin.gofmt import go_quote
from asyncop.apiserver.builtin.quantityhook import canonical_quantity
from asyncop.apiserver.core.resources import ResourceType

__all__ = ["canonical_quantity", "decode", "decode_canonical", "decode_patched", "kind_node",
           "patch_invalid"]

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"


def kind_node(rt: ResourceType, minor: int) -> gotypes.Node | None:
    """The compiled Go type of a built-in kind (None: not decoded)."""
    if rt.is_custom:
        return None
    return gotypes.compiled(minor, rt.group, rt.version, rt.kind)


def decode_prefix(rt: ResourceType) -> str:
    return f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '


def decode(rt: ResourceType, obj: Any, *, minor: int, validation: str,
           warnings: list[str], raw: bytes | None = None,
           yaml_duplicates: list[str] | None = None) -> Any:
    """A create/update body decoded as kube decodes it; returns the object to write (the
    same dict, unless duplicate keys made it parse `raw` again). Raises a 400 BadRequest."""
    return decode_canonical(rt, obj, minor=minor, validation=validation, warnings=warnings,
                            raw=raw, yaml_duplicates=yaml_duplicates)[0]


def decode_canonical(rt: ResourceType, obj: Any, *, minor: int, validation: str,
                     warnings: list[str], raw: bytes | None = None,
                     yaml_duplicates: list[str] | None = None) -> tuple[Any, bool]:
    """`decode`, and whether every Quantity of the object it returns is known to be in the
    form `canonical.canonicalize` writes (the fast walk met none it would rewrite)."""
    node = kind_node(rt, minor)
    if node is None or not isinstance(obj, dict):
        return obj, False
    strict = validation != IGNORE
    out = walker.decode_value(node, obj, strict=strict, raw=raw)
    if out.fatal is not None:
        raise BadRequest(status_body(400, decode_prefix(rt) + out.fatal))
    errors = out.strict
    if strict and yaml_duplicates:
        errors = [dupkeys.yaml_unmarshal_errors(yaml_duplicates), *errors]
    if errors:
        if validation == STRICT:
            raise BadRequest(status_body(400, decode_prefix(rt) + "strict decoding error: "
                                         + ", ".join(errors)))
        warnings.extend(errors)
    return out.obj, out.canonical


def decode_patched(rt: ResourceType, obj: dict[str, Any], *, minor: int, validation: str,
                   warnings: list[str], patch_errors: list[str]) -> dict[str, Any]:
    """A JSON/merge-patched object decoded as kube's jsonPatcher decodes it (422s)."""
    node = kind_node(rt, minor)
    if node is None:
        return obj
    rendered = go_json(obj)  # the document the errors show: before unknown fields go
    strict = validation != IGNORE
    out = walker.decode_value(node, obj, strict=strict)
    if out.fatal is not None:  # kube: non-strict errors trump the patch's strict ones
        raise patch_invalid(rendered, out.fatal)
    errors = [*patch_errors, *out.strict] if strict else []
    if errors:
        if validation == STRICT:
            raise patch_invalid(rendered, "strict decoding error: " + ", ".join(errors))
        warnings.extend(errors)
    return out.obj


def patch_invalid(value: str, detail: str) -> Invalid:
    """kube's 422 for a patch that does not decode: `NewInvalid(GroupKind{}, "", …)` with
    one `patch` cause whose value is the patched document."""
    message = f"Invalid value: {go_quote(value)}: {detail}"
    cause: StatusCause = {"reason": "FieldValueInvalid", "message": message, "field": "patch"}
    return Invalid(status_body(422, f' "" is invalid: patch: {message}', causes=[cause]))


def go_json(obj: Any) -> str:
    """`obj` as Go's json.Marshal writes a map: compact, keys sorted, `<>&` escaped."""
    text = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return text
