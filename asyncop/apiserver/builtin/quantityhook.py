"""The one hook through which every decoded Quantity passes.

kube rewrites quantities into their canonical form when it decodes a built-in object
(`1024Mi` comes back as `1Gi`, `0.5` cpu as `500m`, JSON numbers as strings). The decoder
(`fastwalk`, `walker`, `unstructured`) calls `canonical_quantity` with every Quantity it
accepted — a string or a JSON number, already checked with kube's ParseQuantity errors — and
stores what it returns. `builtin/quantity.py`'s canonical form is wired in here; until then
the value is kept as sent. Invariant: called only with valid quantities; must not raise.
"""

from __future__ import annotations

from typing import Any

__all__ = ["canonical_quantity"]


def canonical_quantity(value: str | int | float) -> Any:
    """THE Quantity hook: called with every Quantity value the decoder accepted (a string or
    a JSON number); what it returns is stored instead. kube rewrites quantities into their
    canonical form when it decodes (`1024Mi` → `1Gi`, `0.5` → `500m`, numbers → strings);
    `builtin/quantity.py`'s canonical form is wired in here. Until then: unchanged."""
    return value
