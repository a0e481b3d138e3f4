"""YAML request bodies decoded as kube-apiserver decodes them, with its limits on aliases.

kube turns a YAML body into JSON with go-yaml v2 (through sigs.k8s.io/yaml): the first
document only, YAML 1.1 scalars as go-yaml resolves them (`y`/`on` are true, timestamps stay
strings, `_` in numbers is ignored), merge keys (`<<`), non-string keys turned into strings,
and every alias expanded into its own copy. Expanding aliases is where a few hundred bytes
become gigabytes ("billion laughs") or a shallow document becomes a deep one, so go-yaml
counts: each node decoded is one decode, each node decoded inside an alias expansion is also
one alias decode, and once there are more than 100 alias decodes and 1,000 decodes, a
document whose alias share exceeds `allowed_alias_ratio` (99% up to 400,000 decodes, down to
10% at 4,000,000) fails with `yaml: document contains excessive aliasing`; an alias inside
its own anchor fails with `yaml: anchor 'x' value contains itself`.

This module composes the document from the C parser's events into light nodes (never
PyYAML's constructor, which shares aliased objects and recurses per level), then decodes it
counting as go-yaml does, and also bounds what expansion may produce: at most `MAX_DEPTH`
levels counted on the expanded value, and at most `max_bytes` of scalar text in all.
Invariants: the result holds only JSON types (str keys, no NaN/Inf), no two places share a
mutable object, nothing recurses deeper than `MAX_DEPTH` + a few frames, and the work done
is bounded by the body size times go-yaml's alias budget.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from asyncop.apiserver.core import errors
from asyncop.apiserver.http.bodylimits import MAX_DEPTH, YAML_TOO_DEEP

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_LONG = "tag:yaml.org,2002:"
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_INT = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)$")
_RESOLVED: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On",
                     "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                     "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_MERGE = object()
_TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
                        r"([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?"
                        r"(Z|[-+][0-9]{2}:[0-9]{2})?)?$")
_INT64 = (-(1 << 63), (1 << 64) - 1)


class YAMLBodyError(ValueError):
    """The body is not a document kube would decode; the message is kube's."""


@dataclass(slots=True)
class Node:
    kind: str  # "scalar" | "seq" | "map" | "alias"
    tag: str | None = None
    value: str = ""
    plain: bool = True
    children: list[Node] = field(default_factory=list)
    target: Node | None = None
    anchor: str = ""
    line: int = 0


def allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's share of decodes that may come from alias expansion."""
    low, high = 400_000, 4_000_000
    if decodes <= low:
        return 0.99
    if decodes >= high:
        return 0.10
    return 0.99 - 0.89 * ((decodes - low) / (high - low))


@dataclass(slots=True)
class Decoded:
    value: Any
    duplicates: list[str]
    """`line N: key "x" already set in map`, in go-yaml's words, for each repeated key."""


def load(raw: bytes, *, max_bytes: int) -> Decoded:
    """The first document of `raw` as JSON values, or a 400 Status in kube's words (a 413
    when expanding aliases would produce more than `max_bytes` of scalar text)."""
    try:
        root = compose(raw)
        return _Decoder(max_bytes).document(root)
    except YAMLBodyError as exc:
        raise errors.bad_request(f"error converting YAML to JSON: {exc}") from None
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error converting YAML to JSON: yaml: {exc}") from None


def compose(raw: bytes) -> Node | None:
    """The node tree of the first document (aliases as alias nodes), from C parser events;
    at most `MAX_DEPTH` nested collections."""
    anchors: dict[str, Node] = {}
    stack: list[Node] = []
    root: Node | None = None
    for event in yaml.parse(raw, Loader=_LOADER):
        if isinstance(event, yaml.DocumentEndEvent):
            break
        if isinstance(event, yaml.CollectionEndEvent):
            done = stack.pop()
            if not stack:
                root = done
            continue
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.AliasEvent):
            target = anchors.get(event.anchor or "")
            if target is None:
                raise YAMLBodyError(f"yaml: unknown anchor '{event.anchor}' referenced")
            node = Node("alias", target=target, anchor=event.anchor or "", line=line)
        elif isinstance(event, yaml.ScalarEvent):
            tag = event.tag if event.tag not in (None, "!") else None
            node = Node("scalar", tag=tag, value=event.value, plain=event.implicit[0],
                        line=line)
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            kind = "seq" if isinstance(event, yaml.SequenceStartEvent) else "map"
            node = Node(kind, tag=event.tag, line=line)
        else:
            continue
        if isinstance(event, yaml.NodeEvent) and event.anchor:
            node.anchor = event.anchor
            anchors[event.anchor] = node
        if stack:
            stack[-1].children.append(node)
        elif node.kind in ("scalar", "alias"):
            return node
        if node.kind in ("seq", "map"):
            if len(stack) >= MAX_DEPTH:
                raise errors.bad_request(YAML_TOO_DEEP)
            stack.append(node)
    return root


