"""The error texts of the Go parsers kube's typed decoding calls, re-implemented exactly.

When kube-apiserver decodes a built-in object, a few values are parsed by their Go types'
own `UnmarshalJSON`, and the 400 it answers carries that parser's error text verbatim:

- `json_kind`: the JSON kind in encoding/json's UnmarshalTypeError (`cannot unmarshal
  string into …`);
- `base64_error`: Go's `base64.StdEncoding` (`[]byte` fields such as Secret `data`) —
  `illegal base64 data at input byte N`, N as Go's decoder counts it;
- `time_error`: Go's `time.Parse` with metav1.Time's layout (RFC 3339) or metav1.MicroTime's
  (`2006-01-02T15:04:05.000000Z07:00`) — `parsing time "x" as "…": cannot parse "…" as "…"`,
  the range errors and `extra text`.

Go's `strconv.Quote`, which strict-decoding paths are quoted with, is `gofmt.go_quote`;
resource.ParseQuantity's errors are `quantity.parse_error`.
Invariants: pure functions of their argument, never raising; each answers None for a value
Go accepts, so `x_error(v) is None` is exactly "Go would decode this".
"""

from __future__ import annotations

__all__ = [
    "MICRO_LAYOUT",
    "RFC3339_LAYOUT",
    "base64_error",
    "json_kind",
    "time_error",
]

_DIGITS = frozenset("0123456789")


# --- encoding/json ---------------------------------------------------------------------------

def json_kind(value: object) -> str:
    """The `Value` of Go's UnmarshalTypeError for a JSON value (`json: cannot unmarshal
    <kind> into Go value of type …`; numbers without their literal)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "array" if isinstance(value, list) else "object"


# --- encoding/base64 (StdEncoding) ------------------------------------------------------------

_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NEWLINES = (0x0A, 0x0D)


def base64_error(text: str) -> str | None:
    """Go's `base64.StdEncoding.Decode` error for `text`, or None (CorruptInputError offsets
    are byte offsets into the UTF-8 text, newlines skipped as Go skips them)."""
    src = text.encode()
    n = len(src)
    si = 0
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return _corrupt(si - j)
            c = src[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in _NEWLINES:
                continue
            if c != 0x3D:  # '='
                return _corrupt(si - 1)
            if j in (0, 1):
                return _corrupt(si - 1)  # incorrect padding
            if j == 2:  # "==" expected, the first "=" consumed
                while si < n and src[si] in _NEWLINES:
                    si += 1
                if si == n:
                    return _corrupt(n)
                if src[si] != 0x3D:
                    return _corrupt(si - 1)
                si += 1
            while si < n and src[si] in _NEWLINES:
                si += 1
            if si < n:
                return _corrupt(si)  # trailing garbage
            return None


def _corrupt(offset: int) -> str:
    return f"illegal base64 data at input byte {offset}"


# --- time.Parse ---------------------------------------------------------------------------

RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00"
MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"
# (prefix, element) chunks of each layout, as Go's nextStdChunk splits them
_CHUNKS = {
    RFC3339_LAYOUT: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"),
                     (":", "05"), ("", "Z07:00")),
    MICRO_LAYOUT: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"),
                   (":", "05"), ("", ".000000"), ("", "Z07:00")),
}
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class _Bad(Exception):
    pass


def _getnum(s: str, fixed: bool) -> tuple[int, str]:
    if not s or s[0] not in _DIGITS:
        raise _Bad
    if len(s) < 2 or s[1] not in _DIGITS:
        if fixed:
            raise _Bad
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def time_error(value: str, layout: str = RFC3339_LAYOUT) -> str | None:
    """Go's `time.Parse(layout, value)` error text, or None when it parses."""
    year = month = day = 0
    rest = value
    chunks = _CHUNKS[layout]
    for i, (prefix, element) in enumerate(chunks):
        if prefix:
            if not rest or rest[0] != prefix:
                return _parse_error(value, layout, rest, prefix)
            rest = rest[1:]
        hold = rest
        out_of_range = ""
        try:
            if element == "2006":
                if len(rest) < 4 or rest[0] not in _DIGITS or \
                        not all(c in _DIGITS for c in rest[:4]):
                    raise _Bad
                year, rest = int(rest[:4]), rest[4:]
            elif element == "01":
                month, rest = _getnum(rest, True)
                if not 1 <= month <= 12:
                    out_of_range = "month"
            elif element == "02":
                day, rest = _getnum(rest, True)
            elif element == "15":
                hour, rest = _getnum(rest, False)
                if not 0 <= hour < 24:
                    out_of_range = "hour"
            elif element == "04":
                minute, rest = _getnum(rest, True)
                if not 0 <= minute < 60:
                    out_of_range = "minute"
            elif element == "05":
                second, rest = _getnum(rest, True)
                if not 0 <= second < 60:
                    out_of_range = "second"
                elif len(rest) >= 2 and rest[0] in ".," and rest[1] in _DIGITS and \
                        chunks[i + 1][1] != ".000000":  # a fraction the layout lacks
                    n = 2
                    while n < len(rest) and rest[n] in _DIGITS:
                        n += 1
                    rest = rest[n:]
            elif element == ".000000":
                if len(rest) < 7 or rest[0] not in ".," or \
                        not all(c in _DIGITS for c in rest[1:7]):
                    raise _Bad
                rest = rest[7:]
            else:  # Z07:00
                if rest[:1] == "Z":
                    rest = rest[1:]
                else:
                    if len(rest) < 6 or rest[3] != ":":
                        raise _Bad
                    sign, hh, mm, rest = rest[0], rest[1:3], rest[4:6], rest[6:]
                    hours = minutes = 0
                    bad = False
                    try:
                        hours, _ = _getnum(hh, True)
                        minutes, _ = _getnum(mm, True)
                    except _Bad:
                        bad = True
                    if hours > 24:  # Go checks the ranges first, the last one wins
                        out_of_range = "time zone offset hour"
                    if minutes > 60:
                        out_of_range = "time zone offset minute"
                    if (bad or sign not in "+-") and not out_of_range:
                        raise _Bad
        except _Bad:
            return _parse_error(value, layout, hold, element)
        if out_of_range:
            return f"parsing time {_time_quote(value)}: {out_of_range} out of range"
    if rest:
        return f"parsing time {_time_quote(value)}: extra text: {_time_quote(rest)}"
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > (29 if month == 2 and leap else _DAYS[month - 1]):
        return f"parsing time {_time_quote(value)}: day out of range"
    return None


def _parse_error(value: str, layout: str, elem_value: str, elem_layout: str) -> str:
    return (f"parsing time {_time_quote(value)} as {_time_quote(layout)}: cannot parse "
            f"{_time_quote(elem_value)} as {_time_quote(elem_layout)}")


def _time_quote(text: str) -> str:
    """The time package's own quote: bytes outside printable ASCII as \\xNN."""
    out = ['"']
    for ch in text:
        if ch >= "\x80" or ch < " ":
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            if ch in '"\\':
                out.append("\\")
            out.append(ch)
    out.append('"')
    return "".join(out)
