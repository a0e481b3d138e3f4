"""GcPolicy: keep the cyclic garbage collector's full collections short in a big cache.

CPython's collector scans every tracked object in a full (generation 2) collection, and runs
one whenever the objects that survived into generation 2 since the last one reach a quarter of
it. A process holding a large cache — an operator with 100,000 objects cached, the embedded
API server with its store and watch history — therefore stops for as long as a scan of the
whole heap takes: measured at 0.35 s in the operator and 0.6 s in the API server with 100,000
Ats, which is what the tail of the cost curve in bench/README.md was made of.

The policy: after each full collection, `gc.freeze()` moves every survivor into the permanent
generation, so the next full collection scans only what arrived since; every `full_every`
seconds, `gc.unfreeze()` lets one full collection see the whole heap again, so garbage cycles
among frozen objects (rare: the cache holds acyclic JSON dicts, which reference counting frees
on its own) live at most that long. Reference counting is untouched: a replaced or deleted
cached object is freed at once, frozen or not.

Invariants: the policy only ever calls gc.freeze/gc.unfreeze and registers one gc callback,
which `close()` removes (unfreezing); timing goes through the Clock; it is opt-in (the CLI
turns it on for `asyncop run` and `asyncop apiserver`; a library Manager or ApiServer leaves
the process's GC alone unless asked).
"""

from __future__ import annotations

import gc
from typing import Any

from asyncop.clock import Clock

CHECK_EVERY = 1.0
"""Seconds between looks at whether a full collection happened (freezing is O(1))."""


class GcPolicy:
    def __init__(self, *, clock: Clock, full_every: float = 600.0) -> None:
        self.clock = clock
        self.full_every = full_every
        self.freezes = 0
        self.unfreezes = 0
        self._full_collections = 0
        self._frozen_at = 0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            self._full_collections += 1

    async def run(self) -> None:
        """Freeze after full collections and unfreeze every `full_every`, until cancelled."""
        gc.callbacks.append(self._callback)
        try:
            next_full = self.clock.monotonic() + self.full_every
            while True:
                await self.clock.sleep(CHECK_EVERY)
                if self.clock.monotonic() >= next_full:
                    gc.unfreeze()
                    self.unfreezes += 1
                    self._frozen_at = self._full_collections
                    next_full = self.clock.monotonic() + self.full_every
                elif self._full_collections != self._frozen_at:
                    gc.freeze()
                    self.freezes += 1
                    self._frozen_at = self._full_collections
        finally:
            self.close()

    def close(self) -> None:
        """Remove the callback and unfreeze (idempotent)."""
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
        gc.unfreeze()
