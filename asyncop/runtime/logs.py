"""Logging: structlog configured once, by the program (the CLI), never on import.

`configure_logging(format=..., level=...)` sets up structlog so that every line carries the
context variables bound around it — the Controller binds `controller`, `namespace`, `name`
and `reconcile_id` around each reconcile, so every line logged inside one carries them.
Console rendering on a TTY, one JSON object per line otherwise (or when asked). Invariant:
the only global state touched is structlog's own configuration; messages are constant
strings and variables go in key fields.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Literal, TextIO

import orjson
import structlog
import structlog.tracebacks

LogFormat = Literal["console", "json"]

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}


def parse_level(level: str | int) -> int:
    """A level name (any case) or number; raises ValueError naming the valid names."""
    if isinstance(level, int):
        return level
    try:
        return _LEVELS[level.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown log level {level!r} (use one of: debug, info, warning, error)"
        ) from None


class _CurrentStderr:
    """Writes to whatever `sys.stderr` is at the time of the write (it may be swapped)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def _dumps(obj: Any, **_: Any) -> str:
    return orjson.dumps(obj, default=str).decode()


def configure_logging(
    *,
    format: LogFormat | None = None,
    level: str | int = "info",
    stream: TextIO | None = None,
    cache_loggers: bool = False,
) -> None:
    """Configure structlog; `format=None` picks console on a TTY and JSON otherwise.

    `cache_loggers=True` (what `asyncop run` does) lets each module's logger build its bound
    logger once instead of on every call; a process that configures logging again later
    (tests) must leave it off, or loggers used before keep the old configuration."""
    out: Any = stream if stream is not None else _CurrentStderr()
    if format is None:
        format = "console" if out.isatty() else "json"
    if format not in ("console", "json"):
        raise ValueError(f"unknown log format {format!r} (use console or json)")
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    if format == "json":
        processors += [
            # Tracebacks as dicts, without local variables: rendering locals cost ~0.5 s of
            # CPU per failed reconcile, which a retry storm must not pay.
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            ),
            structlog.processors.JSONRenderer(serializer=_dumps),
        ]
    else:
        processors.append(
            structlog.dev.ConsoleRenderer(
                colors=out.isatty(), exception_formatter=structlog.dev.plain_traceback
            )
        )
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(parse_level(level)),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=cache_loggers,
    )
