"""Bad values rendered as kube's field errors print them (`field.Error.ErrorBody`).

ErrorBody dereferences pointers, prints numbers and booleans with `%v`, strings with `%q`
(Go's strconv.Quote, `go_quote`), values with a String() method through it, and anything
else with `%#v` (Go syntax: `map[string]string{"a":"b"}`, `v1.LabelSelector{...}`; a nil
map is `map[string]string(nil)`). `Raw` marks a value already rendered. Invariant: pure
string functions.
"""

from __future__ import annotations

from typing import Any


class Raw(str):
    """A value already rendered (a Go struct, an IntOrString's `String()`): shown as is."""


def go_quote(text: str) -> str:
    """Go's `strconv.Quote`: printable characters kept, the rest escaped."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v"}


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
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e21 else str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return go_string_map(value)
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
        return "[]interface {}{" + ", ".join(go_value(v) for v in value) + "}"
    return str(value)


def go_string_map(value: Any) -> str:
    """`%#v` of a map[string]string: keys sorted, as Go's fmt prints maps (absent: nil)."""
    if not isinstance(value, dict):
        return "map[string]string(nil)"
    items = value
    inner = ", ".join(f"{go_quote(str(k))}:{go_value(v)}" for k, v in sorted(items.items()))
    return "map[string]string{" + inner + "}"


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
    shown = ("[]string{" + ", ".join(go_quote(_text(v)) for v in values) + "}"
             if isinstance(values, list) else "[]string(nil)")
    return (f"v1.LabelSelectorRequirement{{Key:{go_quote(_text(expr.get('key')))}, "
            f"Operator:{go_quote(_text(expr.get('operator')))}, Values:{shown}}}")
