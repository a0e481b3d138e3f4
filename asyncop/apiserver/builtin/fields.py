"""Shared field helpers for built-in kinds: safe accessors, field errors, label selectors.

Kube validates a typed Go struct, so by the time its rules run every field has its declared
type. Here the rules run on JSON dicts; the accessors below turn a value of the wrong shape
into an empty one so a rule never raises (the fuzz tests send every type everywhere).

The error constructors mirror apimachinery's `field.Required/Invalid/NotSupported/...` and
render a cause's message exactly as `field.Error.ErrorBody` does (the value rendering is
`gofmt.py`). The composite checks turn apimachinery's string checks (`checks.py`: each
returns kube's messages) into causes on a path, and validate labels and label selectors as
meta/v1/validation does. Invariant: pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import (
    NEGATIVE_MSG,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)
from asyncop.apiserver.builtin.gofmt import go_quote, go_value
from asyncop.apiserver.builtin.knownvalid import remembers_valid
from asyncop.apiserver.core.errors import cause

Obj = dict[str, Any]
Causes = list[StatusCause]

def as_dict(value: Any) -> Obj:
    """`value` if it is an object, else {} (a wrong type then fails the rule that reads it,
    never the server)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    """`value` if it is a string, else "" (the Go zero value)."""
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int | None:
    """`value` if it is an integer (not a bool), else None (absent, or decoding refuses it)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def values_of(items: list[Any], key: str) -> list[Any]:
    """`[item.get(key) for item in items]`, None for an item that is not an object. For the
    hot loops over a pod's many small items (env vars): the usual all-objects list is read
    by `map` in C."""
    try:
        return list(map(dict.get, items, repeat(key)))
    except TypeError:  # an item is not an object
        return [item.get(key) if isinstance(item, dict) else None for item in items]


def spec_of(obj: Obj) -> Obj:
    """`obj["spec"]`, created empty when absent or not an object (for defaulting)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


# --- field.Error constructors (apimachinery pkg/util/validation/field) ------------------------

def _body(kind: str, detail: str) -> str:
    return f"{kind}: {detail}" if detail else kind


def required(path: str, detail: str = "") -> StatusCause:
    return cause(path, "FieldValueRequired", _body("Required value", detail))


def invalid(path: str, value: Any, detail: str) -> StatusCause:
    return cause(path, "FieldValueInvalid", _body(f"Invalid value: {go_value(value)}", detail))


def invalid_omit(path: str, detail: str) -> StatusCause:
    """field.Invalid with `field.OmitValueType{}`: no value shown."""
    return cause(path, "FieldValueInvalid", _body("Invalid value", detail))


def not_supported(path: str, value: Any, supported: Sequence[str]) -> StatusCause:
    detail = ("supported values: " + ", ".join(go_quote(s) for s in supported)
              if supported else "")
    return cause(path, "FieldValueNotSupported",
                 _body(f"Unsupported value: {go_value(value)}", detail))


def forbidden(path: str, detail: str) -> StatusCause:
    return cause(path, "FieldValueForbidden", _body("Forbidden", detail))


def duplicate(path: str, value: Any) -> StatusCause:
    return cause(path, "FieldValueDuplicate", f"Duplicate value: {go_value(value)}")


def not_found(path: str, value: Any, detail: str = "") -> StatusCause:
    return cause(path, "FieldValueNotFound", _body(f"Not found: {go_value(value)}", detail))


def too_long(path: str, max_length: int) -> StatusCause:
    """field.TooLong as apimachinery v0.33 words it (v0.31: `must have at most N bytes`)."""
    return cause(path, "FieldValueTooLong", f"Too long: may not be more than {max_length} bytes")


def too_long_max(path: str, max_length: int) -> StatusCause:
    """field.TooLongMaxLength: deprecated in v0.33, where it is TooLong."""
    return too_long(path, max_length)


def too_many(path: str, actual: int, maximum: int) -> StatusCause:
    return cause(path, "FieldValueTooMany",
                 f"Too many: {actual}: must have at most {maximum} items")


