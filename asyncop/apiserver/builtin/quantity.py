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

Parsing follows ParseQuantity step by step (kube: apimachinery pkg/api/resource,
quantity.go and suffix.go): its int64 fast path (`_int64_amount`, the `int64Amount{value,
scale}` it builds), then its inf.Dec slow path. `parse_error` is the decode check (the
error text or None, no arithmetic); `sign` is Quantity.Sign; `go_struct` prints the struct a
field error shows (`%#v`). Errors carry kube's messages (ErrFormatWrong, ErrSuffix,
ErrNumeric); `QuantityError` is raised with them.

One divergence, by design: kube keeps a value as (digits, decimal scale) and accepts any
int32 scale (`1e2000000000`); exact arithmetic on such a value would take this server
minutes and gigabytes, so `parse_text` refuses a value spanning more than `MAX_DIGITS`
decimal places (`OUT_OF_RANGE`). The decode check (`parse_error`) still accepts it, as kube
does; the rules that need the value skip it, and it is stored as written.
Invariant: exact arithmetic only (`Fraction`), never floats, except to read a JSON number's
text; no parse costs more than `MAX_DIGITS`-digit integers.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from asyncop.apiserver.builtin.gofmt import go_quote

__all__ = ["QUANTITY_JSON", "Quantity", "QuantityError", "canonical", "compare", "go_struct",
           "milli_rounded", "nanos_of", "parse", "parse_error", "parse_text", "sign", "text_of"]

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE + "'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
NUMERIC_WRONG = "unable to parse numeric part of quantity"
OUT_OF_RANGE = "quantity beyond the exact arithmetic of this server"
MAX_DIGITS = 1000

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL.items()}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_EXP = {v: k for k, v in _BINARY.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_EXPONENT = re.compile(r"[+-]?[0-9]+")
_NANO = Fraction(1, 10**9)
_INT64 = 2**63
_MAX_BINARY = Fraction(_INT64 - 1)  # kube caps binary quantities at int64


QUANTITY_JSON = (str, int, float)
"""The JSON types a Quantity is written as, for `isinstance` (a bool is an int: exclude it);
a tuple, as `str | int | float` would be built anew at every call."""


class QuantityError(ValueError):
    """A malformed quantity; `str(err)` is kube's message."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact value, the suffix family it was written in, and the text kube keeps for it
    (`text` is set when the written form is already canonical). `nanos` is the value in
    units of 10^-9 — every quantity parsed here is a whole number of them (kube rounds to
    nano), and so are their sums and roundings — for integer arithmetic instead of
    Fraction's; None only for a value built by hand finer than that."""

    value: Fraction
    format: str  # "DecimalSI" | "BinarySI" | "DecimalExponent"
    text: str = ""
    nanos: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        whole, rest = divmod(self.value.numerator * 10**9, self.value.denominator)
        object.__setattr__(self, "nanos", None if rest else whole)

    def __str__(self) -> str:
        return self.text or _canonical(self.value, self.format)

    def signum(self) -> int:
        """Quantity.Sign: -1, 0 or 1."""
        number = self.nanos if self.nanos is not None else self.value
        return (number > 0) - (number < 0)

    def round_up(self, scale: int) -> Quantity:
        """kube's Quantity.RoundUp(scale): the value rounded away from zero to 10^scale
        (SetDefaults_ResourceList rounds every resource value up to milli, scale -3)."""
        if self.nanos is not None and -9 <= scale and self.nanos % 10 ** (scale + 9) == 0:
            return self  # already a whole number of 10^scale: exact integer test
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
    """suffixHandler.interpret: (base, exponent, format), or SUFFIX_WRONG. An `e<n>` exponent
    is read as an int64 and kept as Go's int32(n) keeps it (wrapped)."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], "DecimalSI"
    if suffix in _BINARY:
        return 2, _BINARY[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix[1:]):
        parsed = int(suffix[1:])
        if -_INT64 <= parsed < _INT64:
            return 10, (parsed + 2**31) % 2**32 - 2**31, "DecimalExponent"
    raise QuantityError(SUFFIX_WRONG)


def _int64_amount(text: str, positive: bool, num: str, denom: str, exponent: int,
                  fmt: str) -> tuple[int, int, str] | None:
    """ParseQuantity's int64 fast path: (value, scale, kept text) of the int64Amount it
    builds — the text kept when it already is canonical for its suffix family — or None
    when kube takes the inf.Dec path (too many digits, finer than nano, int64 overflow)."""
    if fmt == "BinarySI":
        if denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return None
        value, scale = int(num) << exponent, 0
        if value >= _INT64:
            return None
        kept = text if exponent % 10 == 0 and int(num) & 0x07 != 0 else ""
    else:
        if 18 - (len(num) + len(denom)) < 0:
            return None
        scale = exponent - len(denom)
        if scale < -9:
            return None
        shifted = num + denom
        value = int(shifted)
        kept = text if scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0" \
            else ""
    return (value if positive else -value), scale, kept


def _parsed(text: str) -> tuple[bool, str, str, str, int, str]:
    """(positive, value, num, denom, exponent, format) of a non-empty text other than "0";
    QuantityError with kube's message when the syntax or suffix is wrong."""
    positive, value, num, denom, suffix = _scan(text)
    _, exponent, fmt = _interpret(suffix)
    return positive, value, num, denom, exponent, fmt


def _digits_ok(value: str) -> bool:
    """inf.Dec.SetString of ParseQuantity's numeric part: it needs one digit."""
    return any("0" <= c <= "9" for c in value)


def parse_error(text: str) -> str | None:
    """kube's ParseQuantity error for `text` (already trimmed of spaces), or None: the
    decode check, with no arithmetic."""
    if not text:
        return FORMAT_WRONG
    if text == "0":
        return None
    try:
        positive, value, num, denom, exponent, fmt = _parsed(text)
    except QuantityError as err:
        return str(err)
    if _int64_amount(text, positive, num, denom, exponent, fmt) is not None:
        return None
    return None if _digits_ok(value) else NUMERIC_WRONG


@functools.lru_cache(maxsize=4096)
def parse_text(text: str) -> Quantity:
    """kube's ParseQuantity (no surrounding whitespace allowed). Memoised: manifests repeat
    the same few quantities (`500m`, `128Mi`), and a Quantity is immutable."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(Fraction(0), "DecimalSI", "0")
    positive, value, num, denom, exponent, fmt = _parsed(text)
    if abs(exponent) + len(num) + len(denom) > MAX_DIGITS:
        raise QuantityError(OUT_OF_RANGE)
    fast = _int64_amount(text, positive, num, denom, exponent, fmt)
    if fast is not None:
        amount, scale, kept = fast
        exact = Fraction(amount * 10**scale) if scale >= 0 else Fraction(amount, 10**-scale)
        return Quantity(exact, fmt, kept)
    if not _digits_ok(value):
        raise QuantityError(NUMERIC_WRONG)
    whole, _, frac = value.lstrip("+-").partition(".")
    magnitude = Fraction(int(whole + frac or "0"), 10 ** len(frac))
    magnitude *= Fraction(10) ** exponent if fmt != "BinarySI" else 2 ** exponent
    if magnitude:
        magnitude = math.ceil(magnitude / _NANO) * _NANO  # round up to nano precision
    if fmt == "BinarySI":
        magnitude = min(magnitude, _MAX_BINARY)
        if 0 < magnitude < 1:
            fmt = "DecimalSI"
    return Quantity(magnitude if positive else -magnitude, fmt)


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


def text_of(value: Any) -> str | None:
    """The text ParseQuantity reads for a decoded JSON value (Quantity.UnmarshalJSON: a
    string trimmed, a number's JSON text); None for any other JSON type."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None


def parse(value: str | int | float) -> Quantity:
    """A Quantity from a decoded JSON value: a string (surrounding whitespace ignored, as
    kube's UnmarshalJSON trims it) or a number (its JSON text)."""
    text = text_of(value)
    if text is None:
        raise QuantityError(FORMAT_WRONG)
    return parse_text(text)


@functools.lru_cache(maxsize=4096, typed=True)
def canonical(value: str | int | float) -> str:
    """The string kube serialises a quantity as; `QuantityError` with kube's message.
    Memoised (typed: `1` and `1.0` are different JSON texts): every write of a built-in
    kind canonicalises each of its quantities, and they repeat."""
    return str(parse(value))


def _decoded(value: str | int | float) -> Quantity | None:
    text = text_of(value)
    try:
        return parse_text(text) if text is not None else None
    except QuantityError:
        return None  # (decoding refuses it with kube's message)


@functools.lru_cache(maxsize=4096, typed=True)
def milli_rounded(value: str | int | float) -> str | None:
    """SetDefaults_ResourceList of one decoded value: the canonical text of the value
    rounded up to milli, or None when it stays as written (exact at milli already, or no
    quantity at all). Memoised on the value (typed: `1` and `1.0` are different texts)."""
    parsed = _decoded(value)
    rounded = parsed.round_up(-3) if parsed is not None else None
    return None if rounded is parsed or rounded is None else str(rounded)


@functools.lru_cache(maxsize=4096, typed=True)
def nanos_of(value: str | int | float) -> int | Fraction | None:
    """The exact value of a decoded quantity in nano units (an int for everything kube
    parses), or None when it is not a valid quantity. Memoised on the value."""
    parsed = _decoded(value)
    if parsed is None:
        return None
    return parsed.nanos if parsed.nanos is not None else parsed.value * 10**9


def compare(a: Quantity, b: Quantity) -> int:
    """-1, 0 or 1 as kube's Quantity.Cmp (exact)."""
    if a.nanos is not None and b.nanos is not None:
        return (a.nanos > b.nanos) - (a.nanos < b.nanos)
    return (a.value > b.value) - (a.value < b.value)


def sign(text: str) -> int:
    """Quantity.Sign of a valid quantity's text: -1, 0 or 1 (a non-zero value never rounds
    to zero: the slow path rounds up to nano); 0 for a text kube does not parse."""
    if parse_error(text) is not None or text == "0":
        return 0
    positive, _, num, denom, _, _ = _parsed(text)
    if not num.strip("0") and not denom.strip("0"):
        return 0
    return 1 if positive else -1


def go_struct(text: str, *, defaulted: bool = True, dec: str | None = None) -> str | None:
    """`%#v` of the resource.Quantity kube holds for `text`, as a field error prints it
    (Quantity's String() belongs to the pointer). `defaulted`: after SetDefaults_ResourceList's
    RoundUp(-3), which rounds a finer int64Amount to milli, away from zero, and drops the
    kept text. A value on the inf.Dec path shows only its pointer, whose address Go alone
    knows: rendered with the stand-in address `dec`, or None without one."""
    text = text.strip()
    if text == "0":
        return _go_quantity(0, 0, text, "DecimalSI")
    try:
        positive, _, num, denom, exponent, fmt = _parsed(text)
    except QuantityError:
        return None
    fast = _int64_amount(text, positive, num, denom, exponent, fmt)
    if fast is None:
        if dec is None:
            return None
        if fmt == "BinarySI" and _below_one(text):
            fmt = "DecimalSI"
        return _go_quantity(0, 0, "", fmt, dec=dec)
    value, scale, kept = fast
    if defaulted and scale < -3:  # int64Amount.AsScale(-3): rounds away from zero
        whole, rest = divmod(abs(value), 10 ** (-3 - scale))
        whole += 1 if rest else 0
        value, scale, kept = (whole if value > 0 else -whole), -3, ""
    return _go_quantity(value, scale, kept, fmt)


def _below_one(text: str) -> bool:
    try:
        return 0 < abs(parse_text(text).value) < 1
    except QuantityError:
        return False


def _go_quantity(value: int, scale: int, text: str, fmt: str, *, dec: str = "nil") -> str:
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, "
            f"d:resource.infDecAmount{{Dec:(*inf.Dec)({dec})}}, s:{go_quote(text)}, "
            f'Format:"{fmt}"}}')
