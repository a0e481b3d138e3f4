"""Splitting a watch response body into JSON events without a line-length cap.

The API server streams one JSON object per line. aiohttp's `readline()` caps a line at
2 x read_bufsize (4 MiB with kubernetes_asyncio's session), so lines are split here from raw
chunks instead. Invariants: a line spanning many chunks is joined once (no quadratic
re-concatenation); blank lines are skipped; a truncated last line at EOF is dropped (the
caller resumes from the last resourceVersion it saw, so nothing is lost).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Literal, TypedDict

import orjson

_NONBLANK = re.compile(rb"\S")

EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]


class WatchEvent(TypedDict):
    type: EventType
    object: dict[str, Any]


async def split_lines(chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes | memoryview]:
    """Yield complete non-blank lines (without the newline) from a stream of byte chunks.

    A line inside one chunk is a memoryview of it (no copy: a streaming list sends tens of
    thousands of lines, and a copy of each would churn the allocator's large blocks); a line
    spanning chunks is joined into bytes once."""
    pending: list[bytes] = []
    nonblank = _NONBLANK.search
    async for chunk in chunks:
        start = 0
        nl = chunk.find(b"\n")
        view = memoryview(chunk) if nl >= 0 and not pending else None
        while nl >= 0:
            if pending:
                pending.append(chunk[start:nl])
                piece = b"".join(pending)
                pending.clear()
                if piece.strip():
                    yield piece
            elif nonblank(chunk, start, nl):
                if view is None:
                    view = memoryview(chunk)
                yield view[start:nl]
            start = nl + 1
            nl = chunk.find(b"\n", start)
        if start < len(chunk):
            pending.append(chunk[start:])
    if pending:
        tail = b"".join(pending)
        if tail.strip():
            try:
                orjson.loads(tail)
            except orjson.JSONDecodeError:
                return
            yield tail


async def parse_events(chunks: AsyncIterable[bytes]) -> AsyncIterator[WatchEvent]:
    """Parse each line as a watch event; a bare Status line becomes an ERROR event."""
    async for line in split_lines(chunks):
        event = orjson.loads(line)
        if isinstance(event, dict) and event.get("kind") == "Status" and "type" not in event:
            event = {"type": "ERROR", "object": event}
        yield event
