"""The process under soak: its error logs, its memory and its tasks.

Concept: three built-in invariants hold for any operator. `ErrorLog` is a structlog
processor that counts warnings and errors and keeps every error logged without a cause (no
`error`, `exc_info`, `reason` or `cause` field): an error nobody can act on is a defect
(`error-log-has-cause`). `Sample`s of RSS and task count are taken every real second;
`growth_violations` compares the last third of the run with the middle third
(`bounded-growth`): growth that goes on with the run is a leak, a plateau is not.

Invariants: `captured_logs()` restores the previous structlog configuration on exit and
drops every event while it is active (the soak's output is its one JSON line); the growth
checks need at least 6 samples (a shorter run has no middle to compare with).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import structlog

CAUSES = ("error", "exc_info", "reason", "cause")


class ErrorLog:
    """A structlog processor: counts warnings and errors, keeps errors without a cause, and
    drops every event."""

    def __init__(self) -> None:
        self.errors: Counter[str] = Counter()
        self.warnings: Counter[str] = Counter()
        self.uncaused: list[str] = []

    def __call__(self, _: Any, method: str,
                 event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        name = str(event.get("event"))
        if method in ("error", "critical", "exception", "fatal"):
            self.errors[name] += 1
            if not any(event.get(k) for k in CAUSES):
                self.uncaused.append(f"{name}: {sorted(event)}")
        elif method in ("warning", "warn"):
            self.warnings[name] += 1
        raise structlog.DropEvent


@contextlib.contextmanager
def captured_logs() -> Iterator[ErrorLog]:
    """Route every structlog event (warning and above) to a fresh ErrorLog meanwhile."""
    saved = structlog.get_config()
    errors = ErrorLog()
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, errors],
                        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
                        cache_logger_on_first_use=False)
    try:
        yield errors
    finally:
        structlog.configure(**saved)


def rss_mb() -> float:
    """This process's resident memory in MB (0 where /proc is not available)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass(frozen=True)
class Sample:
    t: float  # seconds since the start, real time
    rss_mb: float
    tasks: int


def growth_violations(samples: list[Sample], *, rss_slack_mb: float = 48.0,
                      task_slack: int = 64) -> list[str]:
    """The last third within 1.25x (+ slack) of the middle third: growth that goes on with
    the run (a leak) fails; a plateau passes. RSS compares peaks (it rarely shrinks); tasks
    compare medians, because a replica handover briefly runs the leaving and the joining
    replica's tasks together — a peak that is not growth."""
    if len(samples) < 6:
        return []
    third = len(samples) // 3
    mid, last = samples[third:2 * third], samples[2 * third:]
    out = []
    rss_mid, rss_last = max(s.rss_mb for s in mid), max(s.rss_mb for s in last)
    if rss_last > rss_mid * 1.25 + rss_slack_mb:
        out.append(f"RSS grew {rss_mid:.0f} -> {rss_last:.0f} MB")
    t_mid = statistics.median_low(s.tasks for s in mid)
    t_last = statistics.median_low(s.tasks for s in last)
    if t_last > t_mid * 1.25 + task_slack:
        out.append(f"tasks grew {t_mid} -> {t_last}")
    return out


def thirds(samples: list[Sample]) -> dict[str, dict[str, float]]:
    """Peak RSS and tasks per third of the run, and the task medians (for the report)."""
    if not samples:
        return {"rss_mb": {}, "tasks": {}}
    third = max(1, len(samples) // 3)
    first, mid, last = samples[:third], samples[third:-third] or samples, samples[-third:]
    return {
        "rss_mb": {"first_third_max": round(max(s.rss_mb for s in first), 1),
                   "mid_third_max": round(max(s.rss_mb for s in mid), 1),
                   "last_third_max": round(max(s.rss_mb for s in last), 1)},
        "tasks": {"first_third_max": max(s.tasks for s in first),
                  "mid_third_max": max(s.tasks for s in mid),
                  "last_third_max": max(s.tasks for s in last),
                  "mid_third_median": statistics.median_low(s.tasks for s in mid),
                  "last_third_median": statistics.median_low(s.tasks for s in last)},
    }


def percentile(values: Iterable[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
