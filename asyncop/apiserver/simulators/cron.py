"""Cron schedules as CronJobs write them: parsing and "next time after t".

Five fields (minute hour day-of-month month day-of-week) with `*`, `?`, numbers, `a-b`,
`*/n`, `a-b/n`, lists and month/day names (JAN..DEC, SUN..SAT; 7 is Sunday too), plus the
macros @yearly @annually @monthly @weekly @daily @midnight @hourly. When both day fields are
restricted a day matches if either does (Vixie cron). Invariant: pure; `next_after` is
strictly after its argument, at minute resolution, in the argument's timezone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

_MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
           "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
           "@hourly": "0 * * * *"}
_MONTHS = {m: i + 1 for i, m in enumerate(
    ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"))}
_DAYS = {d: i for i, d in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))}
_LIMIT_DAYS = 366 * 5  # "0 0 29 2 *" fires at least once in any 5 years (bar 2100)


@dataclass(frozen=True, slots=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day-of-month is `*`
    any_weekday: bool  # day-of-week is `*`

    def day_matches(self, t: datetime) -> bool:
        if t.month not in self.months:
            return False
        dom = t.day in self.days
        dow = (t.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow
        return dom or dow


def _field(text: str, lo: int, hi: int, names: dict[str, int] | None = None) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(f"bad step in {part!r}")
        if body in ("*", "?"):
            start, end = lo, hi
        else:
            first, _, last = body.partition("-")
            start = _value(first, names)
            end = _value(last, names) if last else (hi if step_text else start)
        if not (lo <= start <= hi and lo <= end <= hi) or start > end:
            raise ValueError(f"{part!r} is out of range {lo}-{hi}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


def _value(text: str, names: dict[str, int] | None) -> int:
    if names and text.upper() in names:
        return names[text.upper()]
    if not text.isdigit():
        raise ValueError(f"{text!r} is not a number")
    return int(text)


def parse_schedule(text: str) -> Schedule:
    """Parse a CronJob schedule; ValueError with a readable reason when it is invalid."""
    fields = _MACROS.get(text.strip().lower(), text).split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 fields, found {len(fields)}: {text!r}")
    minute, hour, dom, month, dow = fields
    weekdays = _field(dow, 0, 7, _DAYS)
    return Schedule(
        minutes=_field(minute, 0, 59), hours=_field(hour, 0, 23), days=_field(dom, 1, 31),
        months=_field(month, 1, 12, _MONTHS),
        weekdays=frozenset(d % 7 for d in weekdays),
        any_day=dom in ("*", "?"), any_weekday=dow in ("*", "?"),
    )


def next_after(schedule: Schedule, t: datetime) -> datetime | None:
    """The first scheduled minute strictly after `t` (None if there is none in 5 years)."""
    start = t.replace(second=0, microsecond=0) + timedelta(minutes=1)
    day = start.replace(hour=0, minute=0)
    for offset in range(_LIMIT_DAYS):
        if offset:
            day = day + timedelta(days=1)  # wall-clock arithmetic: midnight stays midnight
        if not schedule.day_matches(day):
            continue
        for hour in sorted(schedule.hours):
            for minute in sorted(schedule.minutes):
                candidate = day.replace(hour=hour, minute=minute)
                if candidate >= start:
                    return candidate
    return None
