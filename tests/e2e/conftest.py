"""Fixtures for driving the real kubectl against the embedded API server.

`served(minor)` starts an `ApiServer` reporting version 1.<minor> (the kubectl on PATH is a
dispatcher that runs `kubectl.1.<minor>`), writes its kubeconfig and yields a `Kubectl`
runner with a fresh `--cache-dir`. Every kubectl call is an asyncio subprocess (the server
runs on the same event loop), bounded by `--request-timeout` and a real-time limit.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from asyncop.testing import eventually

KUBECTL = shutil.which("kubectl")
requires_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")


@dataclass(frozen=True, slots=True)
class Completed:
    args: tuple[str, ...]
    rc: int
    out: str
    err: str

    def check(self) -> Completed:
        assert self.rc == 0, f"kubectl {' '.join(self.args)} failed ({self.rc}): {self.err}"
        return self


class Background:
    """A long-running kubectl (e.g. `get -w`) whose output is collected as it arrives."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.out = ""
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(4096):
            self.out += chunk.decode()

    async def wait_for_text(self, text: str, *, timeout: float = 15.0) -> None:
        await eventually(lambda: text in self.out, timeout=timeout,
                         message=f"{text!r} in kubectl output")

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
        await self._reader


class Kubectl:
    def __init__(self, kubeconfig: Path, cache_dir: Path, workdir: Path, minor: str) -> None:
        self.minor = minor
        self.kubeconfig = kubeconfig
        self.cache_dir = cache_dir
        self.workdir = workdir

    def _argv(self, args: tuple[str, ...]) -> list[str]:
        assert KUBECTL is not None
        return [KUBECTL, f"--kubeconfig={self.kubeconfig}", f"--cache-dir={self.cache_dir}",
                "--request-timeout=20s", *args]

    def write(self, name: str, text: str) -> str:
        path = self.workdir / name
        path.write_text(text)
        return str(path)

    async def __call__(self, *args: str, stdin: str | None = None,
                       timeout: float = 30.0) -> Completed:
        proc = await asyncio.create_subprocess_exec(
            *self._argv(args),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(stdin.encode() if stdin is not None else None), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise AssertionError(f"kubectl {' '.join(args)} timed out") from None
        return Completed(args, proc.returncode or 0, out.decode(), err.decode())

    async def ok(self, *args: str, stdin: str | None = None) -> str:
        return (await self(*args, stdin=stdin)).check().out

    async def background(self, *args: str) -> Background:
        proc = await asyncio.create_subprocess_exec(
            *self._argv(args), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        return Background(proc)


#: kubectl minors to run against (the server reports the same minor); the full matrix is
#: ASYNCOP_E2E_KUBECTL_MINORS=27,28,29,30,31,32,33.
MINORS = [m.strip() for m in os.environ.get("ASYNCOP_E2E_KUBECTL_MINORS", "33,27").split(",")]


@pytest.fixture(params=MINORS, ids=[f"kubectl-1.{m}" for m in MINORS])
async def kubectl(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Kubectl]:
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH")
    from asyncop.apiserver import ApiServer

    server = ApiServer(version=("1", request.param))
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        yield Kubectl(Path(kubeconfig), tmp_path / "cache", tmp_path, request.param)
    finally:
        await server.stop()
