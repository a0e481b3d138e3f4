"""A resource.Quantity as the rules here need it: its sign, and how kube prints it.

kube 1.33's field errors dereference a *Quantity and print the struct with %#v (Quantity's
String() has a pointer receiver), so `Invalid value:` shows the parsed fields, e.g.
`resource.Quantity{i:resource.int64Amount{value:-1000, scale:0},
d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}`. `quantity_repr`
follows ParseQuantity (apimachinery api/resource): the int64 fast path with its scale and
the text it keeps only when that text is canonical; a value that needs the big-decimal
path prints a stand-in address for its *inf.Dec. A syntax kube refuses never reaches the
rules (decoding refuses it first).
Invariant: pure; never raises (an unparsable value reads as zero).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

_PATTERN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|"
                      r"[eE][+-]?[0-9]+)?")
_DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15,
            "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_INT64 = 2 ** 63
_BIG = "0xc000010000"  # %#v prints the *inf.Dec's address; a fixed one stands in


def _struct(value: int, scale: int, text: str, fmt: str, *, big: bool = False) -> str:
    dec = f"(*inf.Dec)({_BIG})" if big else "(*inf.Dec)(nil)"
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, "
            f'd:resource.infDecAmount{{Dec:{dec}}}, s:"{text}", Format:"{fmt}"}}')


def quantity_sign(value: Any) -> tuple[int, str]:
    """(-1, 0 or 1, the %#v kube prints) of a quantity given as a string or a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0, str(value)
    text = value if isinstance(value, str) else repr(value)
    if text == "0":
        return 0, _struct(0, 0, "0", "DecimalSI")
    match = _PATTERN.fullmatch(text)
    if match is None:
        return 0, text
    sign_text, whole, frac, suffix = match.group(1), match.group(2), match.group(3), \
        match.group(4) or ""
    num, denom = whole.lstrip("0") or "0", frac or ""
    if suffix in _BINARY:
        fmt, exponent = "BinarySI", _BINARY[suffix]
    elif suffix[:1] in ("e", "E"):
        fmt, exponent = "DecimalExponent", int(suffix[1:])
    else:
        fmt, exponent = "DecimalSI", _DECIMAL[suffix]
    try:
        amount = Decimal(f"{num}.{denom or 0}")
    except InvalidOperation:
        return 0, text
    sign = 0 if amount == 0 else (-1 if sign_text == "-" else 1)
    if not whole.strip("0") and frac is None and not suffix:  # all zeros: kube's early return
        return sign, _struct(0, 0, "", "DecimalSI")
    fast = _fast_path(num, denom, fmt, exponent, negative=sign_text == "-", text=text)
    if fast is not None:
        return sign, fast
    return sign, _struct(0, 0, "", fmt if fmt != "BinarySI" or abs(amount) >= 1 else
                         "DecimalSI", big=True)


def _fast_path(num: str, denom: str, fmt: str, exponent: int, *, negative: bool,
               text: str) -> str | None:
    """ParseQuantity's int64 path: None when kube takes the inf.Dec one."""
    mantissa, scale = 1, 0
    if fmt == "BinarySI":
        if denom:
            return None
        mantissa = 1 << exponent
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    if precision < 0:
        return None
    scale -= len(denom)
    if scale < -9:
        return None
    shifted = num + denom
    result = int(shifted) * mantissa
    if result >= _INT64:
        return None
    if negative:
        result = -result
    if fmt == "BinarySI":
        canonical = exponent % 10 == 0 and int(shifted) & 0x07 != 0
    else:
        canonical = _go_mod(scale, 3) == 0 and not shifted.endswith("000") and \
            shifted[0] != "0"
    return _struct(result, scale, text if canonical else "", fmt)


def _go_mod(a: int, b: int) -> int:
    """Go's %: the sign of the dividend."""
    return abs(a) % b * (-1 if a < 0 else 1)
