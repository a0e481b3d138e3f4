"""Checker: runs a scenario's invariants over one run's facts and collects the violations.

Concept: the engine hands the Checker every committed event (`observe`: the Tracked
invariants), a Snapshot every virtual second (`tick`: the Always and Converges invariants,
the per-change convergence times, the `within` bounds), and the final facts (`at_end`:
AtEnd invariants and the trackers' `at_end`). Built-in invariants report through `add`.

Invariants: a check that raises becomes a violation of its own invariant (the run goes on);
the same message of the same invariant is kept once, with the time it was first seen; a
change's convergence time is measured once per change, from the change (or from when an
expected change fell due) to the first snapshot in which no Converges invariant finds a
problem with that object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from asyncop.api import kind_of
from asyncop.testing.chaos.facts import GR, Change, History, Ref, Snapshot, gr
from asyncop.testing.chaos.invariants import (
    Always,
    AtEnd,
    Converges,
    Invariant,
    Tracked,
    Tracker,
    Violation,
)

Problems = dict[tuple[str, Ref], str]
"""(Converges invariant name, object) -> how the object differs from what it should be."""


class Checker:
    def __init__(self, invariants: Sequence[Invariant], *, elapsed: Callable[[], float],
                 monotonic: Callable[[], float]) -> None:
        self.always = [i for i in invariants if isinstance(i, Always)]
        self.converges = [i for i in invariants if isinstance(i, Converges)]
        self.at_ends = [i for i in invariants if isinstance(i, AtEnd)]
        self.trackers: list[tuple[str, Tracker]] = [
            (i.name, i.tracker()) for i in invariants if isinstance(i, Tracked)]
        self.elapsed, self.monotonic = elapsed, monotonic
        self.violations: list[Violation] = []
        self.latencies: list[float] = []
        self._seen: set[tuple[str, str]] = set()
        self._since: dict[tuple[str, Ref], float] = {}
        self._late: set[tuple[str, Ref, float]] = set()
        self._measured: dict[Ref, float] = {}
        self._converging: set[GR] = {gr(i.kind) for i in self.converges}
        self.continuous = False
        """While True, violations carry the time they were first seen."""

    def add(self, invariant: str, message: str) -> None:
        if (invariant, message) in self._seen:
            return
        self._seen.add((invariant, message))
        at = round(self.elapsed(), 1) if self.continuous else None
        self.violations.append(Violation(invariant, message, at))

    def _run(self, name: str, check: Callable[..., Iterable[str]], *args: Any) -> list[str]:
        try:
            return [str(m) for m in check(*args)]
        except Exception as exc:  # the check's own bug is a violation of it, not a crash
            self.add(name, f"the check raised {exc!r}")
            return []

    # -- events --------------------------------------------------------------------------------
    def observe(self, change: Change, history: History) -> None:
        for name, tracker in self.trackers:
            for message in self._run(name, tracker.observe, change, history):
                self.add(name, message)

    # -- every virtual second --------------------------------------------------------------------
    def problems(self, snap: Snapshot) -> tuple[Problems, set[Ref]]:
        """What the Converges invariants find wrong, and every live object they looked at."""
        out: Problems = {}
        looked: set[Ref] = set()
        for inv in self.converges:
            kind = kind_of(inv.kind)
            for obj in snap.live(kind):
                ref = Ref.of(kind, obj)
                looked.add(ref)
                try:
                    problem = inv.check(obj, snap)
                except Exception as exc:
                    self.add(inv.name, f"the check raised {exc!r} on {ref}")
                    continue
                if problem is not None:
                    out[(inv.name, ref)] = str(problem)
        return out, looked

    def tick(self, snap: Snapshot, *, changed: dict[Ref, float], last_fault: float) -> Problems:
        """Run the Always and Converges invariants on `snap`; returns the problems."""
        now = self.monotonic()
        problems, looked = self.problems(snap)
        wrong = {ref for _, ref in problems}
        for ref, when in changed.items():
            if self._measured.get(ref) == when:
                continue
            if (ref.group, ref.plural) not in self._converging:
                self._measured[ref] = when
            elif ref in looked and ref not in wrong:
                self.latencies.append(now - when)
                self._measured[ref] = when
        if len(self._measured) > 2 * len(changed) + 100:  # forget objects no longer wanted
            self._measured = {r: t for r, t in self._measured.items() if r in changed}
        for key in [k for k in self._since if k not in problems]:
            del self._since[key]
        within = {i.name: i.within for i in self.converges if i.within is not None}
        for key, problem in problems.items():
            since = self._since.setdefault(key, now)
            name, ref = key
            bound = within.get(name)
            if bound is None:
                continue
            start = max(since, changed.get(ref, since), last_fault)
            if now - start > bound and (name, ref, start) not in self._late:
                self._late.add((name, ref, start))
                self.add(name, f"{ref} not converged {bound:.0f}s after its last change or "
                         f"the last fault: {problem}")
        for inv in self.always:
            for message in self._run(inv.name, inv.check, snap):
                self.add(inv.name, message)
        return problems

    def not_converged(self, problems: Problems, bound: float) -> None:
        """The end: what is still not converged `bound` seconds after the last fault."""
        by_name: dict[str, list[str]] = {}
        for (name, ref), problem in sorted(problems.items(), key=lambda kv: str(kv[0])):
            by_name.setdefault(name, []).append(f"{ref}: {problem}")
        for name, items in by_name.items():
            self.add(name, f"not converged {bound:.0f}s after the last fault: {len(items)} "
                     f"objects, e.g. {items[:5]}")

    # -- the end ---------------------------------------------------------------------------------
    def at_end(self, snap: Snapshot, history: History) -> None:
        for inv in self.at_ends:
            for message in self._run(inv.name, inv.check, snap, history):
                self.add(inv.name, message)
        for name, tracker in self.trackers:
            for message in self._run(name, tracker.at_end, snap, history):
                self.add(name, message)
