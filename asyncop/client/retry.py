"""Jittered exponential backoff, shared by the Client's retries and the Informer's reconnects.

Invariant: `delay(attempt)` lies in `[d * (1 - jitter), d]` where `d = min(cap, base * 2**attempt)`,
so a delay never exceeds `cap` and many clients that fail together spread out their retries.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Backoff:
    base: float = 0.2
    cap: float = 30.0
    jitter: float = 0.5
    rand: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, attempt: int) -> float:
        """The pause before retry number `attempt` (0 for the first retry)."""
        d = min(self.cap, self.base * (2 ** min(attempt, 62)))
        return float(d * (1.0 - self.jitter * self.rand.random()))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (the delta-seconds form; dates are ignored)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds)
