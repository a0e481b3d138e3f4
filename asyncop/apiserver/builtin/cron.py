"""Cron schedules as kube reads a CronJob's `spec.schedule`: parsing and "next time after t".

kube validates and runs schedules with robfig/cron v3's `ParseStandard`: five fields
(minute 0-59, hour 0-23, day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-6 or
SUN-SAT — 7 is *not* Sunday there) made of `*`, `?`, numbers, `a-b`, `x/n`, `a-b/n` and
comma lists, or a descriptor (@yearly @annually @monthly @weekly @daily @midnight
@hourly, `@every <Go duration>`), optionally after a `TZ=<zone> ` or `CRON_TZ=<zone> `
prefix. `CronError`'s text is robfig's error text, which kube puts after `Invalid value`.
When both day fields are restricted a day matches if either does; a field counts as
unrestricted when it is `*`/`?` without a step greater than 1 (robfig's star bit).
Invariants: pure; `next_after` is strictly after its argument, at minute resolution (second
resolution for `@every`), in the argument's timezone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["CronError", "Schedule", "next_after", "parse_schedule"]

_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
                "@hourly": "0 * * * *"}
_MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_LIMIT_DAYS = 366 * 5  # "0 0 29 2 *" fires at least once in any 5 years (bar 2100)
_INT64 = 2**63 - 1
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0,
                   "m": 60.0, "h": 3600.0}


class CronError(ValueError):
    """An invalid schedule; `str(err)` is robfig/cron's message."""


@dataclass(frozen=True, slots=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day-of-month carries robfig's star bit
    any_weekday: bool  # day-of-week carries robfig's star bit
    every: timedelta | None = None  # an `@every` schedule
    zone: str | None = None  # from a TZ= / CRON_TZ= prefix

    def day_matches(self, t: datetime) -> bool:
        if t.month not in self.months:
            return False
        dom = t.day in self.days
        dow = (t.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow
        return dom or dow


def _atoi(text: str) -> int:
    """Go's strconv.Atoi with its error text."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": '
                        "invalid syntax")
    number = int(text)
    if abs(number) > _INT64:
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": '
                        "value out of range")
    if number < 0:
        raise CronError(f"negative number ({number}) not allowed: {text}")
    return number


def _int_or_name(text: str, names: dict[str, int] | None) -> int:
    if names and text.lower() in names:
        return names[text.lower()]
    return _atoi(text)


def _range(expr: str, lo: int, hi: int,
           names: dict[str, int] | None) -> tuple[set[int], bool]:
    """getRange: the values of one comma-separated part, and whether it sets the star bit."""
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    star = False
    if low_high[0] in ("*", "?"):
        start, end, star = lo, hi, True
    else:
        start = _int_or_name(low_high[0], names)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(low_high) == 1:
            end = hi  # "N/step" means "N-max/step"
        if step > 1:
            star = False
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < lo:
        raise CronError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise CronError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _field(text: str, lo: int, hi: int,
           names: dict[str, int] | None = None) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in (p for p in text.split(",") if p):
        got, part_star = _range(part, lo, hi, names)
        values |= got
        star = star or part_star
    return frozenset(values), star


def _go_duration(text: str) -> timedelta:
    """Go's time.ParseDuration (as `@every` uses it), with its error text."""
    match = re.fullmatch(r"([+-]?)((?:[0-9]*\.?[0-9]*(?:ns|us|µs|μs|ms|s|m|h))+|0)", text)
    if not match or text in ("", "+", "-"):
        raise CronError(f'failed to parse duration @every {text}: time: invalid duration '
                        f'"{text}"')
    seconds = 0.0
    for number, unit in re.findall(r"([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)", match.group(2)):
        if number in ("", "."):
            raise CronError(f'failed to parse duration @every {text}: time: invalid duration '
                            f'"{text}"')
        seconds += float(number) * _DURATION_UNITS[unit]
    if match.group(1) == "-":
        seconds = -seconds
    return timedelta(seconds=max(1, int(seconds)))  # robfig: at least 1s, whole seconds


def parse_schedule(text: str) -> Schedule:
    """robfig/cron v3's ParseStandard; CronError with its message when invalid."""
    if not text:
        raise CronError("empty spec string")
    zone = None
    if text.startswith(("TZ=", "CRON_TZ=")):
        space, eq = text.find(" "), text.find("=")
        zone = text[eq + 1:space] if space >= 0 else text[eq + 1:]
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise CronError(f"provided bad location {zone}: unknown time zone {zone}") from None
        text = text[space:].strip() if space >= 0 else ""
    if text.startswith("@"):
        if text in _DESCRIPTORS:
            return _fields(_DESCRIPTORS[text].split(), zone)
        if text.startswith("@every "):
            delay = _go_duration(text[len("@every "):])
            return Schedule(frozenset(), frozenset(), frozenset(), frozenset(), frozenset(),
                            True, True, every=delay, zone=zone)
        raise CronError(f"unrecognized descriptor: {text}")
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: "
                        f"[{' '.join(fields)}]")
    return _fields(fields, zone)


def _fields(fields: list[str], zone: str | None) -> Schedule:
    minute, hour, dom, month, dow = fields
    minutes, _ = _field(minute, 0, 59)
    hours, _ = _field(hour, 0, 23)
    days, any_day = _field(dom, 1, 31)
    months, _ = _field(month, 1, 12, _MONTHS)
    weekdays, any_weekday = _field(dow, 0, 6, _DAYS)
    return Schedule(minutes=minutes, hours=hours, days=days, months=months, weekdays=weekdays,
                    any_day=any_day, any_weekday=any_weekday, zone=zone)


def next_after(schedule: Schedule, t: datetime) -> datetime | None:
    """The first scheduled time strictly after `t` (None if there is none in 5 years)."""
    if schedule.every is not None:
        return t.replace(microsecond=0) + schedule.every
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
