"""Kubernetes' resource.Quantity: parsing, exact comparison and the canonical string.

A quantity is `<signedNumber><suffix>` with a decimal SI suffix (n u m "" k M G T P E), a
binary one (Ki Mi Gi Ti Pi Ei) or a decimal exponent (e3, E-6). kube keeps it as an exact
decimal rounded *up* (away from zero) to nano precision, remembers which family of suffix
it was written with, and serialises it in canonical form: no fractional digits, the largest
suffix of that family that loses nothing (`1024Mi` → `1Gi`, `1.5` → `1500m`, `1000Mi` stays).
A binary quantity that is not a whole number, or whose magnitude is below 1024, is shown
as a decimal one (`0.5Gi` → `512Mi` but `1.5` binary → decimal). When the written text is
already canonical kube keeps the text itself (its parser's fast path) — so `100m`, `1Gi`,
`1.500` (!) round-trip unchanged — and this module does the same.

Parsing errors carry kube's messages (`ParseQuantity`'s ErrFormatWrong, ErrSuffix,
ErrNumeric); `QuantityError` is what the decode step reports for a malformed value.
Invariant: exact arithmetic only (`Fraction`), never floats, except to read a JSON number's
text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from asyncop.apiserver.builtin.gofmt import go_quote

__all__ = ["Quantity", "QuantityError", "canonical", "compare", "go_struct", "parse", "parse_text"]

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE + "'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
NUMERIC_WRONG = "unable to parse numeric part of quantity"

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL.items()}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_EXP = {v: k for k, v in _BINARY.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = Fraction(1, 10**9)
_MAX_BINARY = Fraction(2**63 - 1)  # kube caps binary quantities at int64
_INT32 = 2**31 - 1


class QuantityError(ValueError):
    """A malformed quantity; `str(err)` is kube's message."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact value, the suffix family it was written in, and the text kube keeps for it
    (`text` is set when the written form is already canonical)."""

    value: Fraction
    format: str  # "DecimalSI" | "BinarySI" | "DecimalExponent"
    text: str = ""

    def __str__(self) -> str:
        return self.text or _canonical(self.value, self.format)

    def round_up(self, scale: int) -> Quantity:
        """kube's Quantity.RoundUp(scale): the value rounded away from zero to 10^scale
        (SetDefaults_ResourceList rounds every resource value up to milli, scale -3)."""
        step = Fraction(10) ** scale
        units = self.value / step
        if units.denominator == 1:
            return self
        rounded = math.ceil(abs(units)) * (1 if units > 0 else -1)
        return Quantity(rounded * step, self.format)


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix); FORMAT_WRONG if the tail
    is not a suffix."""
    positive, pos, end = True, 0, len(text)
    if text[:1] in ("-", "+"):
        positive = text[0] != "-"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix, or SUFFIX_WRONG."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], "DecimalSI"
    if suffix in _BINARY:
        return 2, _BINARY[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        exponent = int(suffix[1:])
        if -_INT32 <= exponent <= _INT32:
            return 10, exponent, "DecimalExponent"
    raise QuantityError(SUFFIX_WRONG)


def parse_text(text: str) -> Quantity:
    """kube's ParseQuantity (no surrounding whitespace allowed)."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(Fraction(0), "DecimalSI", "0")
    positive, value, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    fast = _fast_path(text, num, denom, exponent, fmt)
    if fast is not None:
        amount, kept = fast
        return Quantity(amount if positive else -amount, fmt, kept)
    digits = value.lstrip("+-")
    whole, _, frac = digits.partition(".")
    if not (whole + frac).isdigit():
        raise QuantityError(NUMERIC_WRONG)
    amount = Fraction(int(whole + frac), 10 ** len(frac))
    amount *= Fraction(10) ** exponent if base == 10 else 2 ** exponent
    if amount:
        amount = math.ceil(amount / _NANO) * _NANO  # round up to nano precision
    if fmt == "BinarySI":
        amount = min(amount, _MAX_BINARY)
        if 0 < amount < 1:
            fmt = "DecimalSI"
    return Quantity(amount if positive else -amount, fmt)


def _fast_path(text: str, num: str, denom: str, exponent: int,
               fmt: str) -> tuple[Fraction, str] | None:
    """ParseQuantity's int64 fast path: (magnitude, kept text) for values small enough, the
    text kept when it already is canonical for its suffix family; None otherwise."""
    if fmt == "BinarySI":
        if denom or exponent < 0 or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return None
        magnitude = int(num) << exponent
        if magnitude > 2**63 - 1:
            return None
        kept = text if exponent % 10 == 0 and int(num) & 0x07 != 0 else ""
        return Fraction(magnitude), kept
    scale = exponent - len(denom)
    if 18 - (len(num) + len(denom)) < 0 or scale < -9:
        return None
    shifted = num + denom
    magnitude = int(shifted)
    kept = text if scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0" else ""
    return Fraction(magnitude) * Fraction(10) ** scale, kept


def _canonical(value: Fraction, fmt: str) -> str:
    """CanonicalizeBytes: the largest suffix of the family that keeps the value exact."""
    if value == 0:
        return "0"
    if fmt == "BinarySI":
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = "DecimalSI"
        else:
            number, exp = abs(value.numerator), 0
            while number % 1024 == 0 and exp < 6:
                number //= 1024
                exp += 1
            sign = "-" if value < 0 else ""
            return f"{sign}{number}{_BINARY_BY_EXP.get(exp * 10, '')}"
    mantissa, exponent = _decimal_parts(value)
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == "DecimalSI":
        suffix = _DECIMAL_BY_EXP.get(exponent)
        if suffix is not None:
            return f"{mantissa}{suffix}"
        return _exponent_form(mantissa, exponent)  # beyond E or below n: exponent notation
    return f"{mantissa}e{exponent}" if exponent else str(mantissa)


def _exponent_form(mantissa: int, exponent: int) -> str:
    return f"{mantissa}e{exponent}"


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with every factor of 10 moved into the exponent. Values come
    from parsing (exact at nano precision); anything finer is rounded up to nano first."""
    for digits in range(0, 10):
        scaled = value * 10**digits
        if scaled.denominator == 1:
            return _strip_tens(scaled.numerator, -digits)
    rounded = math.ceil(abs(value) / _NANO) * (1 if value > 0 else -1)
    return _strip_tens(rounded, -9)


def _strip_tens(mantissa: int, exponent: int) -> tuple[int, int]:
    while mantissa and mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    return mantissa, exponent


def parse(value: str | int | float) -> Quantity:
    """A Quantity from a decoded JSON value: a string (surrounding whitespace ignored, as
    kube's UnmarshalJSON trims it) or a number (its JSON text)."""
    if isinstance(value, bool):
        raise QuantityError(FORMAT_WRONG)
    if isinstance(value, int):
        return parse_text(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(FORMAT_WRONG)
        return parse_text(repr(value))
    return parse_text(value.strip())


def canonical(value: str | int | float) -> str:
    """The string kube serialises a quantity as; `QuantityError` with kube's message."""
    return str(parse(value))


def compare(a: Quantity, b: Quantity) -> int:
    """-1, 0 or 1 as kube's Quantity.Cmp (exact)."""
    return (a.value > b.value) - (a.value < b.value)


def go_struct(text: str) -> str | None:
    """`%#v` of the resource.Quantity kube holds for `text` once defaulted (ParseQuantity's
    int64 fast path, then SetDefaults_ResourceList's RoundUp to milli), as a field error
    prints it (Quantity's String() belongs to the pointer). None when kube would hold an
    inf.Dec (its pointer's address is all Go shows)."""
    text = text.strip()
    if text == "0":
        return _go_quantity(0, 0, text, "DecimalSI")
    try:
        positive, _, num, denom, suffix = _scan(text)
        _, exponent, fmt = _interpret(suffix)
    except QuantityError:
        return None
    fast = _fast_path(text, num, denom, exponent, fmt)
    if fast is None:
        return None
    magnitude, kept = fast
    scale = 0 if fmt == "BinarySI" else exponent - len(denom)
    value = int(magnitude / Fraction(10) ** scale) * (1 if positive else -1)
    if scale < -3:  # RoundUp(-3): int64Amount.AsScale, rounding up; the kept text dropped
        step = 10 ** (-3 - scale)
        value, scale, kept = -(-value // step), -3, ""
    return _go_quantity(value, scale, kept, fmt)


def _go_quantity(value: int, scale: int, text: str, fmt: str) -> str:
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, "
            f"d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{go_quote(text)}, "
            f'Format:"{fmt}"}}')