# --- composite checks with field paths ---------------------------------------------------------

def each(path: str, value: Any, messages: Iterable[str]) -> Causes:
    """One Invalid cause per message (apimachinery's `for _, msg := range ...` idiom)."""
    return [invalid(path, value, m) for m in messages]


def dns1123_label(value: str, path: str) -> Causes:
    return each(path, value, is_dns1123_label(value))


def dns1123_subdomain(value: str, path: str) -> Causes:
    return each(path, value, is_dns1123_subdomain(value))


def nonnegative(value: Any, path: str) -> Causes:
    """ValidateNonnegativeField (wrong-typed values are decoding's to refuse)."""
    number = as_int(value)
    return [invalid(path, number, NEGATIVE_MSG)] if number is not None and number < 0 else []


def label_name(name: str, path: str) -> Causes:
    return each(path, name, is_qualified_name(name))


@remembers_valid
def labels(value: Any, path: str) -> Causes:
    """ValidateLabels: every key a qualified name, every value a label value (kube walks a Go
    map in random order; here keys are sorted). Workloads repeat their labels (template,
    selector): a valid set is remembered (`knownvalid`)."""
    out: Causes = []
    for key, val in sorted(as_dict(value).items()):
        out += label_name(str(key), path)
        out += each(path, val, is_label_value(as_str(val)))
    return out


def label_selector(selector: Any, path: str, *, allow_invalid_values: bool = False) -> Causes:
    """ValidateLabelSelector (meta/v1/validation) with its LabelSelectorValidationOptions."""
    if not isinstance(selector, dict):
        return []
    out = labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(as_list(selector.get("matchExpressions"))):
        out += selector_requirement(as_dict(expr), f"{path}.matchExpressions[{i}]",
                                    allow_invalid_values=allow_invalid_values)
    return out


def selector_requirement(expr: Obj, path: str, *, allow_invalid_values: bool,
                         node: bool = False) -> Causes:
    """ValidateLabelSelectorRequirement; with `node`, core's ValidateNodeSelectorRequirement,
    the same rules plus the Gt and Lt operators (exactly one value)."""
    operator, values = expr.get("operator"), as_list(expr.get("values"))
    out: Causes = []
    if operator in ("In", "NotIn"):
        if not values:
            out.append(required(f"{path}.values",
                                "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            out.append(forbidden(f"{path}.values", "may not be specified when `operator` is "
                                 "'Exists' or 'DoesNotExist'"))
    elif node and operator in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(required(f"{path}.values", "must be specified single value when "
                                "`operator` is 'Lt' or 'Gt'"))
    else:
        out.append(invalid(f"{path}.operator", as_str(operator), "not a valid selector operator"))
    out += label_name(as_str(expr.get("key")), f"{path}.key")
    if not allow_invalid_values:
        for i, value in enumerate(values):
            out += each(f"{path}.values[{i}]", value, is_label_value(as_str(value)))
    return out


def selector_matches(selector: Any, pod_labels: Any) -> bool:
    """Whether a LabelSelector selects a set of labels (LabelSelectorAsSelector + Matches)."""
    sel, have = as_dict(selector), as_dict(pod_labels)
    for label, value in as_dict(sel.get("matchLabels")).items():
        if have.get(label) != value:
            return False
    for raw in as_list(sel.get("matchExpressions")):
        expr = as_dict(raw)
        key, op, values = as_str(expr.get("key")), expr.get("operator"), \
            as_list(expr.get("values"))
        present = key in have
        if (op == "In" and have.get(key) not in values) or (op == "Exists" and not present) \
                or (op == "NotIn" and present and have.get(key) in values) \
                or (op == "DoesNotExist" and present):
            return False
    return True


def selector_is_empty(selector: Any) -> bool:
    sel = as_dict(selector)
    return not sel.get("matchLabels") and not sel.get("matchExpressions")
