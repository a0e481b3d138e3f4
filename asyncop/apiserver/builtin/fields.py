"""Shared field helpers for built-in kinds: safe accessors and kube's common value checks.

Kube validates a typed Go struct, so by the time its rules run every field has its declared
type. Here the rules run on JSON dicts; the accessors below turn a value of the wrong shape
into an empty one so a rule never raises (the fuzz tests send every type everywhere).
Shared validators (names, ports, quantities, …) live here with kube's exact messages, one
function per apimachinery helper. Invariant: pure functions, no I/O.
"""

from __future__ import annotations

import re
from typing import Any

Obj = dict[str, Any]

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


def spec_of(obj: Obj) -> Obj:
    """`obj["spec"]`, created empty when absent or not an object (for defaulting)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec
