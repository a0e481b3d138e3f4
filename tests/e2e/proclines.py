"""Lines: the stdout of a long-running command (asyncop run, make run), read as it arrives.

`await lines.wait_for("kubeconfig: ")` returns the rest of the first line with that prefix
(bounded by a timeout); `stop(sig)` sends a signal (to the process group for a command
started in its own session) and waits for the exit. Used by the e2e tests that run the CLI
as a user would.
"""

from __future__ import annotations

import asyncio
import os

from asyncop.testing import eventually


class Lines:
    def __init__(self, proc: asyncio.subprocess.Process, *, group: bool = False) -> None:
        self.proc = proc
        self.group = group
        self.lines: list[str] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for raw in self.proc.stdout:
            self.lines.append(raw.decode().rstrip("\n"))

    def find(self, prefix: str) -> str | None:
        return next((ln[len(prefix):] for ln in self.lines if ln.startswith(prefix)), None)

    async def wait_for(self, prefix: str, *, timeout: float = 30.0) -> str:
        found: str = await eventually(lambda: self.find(prefix), timeout=timeout,
                                      message=f"a line starting {prefix!r} ({self.lines[-5:]})")
        return found

    async def stop(self, sig: int, *, timeout: float = 20.0) -> int:
        """Send `sig` (if still running) and wait for the exit; the exit code."""
        if self.proc.returncode is None:
            if self.group:
                os.killpg(self.proc.pid, sig)
            else:
                self.proc.send_signal(sig)
        rc = await asyncio.wait_for(self.proc.wait(), timeout)
        await self.reader
        return rc

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()
