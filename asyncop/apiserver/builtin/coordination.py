"""coordination.k8s.io Leases: MicroTime normalisation of acquireTime and renewTime.

Invariant: only the two timestamps are rewritten (to UTC with 6 fractional digits).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import Obj

LEASES = ("coordination.k8s.io", "leases")


def _lease(obj: Obj, old: Obj | None) -> list[StatusCause]:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for field in ("acquireTime", "renewTime"):
            value = spec.get(field)
            if isinstance(value, str) and value:
                spec[field] = micro_time(value)
    return []


def micro_time(value: str) -> str:
    """Normalise an RFC 3339 time to metav1.MicroTime (UTC, 6 fractional digits, `Z`)."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


DEFAULTS: dict[tuple[str, str], Any] = {}
VALIDATORS: dict[tuple[str, str], Any] = {LEASES: _lease}
