"""Memories of inputs found valid: how repeated parts of built-in objects cost one lookup.

Every replica of a workload repeats the same probes, resources, ports, volumes and
tolerations, and an operator writes the same few shapes over and over. The rules on those
parts are pure functions of the part (a decoded JSON value) and a little context (a grace
period, a probe kind, the volumes a container may mount); the path they take only names
where a cause is reported. `remembers_valid` wraps such a validator: the JSON text of an
input it returned no cause for (with its context) goes into a bounded set, and the same
text is answered "valid" again without validating. An input with causes is validated
every time, so every message and path is the rule's own; only "no causes" is remembered.
`KnownValid` is that set for callers that split their rules themselves (`podspec`: a spec
outside its containers; `containers`: a container outside its env, lists of env names);
`KnownCounts` remembers what the decoding walk answered for a part it left unchanged
(`fastwalk`), `KnownAnswers` what any pure function answered (`pods`: the QoS class of a
pod's resources). A whole pod spec is remembered the same way by its skeleton
(`specmemo`: env reduced to what the rules read), with a larger bound of its own.

Invariants: the key is the exact JSON text orjson writes for the value (dict order
included, `1` and `1.0` and `true` distinct), which identifies a decoded JSON value —
inputs come from decoded objects, whose typed fields hold JSON types only (decoding
refuses a tuple, a UUID or a date where kube has a list or a string); subclasses of the
JSON types, dates and dataclasses are not written at all, and orjson writes NaN and the
infinities as `null`, so a text containing `null` is never remembered (decoding drops
`null` fields, so valid inputs rarely have one); texts longer than `MAX_KEY_BYTES` are
not kept, and a memory is emptied when it holds `MAX_ENTRIES`, so each stays under 2 MB
(about ten exist; the parts they hold are mostly a few hundred bytes). A remembered rule
must not mutate its input, and its answer must depend on nothing but the value and the
context given with it (not on the server's version: none of them does).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

import orjson

from asyncop.api import StatusCause

__all__ = ["EXACT", "KnownAnswers", "KnownCounts", "KnownValid", "memory_key",
           "remembers_valid", "text_key"]

MAX_ENTRIES = 1024
MAX_KEY_BYTES = 2048

F = TypeVar("F", bound=Callable[..., list[StatusCause]])
V = TypeVar("V")


def memory_key(value: Any, context: Hashable = ()) -> Hashable | None:
    """The key an input is remembered by (None: this input is never remembered)."""
    try:
        text = _dumps(value, option=EXACT)
    except TypeError:  # (orjson.JSONEncodeError is one)
        return None
    return text_key(text, context)


def text_key(text: bytes, context: Hashable = ()) -> Hashable | None:
    """`memory_key` of the value whose text (`_dumps(value, option=EXACT)`) is `text`."""
    if len(text) > MAX_KEY_BYTES or b"null" in text:
        return None
    return (text, context)


_dumps = orjson.dumps
EXACT = (orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME
          | orjson.OPT_PASSTHROUGH_DATACLASS)  # no `default`: these raise instead


class KnownValid(set[Hashable]):
    """The keys of inputs a validator found valid (`key in known` is a set lookup)."""

    def remember(self, key: Hashable | None) -> None:
        if key is None:
            return
        if len(self) >= MAX_ENTRIES:
            self.clear()
        self.add(key)


class KnownAnswers(dict[Hashable, V]):
    """Keys of inputs with what a pure function answered for them, bounded as
    `KnownValid`."""

    def remember(self, key: Hashable | None, answer: V) -> None:
        if key is None:
            return
        if len(self) >= MAX_ENTRIES:
            self.clear()
        self[key] = answer

    def answer(self, key: Hashable | None, compute: Callable[[], V]) -> V:
        """The answer remembered for `key`, or `compute()`'s, remembered (a None key:
        computed every time)."""
        if key is not None:
            known = self.get(key)
            if known is not None:
                return known
        value = compute()
        self.remember(key, value)
        return value


class KnownCounts(KnownAnswers[int]):
    """Keys of inputs a decoding walk accepted unchanged, with what it answered (the
    number of object keys it walked)."""


def remembers_valid(fn: F) -> F:
    """Wrap `fn(value, path, *context)` (context positional and hashable) so an input it
    found valid before is answered `[]` at the cost of one JSON encoding."""
    known = KnownValid()

    @functools.wraps(fn)
    def wrapper(value: Any, path: str, *context: Hashable) -> list[StatusCause]:
        try:  # `memory_key`'s encoding, inline (this wrapper is hot); its checks on a miss
            key: Hashable | None = (_dumps(value, option=EXACT), context)
        except TypeError:
            key = None
        if key in known:
            return []
        out = fn(value, path, *context)
        if not out and key is not None and memory_key(value, context) == key:
            known.remember(key)
        return out

    return cast(F, wrapper)
