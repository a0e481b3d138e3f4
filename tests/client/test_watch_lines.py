"""The watch line splitter: no line-length cap, lines split anywhere across chunks."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson

from asyncop.client.watch import parse_events, split_lines


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for p in parts:
        yield p


async def collect(parts: list[bytes]) -> list[bytes]:
    return [line async for line in split_lines(chunks(*parts))]


async def test_lines_split_across_and_within_chunks() -> None:
    assert await collect([b'{"a":1}\n{"b"', b":2}\n\n", b'{"c":3}\n']) == [
        b'{"a":1}', b'{"b":2}', b'{"c":3}'
    ]
    assert await collect([b"x", b"y", b"z\n", b"\n", b"w\n"]) == [b"xyz", b"w"]


async def test_a_line_larger_than_aiohttps_cap_is_joined() -> None:
    big = orjson.dumps({"type": "ADDED", "object": {"data": {"k": "v" * (5 * 2**20)}}})
    step = 65536
    parts = [big[i : i + step] for i in range(0, len(big), step)] + [b"\n"]
    lines = await collect(parts)
    assert len(lines) == 1 and lines[0] == big


async def test_complete_tail_without_newline_kept_truncated_tail_dropped() -> None:
    assert await collect([b'{"a":1}\n{"b":2}']) == [b'{"a":1}', b'{"b":2}']
    assert await collect([b'{"a":1}\n{"b":']) == [b'{"a":1}']


async def test_bare_status_line_becomes_error_event() -> None:
    status = {"kind": "Status", "apiVersion": "v1", "code": 410, "reason": "Expired"}
    events = [e async for e in parse_events(chunks(orjson.dumps(status) + b"\n"))]
    assert events == [{"type": "ERROR", "object": status}]
