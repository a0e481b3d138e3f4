"""Invariants: what must hold of the world while the operator runs under chaos.

Concept: an invariant is a named check over the facts (`facts.py`), of one of four kinds,
by *when* it must hold:

- `Always(name, check)`: at every moment. `check(snapshot)` runs every virtual second while
  the soak runs and yields a message per thing wrong ("no two Deployments per Memcached").
- `Converges(name, kind, check, within=None)`: every object of `kind` reaches what its
  latest spec implies. `check(obj, snapshot)` returns None when it has, else a short
  description of the difference. After the last fault every object must converge within
  the run's bound; with `within`, each object must also converge within `within` virtual
  seconds of the later of its last change and the last fault, checked continuously ("status
  converges within T after the last change"). These checks also time each change's
  convergence (the report's `convergence_s`).
- `AtEnd(name, check)`: once, when the world has converged after the last fault.
  `check(snapshot, history)` may use the whole history ("every due At ran exactly once").
- `Tracked(name, tracker)`: follows every committed event in order. `tracker()` makes a
  fresh `Tracker` per run; its `observe(change, history)` yields violations as they happen
  ("a pod created before its schedule"), its `at_end(snapshot, history)` once at the end.

A violation names its invariant; a continuous one also says when (virtual seconds into the
chaos phase) it was first seen. Invariants: a check never mutates the facts; a check that
raises is itself reported as a violation of that invariant (it never ends the run); the
same message from the same invariant is reported once.

Besides the scenario's own, every soak checks the built-in invariants named below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass

from asyncop.testing.chaos.facts import Change, History, KindLike, Obj, Snapshot

ONE_REPLICA_PER_KEY = "one-replica-per-key"
"""No key is in a reconcile of two live replicas at once."""
ERRORS_HAVE_A_CAUSE = "error-log-has-cause"
"""Every error-level log line carries `error`, `exc_info`, `reason` or `cause`."""
BOUNDED_GROWTH = "bounded-growth"
"""RSS and task count of the last third of the run stay within a bound of the middle's."""
NO_TASK_LEFT = "no-task-left"
"""Once every replica has stopped, no more tasks are left than before the first started."""
SOAK = "soak"
"""The run's own trouble: a fault that could not be applied, a workload step that raised."""
BUILTIN = (ONE_REPLICA_PER_KEY, ERRORS_HAVE_A_CAUSE, BOUNDED_GROWTH, NO_TASK_LEFT, SOAK)


@dataclass(frozen=True)
class Always:
    """Holds at every moment: `check(snapshot)` yields what is wrong, every virtual second."""

    name: str
    check: Callable[[Snapshot], Iterable[str]]


@dataclass(frozen=True)
class Converges:
    """Every live object of `kind` converges: `check(obj, snapshot)` is None once it has."""

    name: str
    kind: KindLike
    check: Callable[[Obj, Snapshot], str | None]
    _: KW_ONLY
    within: float | None = None
    """If set: virtual seconds after the later of the object's last change and the last
    fault by which it must have converged, checked continuously."""


@dataclass(frozen=True)
class AtEnd:
    """Holds once the world has converged: `check(snapshot, history)` yields what is wrong."""

    name: str
    check: Callable[[Snapshot, History], Iterable[str]]


class Tracker:
    """Follows the committed events of one run (subclass it; a fresh one per run)."""

    def observe(self, change: Change, history: History) -> Iterable[str]:
        """Called for every committed event in order, after `history` recorded it."""
        return ()

    def at_end(self, snapshot: Snapshot, history: History) -> Iterable[str]:
        """Called once, when the world has converged after the last fault."""
        return ()


@dataclass(frozen=True)
class Tracked:
    """Follows every committed event with a fresh `tracker()` per run."""

    name: str
    tracker: Callable[[], Tracker]


Invariant = Always | Converges | AtEnd | Tracked
"""Any of the four kinds of invariant."""


@dataclass(frozen=True, slots=True)
class Violation:
    """An invariant that failed: its name, what was wrong, and when (continuous checks)."""

    invariant: str
    message: str
    at: float | None = None
    """Virtual seconds into the chaos phase when a continuous check first saw it."""

    def __str__(self) -> str:
        text = f"{self.invariant}: {self.message}"
        return text if self.at is None else f"at {self.at:.0f}s: {text}"


def check_names(invariants: Iterable[Invariant]) -> None:
    """Raise ValueError unless every invariant has a distinct, non-empty, non-built-in name."""
    seen: set[str] = set()
    for inv in invariants:
        if not isinstance(inv, Always | Converges | AtEnd | Tracked):
            raise ValueError(f"{inv!r} is not an invariant (Always, Converges, AtEnd, Tracked)")
        if not inv.name or not inv.name.strip():
            raise ValueError(f"an invariant needs a name: {inv!r}")
        if inv.name in BUILTIN:
            raise ValueError(f"invariant name {inv.name!r} is a built-in one's")
        if inv.name in seen:
            raise ValueError(f"two invariants are named {inv.name!r}")
        seen.add(inv.name)
        if isinstance(inv, Converges) and inv.within is not None and not inv.within > 0:
            raise ValueError(f"invariant {inv.name!r}: within must be positive")
