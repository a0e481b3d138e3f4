"""SoakConfig: how long, how fast, how many replicas and which faults — one soak run's knobs.

Invariants: a SoakConfig is a frozen value; every field is checked when it is made, with a
ValueError that names the field and what it must be (the CLI turns it into one line naming
the flag); `faults` names only kinds of `FAULT_KINDS`, each with a finite weight >= 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from asyncop.testing.chaos.faults import FAULT_KINDS


@dataclass(frozen=True, kw_only=True)
class SoakConfig:
    seed: int = 1
    seconds: float = 540.0
    """Virtual seconds of workload and faults (the chaos phase)."""
    rate: float = 1.0
    """Virtual seconds per real second (1: real time)."""
    replicas: int = 3
    sharded: bool | None = False
    """Sharding instead of leader election; None: drawn from the seed."""
    shards: int = 16
    faults: Mapping[str, float] = field(default_factory=lambda: dict(FAULT_KINDS))
    """Fault kind -> weight (every kind of FAULT_KINDS; 0 turns one off)."""
    fault_every: float = 15.0
    """Virtual seconds between faults, on average."""
    converge_within: float = 150.0
    """Virtual seconds after the last fault by which everything must have converged."""
    workers: int | None = 4
    """Workers per controller (None: each controller's own)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.faults) - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kind {unknown[0]!r}; known: "
                             f"{', '.join(FAULT_KINDS)}")
        for name, weight in self.faults.items():
            if not (isinstance(weight, int | float) and math.isfinite(weight) and weight >= 0):
                raise ValueError(f"fault {name}: the weight must be a number >= 0, "
                                 f"not {weight!r}")
        checks = {"seconds": (self.seconds >= 0, "a number >= 0"),
                  "rate": (self.rate > 0, "positive"),
                  "replicas": (self.replicas >= 1, "at least 1"),
                  "shards": (1 <= self.shards <= 4096, "between 1 and 4096"),
                  "fault_every": (self.fault_every > 0, "positive"),
                  "converge_within": (self.converge_within > 0, "positive"),
                  "workers": (self.workers is None or self.workers >= 1, "at least 1")}
        for name, (ok, what) in checks.items():
            if not ok:
                raise ValueError(f"SoakConfig.{name} must be {what}, not "
                                 f"{getattr(self, name)!r}")
