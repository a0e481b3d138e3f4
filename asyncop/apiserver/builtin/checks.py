"""apimachinery's value checks: DNS names, qualified names, label values, ports, keys.

Each `is_*` mirrors a function of apimachinery `pkg/util/validation` (v0.33), or of
`api/validation/path` for `is_valid_path_segment_name`, and returns the list of kube's
messages for the value, word for word (empty: valid); `fields.each` turns them into field
errors. The regular expressions are kube's own and match the whole string (Go's `^…$`
without the multi-line flag, so a trailing newline never matches), and lengths are Go's
`len(string)`: UTF-8 bytes, not characters. A valid value — the common case — is answered
by one match (and a length test) before the rule-by-rule messages are built.
Invariant: pure functions of a string (or an int) that never raise.
"""

from __future__ import annotations

import re
from collections.abc import Callable

NEGATIVE_MSG = "must be greater than or equal to 0"
IMMUTABLE_MSG = "field is immutable"


def byte_len(value: str) -> int:
    """Go's `len(s)`: the length of `value` in UTF-8 bytes."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


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
_WILDCARD_FMT = "\\*\\." + _SUBDOMAIN_FMT
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_PERCENT_FMT = "[0-9]+%"
_HEADER_FMT = "[-A-Za-z0-9]+"
_LABEL, _SUBDOMAIN, _DNS1035, _WILDCARD, _QNAME, _LABEL_VALUE, _CONFIG_KEY, _PERCENT, \
    _HEADER, _PORT_NAME = map(re.compile, (
        _LABEL_FMT, _SUBDOMAIN_FMT, _DNS1035_FMT, _WILDCARD_FMT, _QNAME_FMT, _LABEL_VALUE_FMT,
        _CONFIG_KEY_FMT, _PERCENT_FMT, _HEADER_FMT, "[-a-z0-9]+"))
# The happy paths: a value these match (and whose length is in bounds) has no message, so
# the common valid value costs one match; anything else takes the rule-by-rule path below.
# A match implies ASCII, so `len` is then Go's byte length.
_QUALIFIED_OK = re.compile(f"(?:(?P<prefix>{_SUBDOMAIN_FMT})/)?(?P<name>{_QNAME_FMT})")
_PORT_NAME_OK = re.compile("(?=[^a-z]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*")
_ENV_NAME_OK = re.compile("[ -<>-~]+")  # printable ASCII (0x20-0x7E) but '=' (0x3D)
_ENV_NAME_CHARS = re.compile("[ -<>-~]*")

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character")
_WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS "
                 "subdomain, which must consist of lower case alphanumeric characters, '-' or "
                 "'.' and end with an alphanumeric character")
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
              "with an alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character")


def is_dns1123_label(value: str) -> list[str]:
    if len(value) <= 63 and _LABEL.fullmatch(value):
        return []
    errs = [max_len_error(63)] if byte_len(value) > 63 else []
    if not _LABEL.fullmatch(value):
        if _SUBDOMAIN.fullmatch(value):  # a valid subdomain, not a label: it has dots
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    if len(value) <= 253 and _SUBDOMAIN.fullmatch(value):
        return []
    errs = [max_len_error(253)] if byte_len(value) > 253 else []
    if not _SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = [max_len_error(63)] if byte_len(value) > 63 else []
    if not _DNS1035.fullmatch(value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    errs = [max_len_error(253)] if byte_len(value) > 253 else []
    if not _WILDCARD.fullmatch(value):
        errs.append(regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def name_is_dns_subdomain(name: str, *, prefix: bool = False) -> list[str]:
    """apimachinery's NameIsDNSSubdomain (a generateName prefix may end with '-')."""
    if prefix and len(name) > 1 and name.endswith("-"):
        name = name[:-1] + "a"
    return is_dns1123_subdomain(name)


def is_qualified_name(value: str) -> list[str]:
    """IsQualifiedName (a label key): an optional DNS subdomain prefix and '/', then a name."""
    ok = _QUALIFIED_OK.fullmatch(value)
    if ok and len(ok["name"]) <= 63 and (ok["prefix"] is None or len(ok["prefix"]) <= 253):
        return []
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    else:
        return ["a qualified name " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name",
                                                  "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif byte_len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QNAME.fullmatch(name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name",
                                               "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    if len(value) <= 63 and _LABEL_VALUE.fullmatch(value):
        return []
    errs = [max_len_error(63)] if byte_len(value) > 63 else []
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value",
                                "12345"))
    return errs


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """IsValidPortName (IANA_SVC_NAME): at most 15 of [-a-z0-9], a letter, no '--'."""
    if len(port) <= 15 and _PORT_NAME_OK.fullmatch(port):
        return []
    errs = [max_len_error(15)] if byte_len(port) > 15 else []
    if not _PORT_NAME.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port.startswith("-") or port.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_id(value: int) -> list[str]:
    """IsValidUserID / IsValidGroupID: 0 to 2^31-1 (apimachinery's maxUserID and maxGroupID
    are math.MaxInt32)."""
    return [] if 0 <= value <= 0x7FFFFFFF else [inclusive_range_error(0, 0x7FFFFFFF)]


def is_valid_percent(value: str) -> list[str]:
    if _PERCENT.fullmatch(value):
        return []
    return [regex_error("a valid percent string must be a numeric string followed by an ending "
                        "'%'", _PERCENT_FMT, "1%", "93%")]


def is_http_header_name(value: str) -> list[str]:
    if _HEADER.fullmatch(value):
        return []
    return [regex_error("a valid HTTP header must consist of alphanumeric characters or '-'",
                        _HEADER_FMT, "X-Header-Name")]


def is_relaxed_env_var_name(value: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, on in 1.33): printable
    ASCII other than '='."""
    if _ENV_NAME_OK.fullmatch(value):
        return []
    errs = ["environment variable name must be non-empty"] if not value else []
    if not _ENV_NAME_CHARS.fullmatch(value):
        errs.append("a valid environment variable name must consist only of printable ASCII "
                    "characters other than '='")
    return errs


valid_relaxed_env_var_name: Callable[[str], re.Match[str] | None] = _ENV_NAME_OK.fullmatch
"""Truthy exactly when `is_relaxed_env_var_name(value)` is empty (for a hot loop)."""


def is_config_map_key(value: str) -> list[str]:
    """IsConfigMapKey (ConfigMap and Secret keys)."""
    if len(value) <= 253 and _CONFIG_KEY.fullmatch(value) and value != "." and \
            not value.startswith(".."):
        return []
    errs = [max_len_error(253)] if byte_len(value) > 253 else []
    if not _CONFIG_KEY.fullmatch(value):
        errs.append(regex_error("a valid config key must consist of alphanumeric characters, "
                                "'-', '_' or '.'", _CONFIG_KEY_FMT, "key.name", "KEY_NAME",
                                "key-name"))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_valid_path_segment_name(name: str) -> list[str]:
    """IsValidPathSegmentName (apimachinery api/validation/path)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]
