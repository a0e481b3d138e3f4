"""Names of a custom resource: pluralisation and the checks kube-apiserver applies to them.

Invariants: `plural_of` is deterministic and lower-case (kubebuilder's defaults: `Memcached`
-> `memcacheds`, `Policy` -> `policies`, `Box` -> `boxes`); the checks use the same rules as
kube-apiserver's CRD validation (group: a DNS subdomain with at least one dot; version, plural,
singular, short names and categories: DNS-1035 labels), so a class that passes them yields
names the API server accepts.
"""

from __future__ import annotations

import re

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def plural_of(kind: str) -> str:
    word = kind.lower()
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def is_dns1035_label(value: str) -> bool:
    return len(value) <= 63 and bool(_DNS1035.match(value))


def is_group(value: str) -> bool:
    """A CRD group: a DNS subdomain with at least one dot (`cache.example.com`)."""
    return "." in value and len(value) <= 253 and bool(_DNS1123_SUBDOMAIN.match(value))


def version_priority(name: str) -> tuple[int, int, int, str]:
    """Sort key giving kube's version order: GA > beta > alpha, higher numbers first, then
    names that follow no pattern, alphabetically."""
    m = _VERSION.match(name)
    if m is None:
        return (3, 0, 0, name)
    major, level, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[level]
    return (rank, -major, -minor, name)
