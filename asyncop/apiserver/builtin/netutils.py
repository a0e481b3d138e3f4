"""IP addresses and CIDRs as kube parses and validates them.

`parse_ip` and `parse_cidr` are k8s.io/utils/net's ParseIPSloppy and ParseCIDRSloppy (Go's
net.ParseIP and ParseCIDR, which also take IPv4 octets with leading zeros, read as decimal,
and refuse IPv6 zones); `ip_errors` and `cidr_errors` are apimachinery's IsValidIP and
IsValidCIDR as field errors, in kube's words. Invariant: pure; never raises on any JSON value.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import invalid

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
    return [] if ip_version(value) else [invalid(path, value, IP_MSG)]


def cidr_errors(path: str, value: str) -> list[StatusCause]:
    """IsValidCIDR."""
    return [] if parse_cidr(value) is not None else [invalid(path, value, CIDR_MSG)]
