"""Structural-schema checks and JSON paths into a schema.

`check_structural(owner, schema)` applies the rules kube-apiserver applies to a CRD's
openAPIV3Schema ("structural schema" in apiextensions, plus the list/map-type rules), so a
generated CRD that passes is one the server accepts:

- every node has a `type`, except `x-kubernetes-int-or-string` and
  `x-kubernetes-preserve-unknown-fields` nodes; int-or-string nodes have no type;
- `properties` and `additionalProperties` are never both set; arrays have one `items`;
- `anyOf/allOf/oneOf/not` carry value validations only; the conversion emits just kube's
  IntOrString form, `anyOf: [{type: integer}, {type: string}]` on an int-or-string node
  (controller-gen's, for kube's IntOrString and Quantity), which kube exempts;
- `x-kubernetes-list-type` only on arrays; `map` needs object items whose map keys are
  scalar properties that are required or defaulted; `set` needs scalar (or atomic) items;
  `x-kubernetes-map-type` only on objects; an embedded resource is an object;
- CEL rules have a `rule`, a one-line message, a `reason` kube knows, a `fieldPath` that
  is a path, and `optionalOldSelf` only on transition rules (rules that use oldSelf).

`check_root(owner, root)` adds the rules for the top of a resource schema: an object whose
`apiVersion` and `kind` are plain strings, whose `metadata` says nothing but `type: object`
(kube implies the rest), and with no defaults at the root, on metadata, apiVersion or kind.

`node_at(schema, ".spec.replicas")` follows a printer-column style JSON path (with `[...]`
list selectors) to the schema node it names, or None. Invariant: all are pure functions.
"""

from __future__ import annotations

import re
from typing import Any

from asyncop.crd.errors import CRDError
from asyncop.crd.markers import RULE_REASONS

Schema = dict[str, Any]
SCALARS = ("string", "integer", "number", "boolean")
_TYPES = (*SCALARS, "array", "object")
_COMBINATORS = ("anyOf", "allOf", "oneOf", "not")
INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
"""kube's IntOrString form under anyOf (kube: isIntOrStringAnyOfPattern), the one allowed."""


def check_structural(owner: str, schema: Schema, path: str = "") -> None:
    def fail(problem: str) -> CRDError:
        return CRDError(f"{owner}: {path}: {problem}" if path else f"{owner}: {problem}")

    typ = schema.get("type")
    if typ is not None and typ not in _TYPES:
        raise fail(f"type {typ!r} is not one of {', '.join(_TYPES)}")
    if schema.get("x-kubernetes-int-or-string"):
        if typ is not None:
            raise fail("an int-or-string field cannot also have a type")
    elif typ is None and not schema.get("x-kubernetes-preserve-unknown-fields"):
        raise fail("no type (structural schemas need one on every field)")
    if "properties" in schema and "additionalProperties" in schema:
        raise fail("properties and additionalProperties together are not structural")
    if typ == "array" and not isinstance(schema.get("items"), dict):
        raise fail("an array needs one items schema")
    for key in _COMBINATORS:
        if key in schema and not (key == "anyOf" and schema[key] == INT_OR_STRING_ANY_OF):
            raise fail(f"{key} is not supported here (use a Model or IntOrString)")
    _check_list_and_map_types(fail, schema, typ)
    if schema.get("x-kubernetes-embedded-resource") and typ != "object":
        raise fail("an embedded resource must be an object")
    for rule in schema.get("x-kubernetes-validations") or []:
        _check_rule(fail, rule)
    for name, prop in (schema.get("properties") or {}).items():
        check_structural(owner, prop, f"{path}.{name}" if path else name)
    if isinstance(schema.get("additionalProperties"), dict):
        check_structural(owner, schema["additionalProperties"], f"{path}[key]")
    if isinstance(schema.get("items"), dict):
        check_structural(owner, schema["items"], f"{path}[*]")


