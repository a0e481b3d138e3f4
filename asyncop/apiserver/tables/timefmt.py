"""Ages as kube prints them: `HumanDuration` of apimachinery's `util/duration`.

Invariants: < -1 s is `<invalid>` (clock skew tolerance), then seconds below 2 minutes,
`XmYs` below 10 minutes, minutes below 3 hours, `XhYm` below 8 hours, hours below 48 hours,
`XdYh` below 8 days, days below 2 years, `XyYd` below 8 years, then years.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime (None when unset or unparsable)."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def _two_units(major: int, major_unit: str, minor: int, minor_unit: str) -> str:
    """`XmYs`-style text; the minor part is left out when it is zero."""
    return f"{major}{major_unit}" if minor == 0 else f"{major}{major_unit}{minor}{minor_unit}"


def human_duration(seconds: float) -> str:
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return _two_units(minutes, "m", s % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return _two_units(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return _two_units(hours // 24, "d", hours % 24, "h")
    days = hours // 24
    if days < 365 * 2:
        return f"{days}d"
    if days < 365 * 8:
        return _two_units(days // 365, "y", days % 365, "d")
    return f"{days // 365}y"


def human_age(timestamp: Any, now: datetime) -> str:
    """The age of an RFC 3339 timestamp at `now` (`<unknown>` unset, `<invalid>` bad)."""
    if timestamp is None or timestamp == "":
        return "<unknown>"
    dt = parse_time(timestamp)
    if dt is None:
        return "<invalid>"
    return human_duration((now - dt).total_seconds())
