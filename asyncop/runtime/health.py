"""Health: named liveness and readiness checks, and the event-loop lag probe.

A check is a plain callable returning None when healthy or a one-line reason when not; it
must be cheap and must not await (a probe answers even when the rest of the process is busy).
`/healthz` is the conjunction of the liveness checks (process alive, loop responsive,
informer watches not stalled); `/readyz` of the readiness checks (caches synced, leading or
standing by). Invariant: the loop probe measures lag on the injected clock only — the ticker
sleeps `interval` and records how late it woke up; when the ticker has not run for
`interval + threshold` the loop counts as unresponsive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from asyncop.clock import Clock

Check = Callable[[], str | None]


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


class Health:
    """The registry of checks behind /healthz and /readyz (one per Manager)."""

    def __init__(self) -> None:
        self._live: dict[str, Check] = {}
        self._ready: dict[str, Check] = {}

    def add_liveness(self, name: str, check: Check) -> None:
        self._live[name] = check

    def add_readiness(self, name: str, check: Check) -> None:
        self._ready[name] = check

    def liveness(self) -> list[CheckResult]:
        return _run(self._live)

    def readiness(self) -> list[CheckResult]:
        return _run(self._ready)


def _run(checks: dict[str, Check]) -> list[CheckResult]:
    results = []
    for name, check in checks.items():
        try:
            error = check()
        except Exception as exc:  # a broken check is a failed check, not a crashed probe
            error = f"check raised {exc!r}"
        results.append(CheckResult(name, error))
    return results


def render(results: list[CheckResult], *, verbose: bool) -> tuple[bool, str]:
    """(all ok, body) in the style of the Kubernetes API server's /healthz?verbose."""
    ok = all(r.ok for r in results)
    if not verbose and ok:
        return True, "ok"
    lines = [f"[+]{r.name} ok" if r.ok else f"[-]{r.name} failed: {r.error}" for r in results]
    lines.append("check passed" if ok else "check failed")
    return ok, "\n".join(lines) + "\n"


class LoopLagProbe:
    """Detects an event loop that is blocked or starved, on the given clock."""

    def __init__(self, clock: Clock, *, interval: float = 1.0, threshold: float = 10.0) -> None:
        self._clock = clock
        self.interval = interval
        self.threshold = threshold
        self.last_tick = clock.monotonic()
        self.last_lag = 0.0
        self.running = False

    async def run(self) -> None:
        self.running = True
        try:
            while True:
                self.last_tick = self._clock.monotonic()
                await self._clock.sleep(self.interval)
                self.last_lag = max(0.0, self._clock.monotonic() - self.last_tick - self.interval)
        finally:
            self.running = False

    def check(self) -> str | None:
        silent = self._clock.monotonic() - self.last_tick
        if silent > self.interval + self.threshold:
            return f"event loop not responsive for {silent:.1f}s"
        if self.last_lag > self.threshold:
            return f"event loop lagged {self.last_lag:.1f}s"
        return None