def check_root(owner: str, root: Schema) -> None:
    """The rules for the top of a resource schema (see the module docstring)."""
    if root.get("type") != "object":
        raise CRDError(f"{owner}: the root of a resource schema must be an object")
    props = root.get("properties") or {}
    for key in ("apiVersion", "kind"):
        if key in props and props[key].get("type") != "string":
            raise CRDError(f"{owner}: {key} must be a string")
    meta = props.get("metadata")
    if meta is not None and meta != {"type": "object"}:
        raise CRDError(f"{owner}: metadata must be declared as ObjectMeta (kube implies its "
                       "schema; only type: object may be stated)")
    for key in ("apiVersion", "kind", "metadata"):
        if "default" in props.get(key, {}):
            raise CRDError(f"{owner}: {key} cannot have a default")
    if "default" in root:
        raise CRDError(f"{owner}: the root of a resource schema cannot have a default")
    check_structural(owner, root)


def _check_list_and_map_types(fail: Any, schema: Schema, typ: Any) -> None:
    list_type = schema.get("x-kubernetes-list-type")
    if list_type is not None:
        if typ != "array":
            raise fail(f"x-kubernetes-list-type {list_type} is for lists only")
        items = schema.get("items") or {}
        if list_type == "set" and items.get("type") not in SCALARS and \
                items.get("x-kubernetes-map-type") != "atomic":
            raise fail("a ListSet holds scalars (or atomic maps); use ListMap for objects")
        if list_type == "map":
            _check_map_keys(fail, schema, items)
    elif "x-kubernetes-list-map-keys" in schema:
        raise fail("x-kubernetes-list-map-keys needs x-kubernetes-list-type: map")
    if "x-kubernetes-map-type" in schema and typ != "object":
        raise fail("x-kubernetes-map-type is for objects only")


def _check_map_keys(fail: Any, schema: Schema, items: Schema) -> None:
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if items.get("type") != "object":
        raise fail("a ListMap holds objects (a Model)")
    props = items.get("properties") or {}
    required = set(items.get("required") or [])
    for key in keys:
        prop = props.get(key)
        if prop is None:
            raise fail(f"ListMap key {key!r} is not a field of the items")
        if prop.get("type") not in SCALARS:
            raise fail(f"ListMap key {key!r} must be a scalar field")
        if key not in required and "default" not in prop:
            raise fail(f"ListMap key {key!r} must be required or have a default")


def _check_rule(fail: Any, rule: Schema) -> None:
    if not rule.get("rule"):
        raise fail("a validation rule needs a rule")
    message = rule.get("message")
    if message is not None and (not message.strip() or "\n" in message):
        raise fail(f"rule message {message!r} must be one non-empty line")
    reason = rule.get("reason")
    if reason is not None and reason not in RULE_REASONS:
        raise fail(f"rule reason {reason!r} is not one of {', '.join(RULE_REASONS)}")
    if rule.get("optionalOldSelf") is not None and "oldSelf" not in rule["rule"]:
        raise fail("optional_old_self is only for transition rules (rules that use oldSelf)")
    field_path = rule.get("fieldPath")
    if field_path is not None and not field_path.startswith((".", "[")):
        raise fail(f"rule field_path {field_path!r} must be a path such as .spec.replicas")


_SEGMENT = re.compile(r"\.([A-Za-z0-9_\-]+)((?:\[[^\]]*\])*)")


def node_at(schema: Schema, json_path: str) -> Schema | None:
    """The schema node a simple JSON path names (`.spec.size`, `.status.conditions[0].type`,
    `.status.conditions[?(@.type=="Ready")].status`); None if it names no declared field.
    A path that enters a preserve-unknown-fields node resolves to that node."""
    pos, node = 0, schema
    while pos < len(json_path):
        m = _SEGMENT.match(json_path, pos)
        if m is None:
            return None
        props = node.get("properties") or {}
        if node.get("x-kubernetes-preserve-unknown-fields") and m.group(1) not in props:
            return node
        nxt = props.get(m.group(1))
        if nxt is None and isinstance(node.get("additionalProperties"), dict):
            nxt = node["additionalProperties"]
        if nxt is None:
            return None
        node = nxt
        for _ in re.findall(r"\[[^\]]*\]", m.group(2)):
            if node.get("type") != "array":
                return None
            node = node.get("items") or {}
        pos = m.end()
    return node
