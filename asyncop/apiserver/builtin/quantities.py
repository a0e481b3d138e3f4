"""The sign of a resource.Quantity and its canonical text, for the rules that need only that
(HPA metric targets must be positive).

A quantity is a decimal number with an optional SI (`m`, `k`, `M`, …), binary (`Ki`, `Mi`,
…) or exponent (`e3`) suffix. Canonical text (what kube prints in `Invalid value: …`):
zero is `0`; a number with a decimal suffix or none is re-expressed with the largest SI
suffix that keeps it whole (`-1000` → `-1k`, `-0.5` → `-500m`); a binary or exponent form
keeps its suffix. This is the subset of kube's Quantity the rules here need, and a syntax
kube would refuse never reaches them (decoding refuses it first).
Invariant: pure; never raises (an unparsable value reads as zero, printed as given).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

_PATTERN = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
                      r"(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")
_DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL.items()}


def quantity_sign(value: Any) -> tuple[int, str]:
    """(-1, 0 or 1, the canonical text) of a quantity given as a string or a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0, str(value)
    text = value if isinstance(value, str) else repr(value)
    match = _PATTERN.fullmatch(text.strip())
    if match is None:
        return 0, text
    sign_text, number_text, suffix = match.group(1), match.group(2), match.group(3) or ""
    try:
        number = Decimal(number_text)
    except InvalidOperation:
        return 0, text
    if number == 0:
        return 0, "0"
    sign = -1 if sign_text == "-" else 1
    if suffix not in _DECIMAL:
        return sign, f"{'-' if sign < 0 else ''}{number.normalize():f}{suffix}"
    amount = number.scaleb(_DECIMAL[suffix])
    exponent = 0
    while amount != amount.to_integral_value() and exponent > -9:
        amount, exponent = amount * 1000, exponent - 3
    amount = amount.to_integral_value()
    while amount % 1000 == 0 and exponent < 18:
        amount, exponent = amount / 1000, exponent + 3
    return sign, f"{'-' if sign < 0 else ''}{int(amount)}{_BY_EXPONENT[exponent]}"
