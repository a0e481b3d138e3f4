"""`asyncop run TARGET`: a user's operator file runs as a process, like `kopf run handlers.py`.

The operator below lives in a temporary directory (nothing of it is in the asyncop package):
a `setup(mgr)` that labels every ConfigMap. The run uses the embedded API server, applies a
ConfigMap with `--apply`, and the test waits for the label through its own Client, then stops
the process with SIGINT and expects exit code 0. The CLI errors for bad targets are checked
in-process: one line, exit 2, and the user's traceback above it for an error in their code.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from asyncop.api import NotFound
from asyncop.api.kinds import CONFIGMAP
from asyncop.cli import main
from asyncop.client import Client, load_config
from asyncop.testing import eventually
from tests.e2e.proclines import Lines

OPERATOR = '''
"""A user's operator: label every ConfigMap `seen=yes`."""
from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.rbac import PolicyRule
from asyncop.runtime.reconcile import Result, reconciler


def setup(mgr):
    async def reconcile(req: Request) -> Result:
        cm = mgr.cache.get(CONFIGMAP, req.name, req.namespace)
        if cm is not None and "seen" not in (cm["metadata"].get("labels") or {}):
            patch = {"metadata": {"labels": {"seen": "yes"}}}
            await mgr.client.patch(CONFIGMAP, req.name, patch, namespace=req.namespace)
        return Result()

    rules = [PolicyRule.for_(CONFIGMAP, "patch")]
    mgr.add(Controller("labeller", reconciler(reconcile), watches=[for_(CONFIGMAP)], rbac=rules))
'''

CONFIGMAP_YAML = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: hello
data:
  greeting: hi
"""


async def test_run_a_users_operator_file(tmp_path: Path) -> None:
    (tmp_path / "labeller.py").write_text(OPERATOR)
    (tmp_path / "cm.yaml").write_text(CONFIGMAP_YAML)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncop", "run", "labeller.py", "--embedded", "--log-level",
        "warning", "--apply", "cm.yaml",
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    out = Lines(proc)
    try:
        kubeconfig = await out.wait_for("kubeconfig: ")
        hint = await out.wait_for("try: kubectl")
        assert hint == f" --kubeconfig {kubeconfig} get configmaps"
        async with Client(await load_config(kubeconfig=kubeconfig)) as client:
            async def labelled() -> bool:
                try:
                    cm = await client.get(CONFIGMAP, "hello", namespace="default")
                except NotFound:
                    return False  # --apply has not run yet
                return (cm["metadata"].get("labels") or {}).get("seen") == "yes"

            await eventually(labelled, timeout=30)
        assert await out.stop(signal.SIGINT) == 0
    finally:
        await out.kill()


def _lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("files", "argv", "expected"),
    [
        ({}, ["run", "missing.py"], "asyncop: error: missing.py: no such file"),
        ({"new.py": "from asyncop.operator import Operator\nop = Operator(name='new')\n"},
         ["run", "new.py"], "asyncop: error: new has no controllers yet; add one with "
         "`asyncop create api`"),
        ({"quiet.py": "X = 1\n"}, ["run", "quiet.py"],
         "asyncop: error: quiet has no controllers: define operator = Operator(...), a "
         "setup(mgr) function or CONTROLLERS = {name: factory}"),
        ({"op.py": "def setup(mgr):\n    pass\n"}, ["run", "op.py", "--controllers", "x"],
         "asyncop: error: --controllers picks among named controllers, and op is a setup "
         "function; declare CONTROLLERS = {name: factory} to choose"),
    ],
)
def test_bad_targets_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    files: dict[str, str], argv: list[str], expected: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert main(argv) == 2
    assert _lines(capsys.readouterr().err) == [expected]


def test_an_import_error_shows_the_users_traceback_then_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "crashy.py").write_text(textwrap.dedent("""
        CONFIG = {}
        PORT = CONFIG["port"]
    """))
    assert main(["run", "crashy.py"]) == 2
    err = _lines(capsys.readouterr().err)
    assert err[0] == "Traceback (most recent call last):"
    assert any('crashy.py", line 3, in <module>' in ln for ln in err)
    assert err[-1] == ("asyncop: error: importing crashy.py failed: KeyError: 'port' "
                       "(traceback above)")
