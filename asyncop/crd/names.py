"""Names of a custom resource: pluralisation and the checks kube-apiserver applies to them.

Invariants: `plural_of` is deterministic and lower-case, with simple English rules
(s/x/z/ch/sh -> +es, consonant+y -> ies, else +s: `Memcached` -> `memcacheds`, `Policy` ->
`policies`, `Box` -> `boxes`); `version_priority` sorts like kube (v2 > v1 > v1beta2 >
v1beta1 > v1alpha1 > names outside the pattern, alphabetically); the checks use the rules
of kube-apiserver's CRD validation (group: a DNS subdomain with at least one dot; version,
plural, singular, short names and categories: DNS-1035 labels), so a class that passes them
yields names the API server accepts.
"""

from __future__ import annotations

import re

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def plural_of(kind: str) -> str:
    word = kind.lower()
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def is_dns1035_label(value: str) -> bool:
    return len(value) <= 63 and bool(_DNS1035.match(value))


def is_kind(value: str) -> bool:
    """A kind as Kubernetes spells them: UpperCamelCase letters and digits (kube itself
    only needs the lower-cased kind to be a DNS-1035 label)."""
    return len(value) <= 63 and bool(_KIND.match(value))


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
