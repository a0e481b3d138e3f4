"""events.k8s.io/v1 Events are the core/v1 Events storage seen through other field names.

Stored form is core/v1 (`involvedObject`, `message`, `source`, `count`, ...); the
events.k8s.io/v1 view renames (`regarding`, `note`, `deprecatedSource`, `deprecatedCount`,
...). Conversions are shallow (nested values are shared). Invariant:
`to_core(from_core(x)) == x` for every field both versions carry.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.core.resources import ResourceType

GROUP = "events.k8s.io"
API_VERSION = "events.k8s.io/v1"
#: events.k8s.io/v1 field -> core/v1 field
RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_V1 = {core: v1 for v1, core in RENAMED.items()}


def is_events_v1(rt: ResourceType) -> bool:
    return rt.group == GROUP and rt.plural == "events"


def to_core(obj: dict[str, Any]) -> dict[str, Any]:
    out = {RENAMED.get(k, k): v for k, v in obj.items()}
    out["apiVersion"] = "v1"
    return out


def from_core(obj: dict[str, Any]) -> dict[str, Any]:
    out = {_TO_V1.get(k, k): v for k, v in obj.items()}
    out["apiVersion"] = API_VERSION
    return out


def core_field(path: str) -> str:
    """Translate an events.k8s.io field selector path to the stored (core) one."""
    head, _, rest = path.partition(".")
    core = RENAMED.get(head, head)
    return f"{core}.{rest}" if rest else core
