"""Reconcile traces: (start, end, replica) spans per key, and the keys two replicas ran at once.

A sweep in start order keeps, per replica, the latest end seen so far; a span that starts
before another replica's latest end overlaps it (neighbours alone would miss a long span that
covers several short ones).
"""

from __future__ import annotations

Spans = dict[str, list[tuple[float, float, str]]]


def concurrent_keys(spans: Spans) -> list[str]:
    bad = []
    for key, runs in spans.items():
        latest: dict[str, float] = {}
        for start, end, who in sorted(runs):
            if any(other != who and start < last for other, last in latest.items()):
                bad.append(key)
                break
            latest[who] = max(end, latest.get(who, end))
    return bad
