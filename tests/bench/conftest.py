"""The soak's modules live in bench/ (run as scripts there): put that directory on the path —
at its end, so bench/queue.py and the like never shadow the standard library's modules."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = str(Path(__file__).resolve().parents[2] / "bench")
if BENCH not in sys.path:
    sys.path.append(BENCH)
