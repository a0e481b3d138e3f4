"""The typed-decoding walk: what kube-apiserver's decode into a Go struct does to a JSON dict.

kube decodes every built-in object into its Go type before defaulting, admission and
validation (kube: the JSON serializer's Decode, sigs.k8s.io/json's UnmarshalStrict). Here
`decode_value` walks a JSON dict against the kind's compiled tree (`gotypes.compiled`) and
does the same, in place:

- unknown fields are dropped (a Go struct cannot hold them) and, when asked for, reported as
  kube's strict errors `unknown field "spec.template.spec.containers[0].imagee"` (paths with
  map keys and `[i]` indexes, at most 100, each once, in document order);
- duplicate keys (objects built by `dupkeys`) are reported as `duplicate field "spec.replicas"`;
- a value of the wrong JSON type is Go's first `UnmarshalTypeError`, e.g. `json: cannot
  unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32` (the
  innermost struct, then the JSON field names from the root, no indexes or map keys; numbers
  that do not fit show their literal: `number 1.5`, `number 99999999999`); Go keeps
  decoding after one, and a later error of a type with its own UnmarshalJSON (Quantity,
  Time, MicroTime, IntOrString) replaces it, as that one aborts Go's decode;
- base64 (`[]byte`), RFC 3339 times and quantities are checked with the Go parsers' own
  error texts (`goerrors`); `null` leaves Go's zero value: a struct field is dropped, a list
  item or map value becomes the zero value of its type.

Every valid Quantity passes through `canonical_quantity`, the one hook where kube's
canonical form (`1024Mi` → `1Gi`) is applied. The happy path is a tight walk with no path
bookkeeping (`_fast`); anything unusual reruns the walk with full bookkeeping (`_Full`).
Invariants: never raises on any JSON value (only `Outcome.fatal` carries errors); the object
it returns holds no unknown field and no `null` struct field.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from asyncop.apiserver.builtin import dupkeys, gotypes
from asyncop.apiserver.builtin.fastwalk import Slow, count_keys, fast, rewritten_seen
from asyncop.apiserver.builtin.goerrors import (
    base64_error,
    json_kind,
    time_error,
)
from asyncop.apiserver.builtin.gofmt import go_quote
from asyncop.apiserver.builtin.gotypes import Node
from asyncop.apiserver.builtin.quantity import parse_error
from asyncop.apiserver.builtin.quantityhook import canonical_quantity

__all__ = ["Outcome", "canonical_quantity", "decode_value"]

_KEY_TOKEN = re.compile(rb'"\s*:')
_MAX_STRICT = 100


@dataclass(slots=True)
class Outcome:
    """What decoding found: `fatal` is the error Go's decoder returns (the request fails in
    every fieldValidation mode), `strict` the strict-decoding errors (unknown and duplicate
    fields: 400 under Strict, warnings under Warn); `obj` is the decoded object."""

    obj: dict[str, Any]
    fatal: str | None = None
    strict: list[str] = field(default_factory=list)
    #: every Quantity of `obj` is in the form `canonical.canonicalize` writes (known only
    #: when the fast walk decoded it: False says nothing)
    canonical: bool = False


def decode_value(node: Node, obj: dict[str, Any], *, strict: bool,
                 raw: bytes | None = None) -> Outcome:
    """Decode `obj` (a JSON object) as kube decodes it into the Go type `node`, in place.

    `strict`: collect strict errors (fieldValidation Strict or Warn); `raw`: the JSON text
    `obj` was parsed from, when there is one — used to find duplicate keys (counted against
    the keys walked) and the literal text of numbers in error messages."""
    rewritten = rewritten_seen()
    try:
        keys = fast(obj, node)
    except Slow:
        pass
    else:
        if raw is None or not strict or not _more_keys(raw, keys):
            return Outcome(obj, canonical=rewritten_seen() == rewritten)
    out = _Full(strict).run(obj, node)
    if raw is not None and (strict or out.float_error):
        if strict and _more_keys(raw, out.keys):
            reparsed = dupkeys.loads_json(raw)  # duplicates marked, float literals kept
            if isinstance(reparsed, dict):
                out = _Full(strict).run(reparsed, node)
                # back to plain JSON values (GoFloat and DupDict are the parse's own types)
                obj = _plain(reparsed)
        elif out.float_error:
            reparsed = dupkeys.loads_json(raw)
            if isinstance(reparsed, dict):
                out.fatal = _Full(strict).run(reparsed, node).fatal
    return Outcome(obj, out.fatal, out.strict if out.fatal is None else [])


def _plain(value: Any) -> Any:
    """A `dupkeys.loads_json` value as the server's parser would have given it: plain dicts,
    floats, and integers beyond 64 bits as floats (orjson's reading of them)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int) and not isinstance(value, bool) and \
            not -gotypes.INT64_LIMIT <= value < (1 << 64):
        return float(value)
    return value


def _more_keys(raw: bytes, walked: int) -> bool:
    """Whether `raw` may hold more object keys than were walked (a duplicate): `":` counted
    (string contents can only add to it); spaced `" :` forms only when the count is short."""
    count = raw.count(b'":')
    if count < walked:
        count = len(_KEY_TOKEN.findall(raw))
    return count > walked


# --- the full walk: Go's semantics and words --------------------------------------------------

class _Returned(Exception):
    """An error a type's own UnmarshalJSON returned: Go's decode stops there."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _literal(value: int | float) -> str:
    """A JSON number's text: the literal when the parser kept it (`dupkeys.GoFloat`)."""
    text = getattr(value, "literal", None)
    if text is not None:
        return str(text)
    return str(value) if isinstance(value, int) else repr(float(value))


_ZERO: dict[int, Any] = {gotypes.STRING: "", gotypes.BOOL: False, gotypes.INT32: 0,
                         gotypes.INT64: 0, gotypes.INT: 0, gotypes.FLOAT: 0,
                         gotypes.INT_OR_STRING: 0, gotypes.QUANTITY: "0"}


class _Full:
    def __init__(self, strict: bool) -> None:
        self.strict_on = strict
        self.strict: list[str] = []
        self.seen: set[str] = set()
        self.fatal: str | None = None
        self.float_error = False
        self.keys = 0
        self.spath: list[str] = []  # strict path: keys and [i]
        self.gpath: list[str] = []  # Go's error context: struct field names
        self.struct = ""

    def run(self, obj: dict[str, Any], node: Node) -> _Full:
        try:
            self.value(obj, node)
        except _Returned as exc:
            self.fatal = exc.message
        except RecursionError:  # bodylimits keep real requests far from this
            self.fatal = "json: exceeded max depth"
        return self

    # errors
    def type_error(self, what: str, go_type: str, *, is_float: bool = False) -> None:
        if self.fatal is None:
            self.fatal = self.type_text(what, go_type)
            self.float_error = is_float

    def type_text(self, what: str, go_type: str) -> str:
        if self.gpath or self.struct:
            return (f"json: cannot unmarshal {what} into Go struct field "
                    f"{self.struct}.{'.'.join(self.gpath)} of type {go_type}")
        return f"json: cannot unmarshal {what} into Go value of type {go_type}"

    def strict_error(self, kind: str, key: str) -> None:
        if not self.strict_on or len(self.strict) >= _MAX_STRICT:
            return
        path = "".join(self.spath)
        text = f"{kind} {go_quote(f'{path}.{key}' if path else key)}"
        if text not in self.seen:
            self.seen.add(text)
            self.strict.append(text)

    def push_key(self, key: str) -> None:
        self.spath.append("." + key if self.spath else key)

    # the walk
    def value(self, value: Any, node: Node) -> Any:
        """Check `value` against `node`; returns the value to keep (maybe converted)."""
        tag = node[0]
        if tag == gotypes.STRUCT:
            if isinstance(value, dict):
                self.struct_fields(value, node)
            else:
                self.type_error(json_kind(value), node[1])
        elif tag == gotypes.LIST:
            if isinstance(value, list):
                item_node = node[2]
                for i, item in enumerate(value):
                    self.spath.append(f"[{i}]")
                    value[i] = self.element(item, item_node)
                    self.spath.pop()
            else:
                self.type_error(json_kind(value), node[1])
        elif tag == gotypes.MAP:
            if isinstance(value, dict):
                self.keys += len(value)
                self.duplicates(value)
                value_node = node[2]
                for key in list(value):
                    self.push_key(key)
                    value[key] = self.element(value[key], value_node)
                    self.spath.pop()
            else:
                self.type_error(json_kind(value), node[1])
        elif tag == gotypes.ANY:
            self.keys += count_keys(value)
        else:
            return self.scalar(value, node)
        return value

    def element(self, item: Any, node: Node) -> Any:
        """A list item or map value: `null` is the zero value of its type."""
        if item is None:
            tag = node[0]
            if tag == gotypes.STRUCT:
                return {}
            return _ZERO.get(tag)
        return self.value(item, node)

    def struct_fields(self, obj: dict[str, Any], node: Node) -> None:
        fields = node[2]
        self.keys += len(obj)
        self.duplicates(obj)
        outer_struct = self.struct
        for key in list(obj):
            sub = fields.get(key)
            if sub is None:
                self.strict_error("unknown field", key)
                del obj[key]
                continue
            item = obj[key]
            if item is None:
                del obj[key]
                continue
            self.struct = node[3]
            self.gpath.append(key)
            self.push_key(key)
            obj[key] = self.value(item, sub)
            self.spath.pop()
            self.gpath.pop()
            self.struct = outer_struct

    def duplicates(self, obj: dict[str, Any]) -> None:
        for key in getattr(obj, "duplicates", ()):
            self.strict_error("duplicate field", key)

    def scalar(self, value: Any, node: Node) -> Any:
        tag, go_type = node[0], node[1]
        if tag == gotypes.STRING:
            if not isinstance(value, str):
                self.type_error(json_kind(value), go_type)
        elif tag == gotypes.BOOL:
            if not isinstance(value, bool):
                self.type_error(json_kind(value), go_type)
        elif tag in (gotypes.INT32, gotypes.INT64, gotypes.INT):
            limit = gotypes.INT32_LIMIT if tag == gotypes.INT32 else gotypes.INT64_LIMIT
            self.integer(value, go_type, limit)
        elif tag == gotypes.FLOAT:
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.type_error(json_kind(value), go_type)
        elif tag == gotypes.BYTES:
            return self.bytes(value, go_type)
        elif tag == gotypes.TIME or tag == gotypes.MICROTIME:
            if not isinstance(value, str):  # Time's UnmarshalJSON: json.Unmarshal to string
                raise _Returned(self.type_text(json_kind(value), "string"))
            error = time_error(value, node[2])
            if error:
                raise _Returned(error)
        elif tag == gotypes.QUANTITY:
            return self.quantity(value)
        elif tag == gotypes.INT_OR_STRING and not isinstance(value, str):
            # IntOrString's UnmarshalJSON: anything but a string is json.Unmarshal'd to int32
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise _Returned(self.type_text(json_kind(value), "int32"))
            if isinstance(value, float) or not -gotypes.INT32_LIMIT <= value < gotypes.INT32_LIMIT:
                raise _Returned(self.type_text(f"number {_literal(value)}", "int32"))
        return value

    def integer(self, value: Any, go_type: str, bound: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.type_error(json_kind(value), go_type)
        elif isinstance(value, float) or not -bound <= value < bound:
            self.type_error(f"number {_literal(value)}", go_type,
                            is_float=isinstance(value, float))

    def bytes(self, value: Any, go_type: str) -> Any:
        if isinstance(value, str):
            error = base64_error(value)
            if error and self.fatal is None:
                self.fatal = error
            return value
        if isinstance(value, list):  # a JSON array of numbers also decodes into []byte
            out = bytearray()
            for item in value:
                if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < 256:
                    out.append(item)
                elif isinstance(item, int | float) and not isinstance(item, bool):
                    self.type_error(f"number {_literal(item)}", "uint8")
                else:
                    self.type_error(json_kind(item), "uint8")
            return base64.b64encode(bytes(out)).decode()
        self.type_error(json_kind(value), go_type)
        return value

    def quantity(self, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
        elif isinstance(value, int | float) and not isinstance(value, bool):
            text = _literal(value)
        else:  # Quantity's UnmarshalJSON parses the raw JSON text
            text = json.dumps(value, separators=(",", ":"))
        error = parse_error(text)
        if error:
            raise _Returned(error)
        return canonical_quantity(value)
