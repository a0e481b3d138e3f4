"""Report: one soak's verdict and numbers — the JSON line — and `SoakFailed` for tests.

Concept: `Report.data` is the one JSON object `asyncop soak` prints (docs/soak.md, "Reading
the JSON line"): the seed and mode, faults injected by kind, objects created, changes made,
reconciles, convergence times, RSS and task counts, logged errors, and the violations, each
naming its invariant. `ok` is true exactly when there is no violation. `check()` raises
`SoakFailed` (an AssertionError, so pytest shows it as a failed assertion) whose message
names every violated invariant, the seed and how to run it again.

Invariant: `data["violations"]` lists at most 30 violations, `data["violation_count"]` all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from asyncop.testing.chaos.invariants import Violation

SHOWN = 30


@dataclass(frozen=True)
class Report:
    data: dict[str, Any]
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def seed(self) -> int:
        return int(self.data["seed"])

    @property
    def violated(self) -> list[str]:
        """The names of the invariants that failed, sorted."""
        return sorted({v.invariant for v in self.violations})

    def json(self) -> str:
        """The report as one JSON line (no newline)."""
        return orjson.dumps(self.data).decode()

    def check(self) -> Report:
        """Return the report if every invariant held, else raise SoakFailed."""
        if not self.ok:
            raise SoakFailed(self)
        return self


class SoakFailed(AssertionError):
    """A soak found violations; the message names them, the seed and the rerun."""

    def __init__(self, report: Report) -> None:
        self.report = report
        data = report.data
        lines = [f"soak of {data.get('soak')} failed: {len(report.violations)} violation(s) "
                 f"of {', '.join(report.violated)} (seed {report.seed}, {data.get('mode')}, "
                 f"{data.get('replicas')} replicas)"]
        lines += [f"  - {v}" for v in report.violations[:SHOWN]]
        if len(report.violations) > SHOWN:
            lines.append(f"  ... and {len(report.violations) - SHOWN} more")
        if data.get("reproduce"):
            lines.append(f"reproduce: {data['reproduce']}")
        else:
            lines.append(f"reproduce: run again with seed={report.seed}")
        super().__init__("\n".join(lines))
