"""String formats and regex patterns of OpenAPI schemas, checked the way kube-openapi does.

Invariants: unknown formats always pass (kube ignores them); patterns are ECMA/RE2-style
regexes searched unanchored (Go `MatchString`), translated to Python `re` for the few
syntax differences that matter (the end anchor `\\z`; ASCII-only classes as in RE2); an
uncompilable pattern yields None (rejected at CRD time).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import date, datetime
from functools import lru_cache

_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"(?:[Zz]|[+-](\d{2}):?(\d{2}))?$"
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}(-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}$")
_HOSTNAME = re.compile(
    r"^([a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$"
)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$")
_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$")


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> re.Pattern[str] | None:
    """Compile an OpenAPI `pattern`; None when Python cannot compile it."""
    translated = pattern.replace(r"\z", r"\Z")
    try:
        return re.compile(translated, re.ASCII)
    except re.error:
        return None


def _date_time(v: str) -> bool:
    """RFC 3339 and the looser forms go-openapi's strfmt.DateTime accepts (no seconds, no
    zone, `+0000` offsets, a space instead of `T`)."""
    m = _DATE_TIME.match(v)
    if not m:
        return False
    year, month, day, hour, minute, second, off_h, off_m = m.groups()
    try:
        datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
    except ValueError:
        return False
    return off_h is None or (int(off_h) < 24 and int(off_m) < 60)


def _date(v: str) -> bool:
    try:
        date.fromisoformat(v)
    except ValueError:
        return False
    return len(v) == 10


def _byte(v: str) -> bool:
    try:
        base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _ip(kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]) -> Callable[[str], bool]:
    def check(v: str) -> bool:
        try:
            kind(v)
        except ValueError:
            return False
        return True

    return check


def _cidr(v: str) -> bool:
    try:
        ipaddress.ip_network(v, strict=False)
    except ValueError:
        return False
    return "/" in v


_CHECKS: dict[str, Callable[[str], bool]] = {
    "date-time": _date_time,
    "datetime": _date_time,
    "date": _date,
    "byte": _byte,
    "uuid": lambda v: bool(_UUID.match(v)),
    "ipv4": _ip(ipaddress.IPv4Address),
    "ipv6": _ip(ipaddress.IPv6Address),
    "cidr": _cidr,
    "hostname": lambda v: bool(_HOSTNAME.match(v)) and len(v) <= 255,
    "email": lambda v: bool(_EMAIL.match(v)),
    "mac": lambda v: bool(_MAC.match(v)),
    "duration": lambda v: bool(_DURATION.match(v)),
}


def check_format(fmt: str, value: str) -> bool:
    check = _CHECKS.get(fmt)
    return True if check is None else check(value)


def known_format(fmt: str) -> bool:
    return fmt in _CHECKS
