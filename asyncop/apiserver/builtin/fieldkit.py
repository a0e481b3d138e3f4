"""Checks for the Service, Ingress, NetworkPolicy, HPA, PDB, RBAC, Lease and Event families.

kube's field.Error constructors (apimachinery util/validation/field) with their exact
messages, the apimachinery string checks they are fed with (util/validation, the label checks
of meta/v1/validation), IP and CIDR parsing as kube's netutils does it, and Go's rendering of
an offending value (`ErrorBody`: strings as %q, numbers and booleans as %v, nil as `null`,
anything else as %#v). The accessors come from `fields`. Invariant: pure functions, no I/O.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import Obj, as_dict, as_int, as_list, as_str, spec_of
from asyncop.apiserver.builtin.gofmt import go_quote, go_value

# the accessors, re-exported for the family modules that import everything from here
__all__ = ["Obj", "as_dict", "as_int", "as_list", "as_str", "spec_of"]

def field_required(path: str, detail: str = "") -> StatusCause:
    return _field_cause(path, "FieldValueRequired", "Required value", detail)


def field_invalid(path: str, value: Any, detail: str) -> StatusCause:
    return _field_cause(path, "FieldValueInvalid", f"Invalid value: {go_value(value)}", detail)


def field_not_supported(path: str, value: Any, supported: Sequence[str]) -> StatusCause:
    detail = "supported values: " + ", ".join(go_quote(v) for v in supported) if supported \
        else ""
    return _field_cause(path, "FieldValueNotSupported",
                        f"Unsupported value: {go_value(value)}", detail)


def field_forbidden(path: str, detail: str) -> StatusCause:
    return _field_cause(path, "FieldValueForbidden", "Forbidden", detail)


def field_duplicate(path: str, value: Any) -> StatusCause:
    return _field_cause(path, "FieldValueDuplicate", f"Duplicate value: {go_value(value)}", "")


def field_too_long(path: str, limit: int) -> StatusCause:
    """field.TooLong as kube 1.33 words it (1.31 and older: `must have at most N bytes`)."""
    return _field_cause(path, "FieldValueTooLong", "Too long",
                        f"may not be more than {limit} bytes")


def _field_cause(path: str, reason: str, head: str, detail: str) -> StatusCause:
    return {"reason": reason, "message": f"{head}: {detail}" if detail else head,
            "field": path}


# apimachinery util/validation: each returns the list of problems kube reports.
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_PERCENT_FMT = "[0-9]+%"
_WILDCARD_FMT = "\\*\\." + _DNS1123_SUBDOMAIN_FMT
_RE = {fmt: re.compile("^" + fmt + "$") for fmt in (
    _DNS1123_LABEL_FMT, _DNS1123_SUBDOMAIN_FMT, _DNS1035_FMT, _QNAME_FMT, _LABEL_VALUE_FMT,
    _CONFIG_KEY_FMT, _PERCENT_FMT, _WILDCARD_FMT)}
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
              "with an alphanumeric character")


def _matches(fmt: str, value: str) -> bool:
    return _RE[fmt].fullmatch(value) is not None and "\n" not in value


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(limit: int) -> str:
    return f"must be no more than {limit} characters"


def dns1123_label_errors(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _matches(_DNS1123_LABEL_FMT, value):
        errs.append("must not contain dots" if _matches(_DNS1123_SUBDOMAIN_FMT, value) else
                    regex_error("a lowercase RFC 1123 label must consist of lower case "
                                "alphanumeric characters or '-', and must start and end with an "
                                "alphanumeric character", _DNS1123_LABEL_FMT, "my-name",
                                "123-abc"))
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    errs = [max_len_error(253)] if len(value) > 253 else []
    if not _matches(_DNS1123_SUBDOMAIN_FMT, value):
        errs.append(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character",
            _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1035_label_errors(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _matches(_DNS1035_FMT, value):
        errs.append(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character",
            _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def wildcard_dns1123_subdomain_errors(value: str) -> list[str]:
    errs = [max_len_error(253)] if len(value) > 253 else []
    if not _matches(_WILDCARD_FMT, value):
        errs.append(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS "
            "subdomain, which must consist of lower case alphanumeric characters, '-' or '.' "
            "and end with an alphanumeric character", _WILDCARD_FMT, "*.example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """IsQualifiedName (a label key): an optional DNS subdomain prefix and '/', then a name."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain_errors(prefix)]
    else:
        return ["a qualified name " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name",
                                                  "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _matches(_QNAME_FMT, name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name",
                                               "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _matches(_LABEL_VALUE_FMT, value):
        errs.append(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', "
            "'_' or '.', and must start and end with an alphanumeric character",
            _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def port_num_errors(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name_errors(port: str) -> list[str]:
    """IsValidPortName (an IANA_SVC_NAME)."""
    errs = [max_len_error(15)] if len(port) > 15 else []
    if not re.fullmatch("[-a-z0-9]+", port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port.startswith("-") or port.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def percent_errors(value: str) -> list[str]:
    if _matches(_PERCENT_FMT, value):
        return []
    return [regex_error("a valid percent string must be a numeric string followed by an "
                        "ending '%'", _PERCENT_FMT, "1%", "93%")]


def config_key_errors(key: str) -> list[str]:
    """IsConfigMapKey (ConfigMap and Secret keys)."""
    errs = [max_len_error(253)] if len(key) > 253 else []
    if not _matches(_CONFIG_KEY_FMT, key):
        errs.append(regex_error("a valid config key must consist of alphanumeric characters, "
                                "'-', '_' or '.'", _CONFIG_KEY_FMT, "key.name", "KEY_NAME",
                                "key-name"))
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def path_segment_errors(name: str) -> list[str]:
    """IsValidPathSegmentName (apimachinery api/validation/path)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def validate_labels(labels: Any, path: str) -> list[StatusCause]:
    """meta/v1 ValidateLabels: every key a qualified name, every value a label value."""
    out: list[StatusCause] = []
    for key, value in as_dict(labels).items():
        out += [field_invalid(path, key, m) for m in qualified_name_errors(str(key))]
        text = as_str(value)
        out += [field_invalid(path, text, m) for m in label_value_errors(text)]
    return out


def validate_label_selector(selector: Any, path: str, *,
                            allow_invalid_values: bool = False) -> list[StatusCause]:
    """meta/v1 ValidateLabelSelector (nil is valid)."""
    sel = as_dict(selector)
    out = validate_labels(sel.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(as_list(sel.get("matchExpressions"))):
        out += _selector_requirement(as_dict(expr), f"{path}.matchExpressions[{i}]",
                                     allow_invalid_values)
    return out


def _selector_requirement(expr: Obj, path: str, allow_invalid: bool) -> list[StatusCause]:
    op = expr.get("operator")
    values = as_list(expr.get("values"))
    out: list[StatusCause] = []
    if op in ("In", "NotIn"):
        if not values:
            out.append(field_required(f"{path}.values",
                                      "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            out.append(field_forbidden(
                f"{path}.values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    else:
        out.append(field_invalid(f"{path}.operator", as_str(op), "not a valid selector operator"))
    key = as_str(expr.get("key"))
    out += [field_invalid(f"{path}.key", key, m) for m in qualified_name_errors(key)]
    if not allow_invalid:
        for i, value in enumerate(values):
            text = as_str(value)
            out += [field_invalid(f"{path}.values[{i}]", text, m)
                    for m in label_value_errors(text)]
    return out


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


_IPV4 = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){3}")


def ip_version(text: Any) -> int:
    """4 or 6 for an address ParseIPSloppy takes, else 0 (IPv4 checked without parsing)."""
    if isinstance(text, str) and _IPV4.fullmatch(text):
        return 4 if all(int(part) <= 255 for part in text.split(".")) else 0
    parsed = parse_ip(text)
    return parsed.version if parsed is not None else 0


def parse_ip(text: Any) -> IPAddress | None:
    """k8s.io/utils/net ParseIPSloppy: Go's net.ParseIP, which also takes IPv4 octets with
    leading zeros (read as decimal) and refuses IPv6 zones."""
    if not isinstance(text, str) or "%" in text or not text:
        return None
    if _IPV4.fullmatch(text):
        octets = [int(part) for part in text.split(".")]
        return ipaddress.IPv4Address(".".join(map(str, octets))) \
            if all(o <= 255 for o in octets) else None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def parse_cidr(text: Any) -> IPNetwork | None:
    """ParseCIDRSloppy: an address (host bits allowed) and a prefix length."""
    if not isinstance(text, str) or text.count("/") != 1:
        return None
    address, _, bits = text.partition("/")
    ip = parse_ip(address)
    if ip is None or not re.fullmatch("[0-9]{1,3}", bits) or int(bits) > ip.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{ip}/{int(bits)}", strict=False)


def ip_errors(path: str, value: str) -> list[StatusCause]:
    """IsValidIP."""
    return [] if ip_version(value) else [field_invalid(path, value, IP_MSG)]


def cidr_errors(path: str, value: str) -> list[StatusCause]:
    """IsValidCIDR."""
    return [] if parse_cidr(value) is not None else [field_invalid(path, value, CIDR_MSG)]
