"""The event loop a command runs on: `auto` (uvloop when installed), `asyncio` or `uvloop`.

uvloop is an optional extra (`pip install 'asyncop[fast]'`): a drop-in event loop written in
Cython over libuv. Measured with bench/operator.py it cuts the operator's CPU per object
(the loop, the transports and the socket calls are where an I/O-bound operator spends much of
its time); nothing in asyncop depends on it, and every test runs on the standard loop.
`auto` is uvicorn's rule: uvloop if it imports, the standard loop otherwise.

Invariant: an explicit `uvloop` that is not installed is a one-line UserError, never a silent
fallback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from asyncop.commands.errors import UserError

EventLoopName = Literal["auto", "asyncio", "uvloop"]
CHOICES: tuple[str, ...] = ("auto", "asyncio", "uvloop")
T = TypeVar("T")


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory for `name` (None: the standard loop)."""
    if name == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if name == "uvloop":
            raise UserError("--event-loop uvloop: uvloop is not installed "
                            "(pip install 'asyncop[fast]')") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T], *, event_loop: str = "auto") -> T:
    """`asyncio.run(main)` on the chosen loop."""
    try:
        factory = loop_factory(event_loop)
    except BaseException:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def current() -> str:
    """The running loop's kind, for the start-up log line: `uvloop` or `asyncio`."""
    loop = asyncio.get_running_loop()
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
