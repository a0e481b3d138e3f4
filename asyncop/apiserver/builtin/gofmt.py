"""Go's printing of values, as kube's messages show them: the one place for `%q`, `%v`, `%#v`.

kube's error texts print Go values with `fmt`, so the same value reads differently by verb:

- `go_quote`: Go's `strconv.Quote` (`%q`): printable runes kept, the rest escaped as Go
  escapes them (`\\n`, `\\x01`, `\\u00ad`, `\\U0001f600`);
- `go_value`: a bad value as `field.Error.ErrorBody` prints it — numbers and booleans with
  `%v`, strings with `%q`, `null` for nil, and anything else with `%#v` (Go syntax:
  `[]string{"a"}`, `map[string]string{"a":"b"}`); `Raw` marks a value already rendered (a
  Go struct, an IntOrString), shown as is; `go_string_slice`, `go_string_map`,
  `go_label_selector` and `go_int_or_string` render the `%#v` of kube's common Go types
  (a non-nil pointer inside one shows the stand-in address `GO_POINTER`);
- `go_v`: `%v` of a decoded JSON value (`map[a:1 b:[x y]]`, strings bare, floats as
  `strconv.FormatFloat(f, 'g', -1, 64)`), `go_sharp_v` its `%#v` (`map[string]interface
  {}{"a":1}`), `go_type` its `%T`.

Go's `IsPrint` and Python's `str.isprintable` agree (Unicode categories L, M, N, P, S and the
ASCII space), which `go_quote` relies on. Invariant: pure string functions that never raise,
whatever JSON value they are given.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "GO_POINTER", "Raw", "go_float", "go_int_or_string", "go_label_selector", "go_quote",
    "go_sharp_v", "go_string_map", "go_string_slice", "go_type", "go_v", "go_value",
]


#: `%#v` prints a pointer's address, which only the Go process knows; this one stands in.
GO_POINTER = "0xc000010000"


class Raw(str):
    """A value already rendered (a Go struct, an IntOrString's `%#v`): shown as is."""


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """Go's `strconv.Quote`: printable runes kept, the rest escaped as Go escapes them."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        escape = _ESCAPES.get(ch)
        if escape is not None:
            out.append(escape)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_value(value: Any) -> str:
    """A bad value as `field.Error.ErrorBody` prints it."""
    if isinstance(value, Raw):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # a JSON number kube decoded into an integer field prints as that integer
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return go_float(value)
    if isinstance(value, dict):
        return go_string_map(value)
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return go_string_slice(value)
        return "[]interface {}{" + ", ".join(go_value(v) for v in value) + "}"
    return str(value)


def go_string_slice(values: list[str], type_name: str = "[]string") -> str:
    """`%#v` of a string slice, under its Go type (`[]core.IPFamily{"IPv4"}`)."""
    return type_name + "{" + ", ".join(go_quote(v) for v in values) + "}"


def go_string_map(value: Any) -> str:
    """`%#v` of a map[string]string: keys sorted, as Go's fmt prints maps (absent: nil)."""
    if not isinstance(value, dict):
        return "map[string]string(nil)"
    inner = ", ".join(f"{go_quote(str(k))}:{go_value(v)}" for k, v in sorted(value.items()))
    return "map[string]string{" + inner + "}"


def go_int_or_string(value: Any) -> Raw:
    """`%#v` of an intstr.IntOrString (its String() has a pointer receiver, so kube 1.33's
    field errors print the struct): `intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}`."""
    if isinstance(value, str):
        return Raw(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}")
    number = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return Raw(f'intstr.IntOrString{{Type:0, IntVal:{number}, StrVal:""}}')


def go_label_selector(selector: Any) -> Raw:
    """A *metav1.LabelSelector as field errors print it: ErrorBody dereferences the pointer
    and the value has no String() (it is the pointer's), so `%#v`:
    `v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.
    LabelSelectorRequirement(nil)}`; a nil selector is `null`."""
    if not isinstance(selector, dict):
        return Raw("null")
    exprs = selector.get("matchExpressions")
    if isinstance(exprs, list):
        shown = ", ".join(_go_requirement(e if isinstance(e, dict) else {}) for e in exprs)
        reqs = "[]v1.LabelSelectorRequirement{" + shown + "}"
    else:
        reqs = "[]v1.LabelSelectorRequirement(nil)"
    return Raw(f"v1.LabelSelector{{MatchLabels:{go_string_map(selector.get('matchLabels'))}, "
               f"MatchExpressions:{reqs}}}")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _go_requirement(expr: dict[str, Any]) -> str:
    values = expr.get("values")
    shown = (go_string_slice([_text(v) for v in values]) if isinstance(values, list)
             else "[]string(nil)")
    return (f"v1.LabelSelectorRequirement{{Key:{go_quote(_text(expr.get('key')))}, "
            f"Operator:{go_quote(_text(expr.get('operator')))}, Values:{shown}}}")


# --- decoded JSON values (map[string]interface{} and its contents) ----------------------------

def go_v(value: Any) -> str:
    """Go's `%v` (and `%+v`) of a decoded JSON value: `map[a:1 b:[x y]]`, keys sorted,
    strings bare, nil as `<nil>`."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_sharp_v(value: Any) -> str:
    """Go's `%#v` of a decoded JSON value: `1`, `true`, `"a"`, `[]interface {}{"a"}`,
    `map[string]interface {}{"k":1}` (keys sorted)."""
    if isinstance(value, dict):
        return "map[string]interface {}{" + ", ".join(
            f"{go_quote(str(k))}:{go_sharp_v(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp_v(v) for v in value) + "}"
    if isinstance(value, str):
        return go_quote(value)
    if value is None:
        return "interface {}(nil)"
    return go_v(value)


def go_type(value: Any) -> str:
    """Go's `%T` of a decoded JSON value (integers are int64, as kube's decoders keep them)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, float):
        return "float64"
    return "<nil>" if value is None else "int64"


def go_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), which `%v` uses: the shortest digits that read
    back, in exponent form when the exponent is below -4 or from 6 on (`1e+06`, `1e-05`)."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    text = repr(value)
    mantissa, _, exp_text = text.partition("e")
    digits = mantissa.replace("-", "").replace(".", "").lstrip("0") or "0"
    if exp_text:
        exponent = int(exp_text)
    else:
        whole = mantissa.lstrip("-").split(".")[0]
        exponent = len(whole.lstrip("0")) - 1 if whole.strip("0") else \
            -(len(mantissa.split(".")[1]) - len(mantissa.split(".")[1].lstrip("0")) + 1)
    digits = digits.rstrip("0") or "0"
    sign = "-" if value < 0 else ""
    if exponent < -4 or exponent >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    text = repr(abs(value))
    if "e" in text:
        text = f"{abs(value):.{max(0, len(digits) - exponent - 1)}f}"
    return sign + (text[:-2] if text.endswith(".0") else text)
