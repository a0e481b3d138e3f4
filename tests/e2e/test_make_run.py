"""`make run` headless: `asyncop run --embedded --install-crds --apply samples/` as a process.

Reads the kubeconfig path the command prints, watches `example-at` reach DONE through a
Client of our own, then sends SIGINT (Ctrl-C) and expects a clean exit (code 0) within 5
seconds.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from asyncop.api import NotFound
from asyncop.client import Client, load_config
from asyncop.controllers.kinds import AT
from asyncop.testing import eventually
from tests.e2e.proclines import Lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def start_run() -> AsyncIterator[object]:
    runs: list[Lines] = []

    async def start(*extra: str) -> Lines:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "asyncop", "run", "--embedded", "--install-crds",
            "--log-level", "warning", *extra,
            cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        run = Lines(proc)
        runs.append(run)
        return run

    yield start
    for run in runs:
        await run.kill()


async def test_make_run_brings_example_at_to_done(start_run: object, tmp_path: Path) -> None:
    run: Lines = await start_run("--apply", "samples/")  # type: ignore[operator]
    kubeconfig = await run.wait_for("kubeconfig: ")
    assert any(ln.startswith("try: kubectl --kubeconfig ") for ln in run.lines)
    assert _exists(kubeconfig)
    async with Client(await load_config(kubeconfig=kubeconfig)) as client:

        async def phase() -> str | None:
            try:
                at = await client.get(AT, "example-at", namespace="default")
            except NotFound:
                return None
            return (at.get("status") or {}).get("phase")

        assert await eventually(lambda: _is(phase, "DONE"), timeout=30)
        later = await client.get(AT, "example-at-later", namespace="default")
        assert later["status"]["phase"] == "PENDING"
    hint = next(ln for ln in run.lines if ln.startswith("try: kubectl "))
    if shutil.which("kubectl"):  # the printed hint works as printed
        out = await _kubectl(hint.removeprefix("try: kubectl ").split(), tmp_path)
        assert "example-at " in out and "DONE" in out and "example-foo" in out
    assert await run.stop(signal.SIGINT, timeout=5) == 0  # Ctrl-C, a clean exit within 5 s
    assert not _exists(kubeconfig)  # the temporary kubeconfig is cleaned up


async def _kubectl(args: list[str], tmp_path: Path) -> str:
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--cache-dir", str(tmp_path / "kcache"), "--request-timeout", "20s", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def _exists(path: str) -> bool:
    return Path(path).exists()


async def _is(get: object, want: str) -> bool:
    return await get() == want  # type: ignore[operator,no-any-return]
