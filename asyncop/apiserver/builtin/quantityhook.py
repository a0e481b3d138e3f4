"""The one hook through which every decoded Quantity passes.

kube rewrites quantities into their canonical form when it decodes a built-in object
(`1024Mi` comes back as `1Gi`, `0.5` cpu as `500m`, JSON numbers as strings). The decoder
(`fastwalk`, `walker`, `unstructured`) calls `canonical_quantity` with every Quantity it
accepted — a string or a JSON number, already checked with kube's ParseQuantity errors — and
stores what it returns. The value is kept as sent here: validation must see it as sent (its
messages print the parsed Go struct, which differs between `-1000` and `-1k`), so the
canonical form is written after validation, before the commit (`builtin/canonical.py`).
Invariant: called only with valid quantities; never raises.
"""

from __future__ import annotations

from typing import Any

__all__ = ["canonical_quantity"]


def canonical_quantity(value: str | int | float) -> Any:
    """THE Quantity hook: called with every Quantity value the decoder accepted (a string or
    a JSON number); what it returns is stored instead. kube rewrites quantities into their
    canonical form when it decodes (`1024Mi` → `1Gi`, `0.5` → `500m`, numbers → strings);
    that happens after validation (`builtin.canonical`), so the value is kept here."""
    return value
