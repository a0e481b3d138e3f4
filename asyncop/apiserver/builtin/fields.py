"""Shared field helpers for built-in kinds: safe accessors and kube's common value checks.

Kube validates a typed Go struct, so by the time its rules run every field has its declared
type. Here the rules run on JSON dicts; the accessors below turn a value of the wrong shape
into an empty one so a rule never raises (the fuzz tests send every type everywhere).

The error constructors mirror apimachinery's `field.Required/Invalid/NotSupported/...` and
render a cause's message exactly as `field.Error.ErrorBody` does (the value rendering is
`gofmt.py`). The `is_*`
checks mirror `k8s.io/apimachinery/pkg/util/validation` and `api/validate/content`: each
returns the list of kube's messages (empty: valid). Invariant: pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.gofmt import go_quote, go_value
from asyncop.apiserver.core.errors import cause

Obj = dict[str, Any]
Causes = list[StatusCause]

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character")


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


# --- apimachinery's value checks (messages are kube's, word for word) -------------------------

NEGATIVE_MSG = "must be greater than or equal to 0"
IMMUTABLE_MSG = "field is immutable"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(f"^{_SUBDOMAIN_FMT}$")
_DNS1035 = re.compile(f"^{_DNS1035_FMT}$")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character")


def is_dns1123_label(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not DNS1123_LABEL.match(value):
        if _SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = [max_len_error(253)] if len(value) > 253 else []
    if not _SUBDOMAIN.match(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _DNS1035.match(value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def name_is_dns_subdomain(name: str, *, prefix: bool = False) -> list[str]:
    """apimachinery's NameIsDNSSubdomain (a generateName prefix may end with '-')."""
    if prefix and len(name) > 1 and name.endswith("-"):
        name = name[:-1] + "a"
    return is_dns1123_subdomain(name)


_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY = re.compile(f"^{_KEY_FMT}$")
_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character")
_VALUE_FMT = f"({_KEY_FMT})?"
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
              "'-', '_' or '.', and must start and end with an alphanumeric character")


def is_qualified_name(value: str) -> list[str]:
    """IsQualifiedName (a label key): an optional DNS subdomain prefix, '/', a name."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a valid label key " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name",
                                                   "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _KEY.match(name):
        errs.append("name part " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name",
                                               "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if value and not _KEY.match(value):
        errs.append(regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """IsValidPortName (IANA_SVC_NAME): at most 15 of [-a-z0-9], a letter, no '--'."""
    errs = [max_len_error(15)] if len(port) > 15 else []
    if not re.fullmatch(r"[-a-z0-9]+", port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_relaxed_env_var_name(value: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, on in 1.33): printable
    ASCII other than '='."""
    errs = ["environment variable name must be non-empty"] if not value else []
    if any(ord(c) > 0x7E or ord(c) < 0x20 or c == "=" for c in value):
        errs.append("a valid environment variable name must consist only of printable ASCII "
                    "characters other than '='")
    return errs


def _chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    return ["must not start with '..'"] if value.startswith("..") else []


def is_config_map_key(value: str) -> list[str]:
    errs = [max_len_error(253)] if len(value) > 253 else []
    if not re.fullmatch(r"[-._a-zA-Z0-9]+", value):
        errs.append(regex_error("a valid config key must consist of alphanumeric characters, "
                                "'-', '_' or '.'", "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME",
                                "key-name"))
    return errs + _chdir_prefix(value)


def is_valid_percent(value: str) -> list[str]:
    if re.fullmatch(r"[0-9]+%", value):
        return []
    return [regex_error("a valid percent string must be a numeric string followed by an ending "
                        "'%'", "[0-9]+%", "1%", "93%")]


def is_http_header_name(value: str) -> list[str]:
    if re.fullmatch(r"[-A-Za-z0-9]+", value):
        return []
    return [regex_error("a valid HTTP header must consist of alphanumeric characters or '-'",
                        "[-A-Za-z0-9]+", "X-Header-Name")]


def is_valid_id(value: int) -> list[str]:
    """IsValidUserID / IsValidGroupID: 0 to 2^32-1."""
    return [] if 0 <= value <= 0xFFFFFFFF else [inclusive_range_error(0, 0xFFFFFFFF)]


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


def labels(value: Any, path: str) -> Causes:
    """ValidateLabels: every key a qualified name, every value a label value (kube walks a Go
    map in random order; here keys are sorted)."""
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


def selector_requirement(expr: Obj, path: str, *, allow_invalid_values: bool) -> Causes:
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
