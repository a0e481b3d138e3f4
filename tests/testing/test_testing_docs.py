"""docs/testing.md's examples, run as written in the README tutorial's project.

The project is scaffolded in-process (`asyncop init`'s files, `create api --kind Memcached`'s
files and registration: the scaffold's own functions, without the CRD generation, which
`run_operator` does by itself), then given the tutorial's model and controller from README.md.
Every Python block of docs/testing.md starts with `# file: tests/<name>.py` and is written
there; pytest runs those files in a subprocess, from the project's directory and with its
pyproject.toml, as `make test` would; every test they define must pass.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from asyncop.project.scaffold import (
    ApiRequest,
    InitRequest,
    api_files,
    init_files,
    register,
    write_kept,
    write_new,
)
from tests.e2e.tutorialkit import ROOT, steps

DOCUMENT = ROOT / "docs" / "testing.md"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def examples() -> list[tuple[str, str]]:
    """(path, text) of every Python block of docs/testing.md; each names its file."""
    out = []
    for m in _BLOCK.finditer(DOCUMENT.read_text(encoding="utf-8")):
        if m.group(1) != "python":
            continue
        first, _, _ = m.group(2).partition("\n")
        assert first.startswith("# file: tests/"), f"a Python block without its file: {first}"
        out.append((first.removeprefix("# file: ").strip(), m.group(2)))
    return out


def tutorial_project(root: Path) -> None:
    """The README tutorial's memcached-operator, as its steps leave it (but the CRD files)."""
    write_new(init_files(InitRequest(name="memcached-operator", domain="example.com",
                                     directory=root)))
    request = ApiRequest(root=root, package="memcached_operator", domain="example.com",
                         group="cache", version="v1alpha1", kind="Memcached")
    write_kept(api_files(request))
    register(root / "memcached_operator" / "operator.py", request)
    for lang, body in steps(ROOT / "README.md"):
        first = body.partition("\n")[0]
        if lang == "python" and first.startswith("# file: memcached_operator/"):
            (root / first.removeprefix("# file: ").strip()).write_text(body, encoding="utf-8")


async def test_every_example_of_docs_testing_passes(tmp_path: Path) -> None:
    files = examples()
    assert len(files) >= 4 and len({path for path, _ in files}) == len(files)
    tutorial_project(tmp_path)
    for path, text in files:
        (tmp_path / path).write_text(text, encoding="utf-8")
    defined = sum(len(re.findall(r"^(?:async )?def test_", text, re.M)) for _, text in files)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *(p for p, _ in files),
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    out = (await asyncio.wait_for(proc.communicate(), 100))[0].decode()
    assert proc.returncode == 0, out[-4000:]
    assert re.search(rf"\b{defined} passed\b", out) and "failed" not in out, out[-4000:]