class _Decoder:
    """go-yaml's decode of a node tree into JSON values, with its alias accounting."""

    def __init__(self, max_bytes: int) -> None:
        self.decodes = 0
        self.alias_decodes = 0
        self.alias_depth = 0
        self.expanding: set[int] = set()
        self.bytes = 0
        self.max_bytes = max_bytes
        self.duplicates: list[str] = []

    def document(self, root: Node | None) -> Decoded:
        self.decodes += 1  # the document node itself
        value = None if root is None else self.decode(root, 0)
        return Decoded(value, self.duplicates)

    def _count(self) -> None:
        self.decodes += 1
        if self.alias_depth:
            self.alias_decodes += 1
        if (self.alias_decodes > 100 and self.decodes > 1000 and
                self.alias_decodes / self.decodes > allowed_alias_ratio(self.decodes)):
            raise YAMLBodyError("yaml: document contains excessive aliasing")

    def decode(self, node: Node, depth: int) -> Any:
        self._count()
        if node.kind == "alias":
            return self._alias(node, depth)
        if node.kind == "scalar":
            return self._scalar(node)
        if depth >= MAX_DEPTH:
            raise errors.bad_request(YAML_TOO_DEEP)
        if node.kind == "seq":
            return [self.decode(child, depth + 1) for child in node.children]
        out: dict[str, Any] = {}
        self._mapping(node, out, depth)
        return out

    def _alias(self, node: Node, depth: int) -> Any:
        if id(node) in self.expanding:
            raise YAMLBodyError(f"yaml: anchor '{node.anchor}' value contains itself")
        assert node.target is not None
        self.expanding.add(id(node))
        self.alias_depth += 1
        try:
            return self.decode(node.target, depth)
        finally:
            self.alias_depth -= 1
            self.expanding.discard(id(node))

    def _mapping(self, node: Node, out: dict[str, Any], depth: int) -> None:
        pairs = node.children
        for i in range(0, len(pairs) - 1, 2):
            key_node, value_node = pairs[i], pairs[i + 1]
            key = self.decode(key_node, depth + 1)
            if key is _MERGE:
                self._merge(value_node, out, depth)
                continue
            name = _key_text(key)
            if name in out:
                self.duplicates.append(f"line {key_node.line}: key {_go_quote(name)} "
                                       "already set in map")
            out[name] = self.decode(value_node, depth + 1)

    def _merge(self, node: Node, out: dict[str, Any], depth: int) -> None:
        """`<<`: a mapping, an alias of one, or a sequence of them (the first wins, as in
        go-yaml, which merges the sequence from its end)."""
        target = node.target if node.kind == "alias" else node
        if target is not None and target.kind == "map":
            merged = self.decode(node, depth)
            out.update(merged)
            return
        if node.kind == "seq":
            for item in reversed(node.children):
                item_target = item.target if item.kind == "alias" else item
                if item_target is None or item_target.kind != "map":
                    break
                out.update(self.decode(item, depth))
            else:
                return
        raise YAMLBodyError("yaml: map merge requires map or sequence of maps as the value")

    def _scalar(self, node: Node) -> Any:
        self.bytes += len(node.value)
        if self.bytes > self.max_bytes:
            raise errors.too_large(f"limit is {self.max_bytes}")
        value = _resolve(node)
        if isinstance(value, float) and not math.isfinite(value):
            text = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
            raise YAMLBodyError(f"json: unsupported value: {text}")
        return value


def _resolve(node: Node) -> Any:
    """A scalar's value as go-yaml v2 resolves it for an untyped target."""
    tag, text = node.tag, node.value
    if tag is not None and tag.startswith("!!"):
        tag = _LONG + tag[2:]
    if tag is None and not node.plain:
        return text  # quoted
    if tag == _LONG + "str":
        return text
    if tag == _LONG + "binary":
        try:
            return base64.b64decode("".join(text.split()), validate=True).decode(
                "utf-8", "replace")
        except (binascii.Error, ValueError):
            raise YAMLBodyError("yaml: !!binary value contains invalid base64 data") from None
    if tag not in (None, *(_LONG + t for t in ("bool", "int", "float", "null",
                                                "timestamp", "merge"))):
        return text  # a tag go-yaml does not resolve: the text as it is
    resolved = _implicit(text)
    if tag is None or tag == _LONG + "timestamp":
        return resolved
    kind = _kind(resolved)
    wanted = tag[len(_LONG):]
    if kind == wanted or (wanted == "float" and kind == "int"):
        return float(resolved) if wanted == "float" else resolved
    raise YAMLBodyError(f"yaml: cannot decode !!{kind} `{text}` as a !!{wanted}")


def _implicit(text: str) -> Any:
    if text in _RESOLVED:
        return _RESOLVED[text]
    if text == "<<":
        return _MERGE
    if not text or text[0] not in "+-.0123456789":
        return text
    if _TIMESTAMP.match(text):
        return text  # go-yaml keeps an implicit timestamp as its text for untyped targets
    plain = text.replace("_", "")
    if _INT.match(plain) or (plain.startswith(("0b", "-0b")) and plain.lstrip("-")[2:]):
        try:
            number = int(plain, 0) if not _octal(plain) else int(plain, 8)
        except ValueError:
            number = None
        if number is not None:
            return number if _INT64[0] <= number <= _INT64[1] else float(number)
    if _FLOAT.match(plain):
        try:
            return float(plain)
        except ValueError:
            return text
    return text


def _octal(text: str) -> bool:
    """Go's ParseInt with base 0 reads a leading 0 as octal (`017` is 15)."""
    digits = text.lstrip("+-")
    return len(digits) > 1 and digits[0] == "0" and digits[1:].isdigit()


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "str"


def _key_text(key: Any) -> str:
    """A map key as sigs.k8s.io/yaml turns it into a JSON key."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return f"{key:g}"
    if key is None:
        raise YAMLBodyError("unsupported map key of type: %!s(<nil>), key: <nil>")
    raise YAMLBodyError(f"yaml: invalid map key: {key!r}")


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
