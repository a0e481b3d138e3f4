"""Shard selectors (Kubernetes KEP-5866, server-side sharded list and watch) and the hash.

A shard selector names parts of a 64-bit hash space:

    shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
    shardRange(object.metadata.uid, '0x0', '0x4000000000000000') || shardRange(...)

An object matches when the 64-bit FNV-1a hash of the named field (`object.metadata.uid` or
`object.metadata.namespace`, as UTF-8 bytes) lies in one of the ranges, `[start, end)`; `end`
may be 2^64 (`0x10000000000000000`). All ranges of one selector name the same field. A
server that honours the selector echoes it in the list's `metadata.shardInfo.selector`; one
that does not (before Kubernetes 1.36, or with the ShardedListAndWatch gate off) ignores the
parameter, and the client filters with the same hash.

`ShardSpace(shards)` splits the hash space into `shards` equal virtual shards (the unit of
ownership for asyncop's sharded controllers) and builds the selector of a set of them, with
adjacent shards merged into one range.

Invariants: pure functions, no I/O; `fnv1a64` is the standard 64-bit FNV-1a; `parse` accepts
what `format` writes and rejects anything else with a ValueError naming the problem.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

FIELDS = ("object.metadata.uid", "object.metadata.namespace")
SPACE = 1 << 64
_OFFSET, _PRIME, _MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1
_RANGE = re.compile(
    r"\s*shardRange\(\s*([A-Za-z.]+)\s*,\s*'(0[xX][0-9a-fA-F]+)'\s*,\s*'(0[xX][0-9a-fA-F]+)'"
    r"\s*\)\s*")


def fnv1a64(data: bytes) -> int:
    h = _OFFSET
    for byte in data:
        h = ((h ^ byte) * _PRIME) & _MASK
    return h


def field_hash(obj: Mapping[str, Any], field: str) -> int:
    meta = obj.get("metadata") or {}
    value = meta.get("uid" if field.endswith(".uid") else "namespace") or ""
    return fnv1a64(str(value).encode())


@dataclass(frozen=True, slots=True)
class ShardSelector:
    field: str
    ranges: tuple[tuple[int, int], ...]

    @classmethod
    def parse(cls, text: str) -> ShardSelector:
        parts = text.split("||")
        field = ""
        ranges: list[tuple[int, int]] = []
        for part in parts:
            m = _RANGE.fullmatch(part)
            if m is None:
                raise ValueError(f"{part.strip()!r} is not shardRange(<field>, '<hex start>', "
                                 "'<hex end>')")
            name, start, end = m.group(1), int(m.group(2), 16), int(m.group(3), 16)
            if name not in FIELDS:
                raise ValueError(f"field {name!r} is not supported (supported: "
                                 f"{', '.join(FIELDS)})")
            if field and name != field:
                raise ValueError("all shardRange terms must use the same field")
            if not start < end <= SPACE:
                raise ValueError(f"range [{m.group(2)}, {m.group(3)}) is empty or beyond 2^64")
            field = name
            ranges.append((start, end))
        return cls(field, tuple(ranges))

    def format(self) -> str:
        return " || ".join(f"shardRange({self.field}, '{_hex(s)}', '{_hex(e)}')"
                           for s, e in self.ranges)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        h = field_hash(obj, self.field)
        return any(start <= h < end for start, end in self.ranges)


def _hex(value: int) -> str:
    return "0x10000000000000000" if value == SPACE else f"0x{value:016x}"


@dataclass(frozen=True, slots=True)
class ShardSpace:
    """`shards` equal virtual shards of the 64-bit hash space of `field`."""

    shards: int
    field: str = "object.metadata.uid"

    def __post_init__(self) -> None:
        if not 1 <= self.shards <= 4096:
            raise ValueError("shards must be between 1 and 4096")

    def bounds(self, shard: int) -> tuple[int, int]:
        return (shard * SPACE // self.shards, (shard + 1) * SPACE // self.shards)

    def shard_of_hash(self, h: int) -> int:
        return h * self.shards >> 64

    def shard_of_uid(self, uid: str) -> int:
        return self.shard_of_hash(fnv1a64(uid.encode()))

    def selector(self, owned: Iterable[int]) -> ShardSelector | None:
        """The selector of the `owned` shards (adjacent ones merged); None for none."""
        ranges: list[tuple[int, int]] = []
        for shard in sorted(set(owned)):
            start, end = self.bounds(shard)
            if ranges and ranges[-1][1] == start:
                ranges[-1] = (ranges[-1][0], end)
            else:
                ranges.append((start, end))
        return ShardSelector(self.field, tuple(ranges)) if ranges else None
