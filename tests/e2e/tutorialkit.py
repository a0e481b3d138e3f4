"""Following a tutorial document literally, in a fresh directory, as a reader would.

`steps(document)` reads the fenced blocks between `<!-- tutorial:start -->` and
`<!-- tutorial:end -->`; `follow(shell, steps)` does what they say:

- a `python` or `yaml` block whose first line is `# file: <path>` is written to that path,
  which the scaffold must have made (tutorials edit what `asyncop init`/`create api` wrote);
- an `sh` block is run line by line (`Shell.run`), each line's output kept;
- a `text` block is output the reader is shown: each of its lines must appear in the output
  of the last command run (a number of seconds, such as an AGE column, may differ).
  Blocks without a language are illustrations and are not checked.

`Shell` runs a line with bash in a working directory that `cd` moves (and `export NAME=value`
sets for the lines after), asyncop from this checkout first on PATH. Lines a person at a
terminal experiences differently from a batch job are run that way:

- `make run` runs until Ctrl-C: it is started in its own process group, `on_make_run(
  kubeconfig)` (set by the test) checks the running operator, then the group gets SIGINT;
- `asyncop apiserver ... &` starts a stand-in cluster in the background (stopped by
  `close()`);
- `helm install NAME CHART --kubeconfig K` is done with helm-python-sdk (the real Helm
  engine; there is no helm binary here) in a subprocess, against that stand-in.

For speed, before the first `make` the project's `.venv` is created with a `.pth` file that
puts this checkout's installed dependencies on its path (so pip downloads nothing), and
`ASYNCOP=` makes the project's Makefile ask pip for the asyncop version pyproject.toml names,
which is there already (a test may delete it from `env` to use the Makefile's own, this
checkout linked by asyncop/project/editable.py). The Makefile itself,
the project's tests and its lint run unmodified.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import sys
import sysconfig
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.e2e.proclines import Lines

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent

HELM = """
import json, sys
import helm_python
req = json.loads(sys.stdin.read())
cfg = helm_python.Config(kubeconfig_path=req["kubeconfig"], namespace="default")
try:
    cfg.install(req["chart"], req["name"], {}, namespace="default")
except helm_python.HelmError as exc:
    print(json.dumps({"error": type(exc).__name__ + ": " + str(exc)}))
else:
    print(json.dumps({"ok": True}))
"""

_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
_SECONDS = re.compile(r"^\d+s$")


def steps(document: Path) -> list[tuple[str, str]]:
    """(language, body) of each fenced block between the tutorial markers."""
    text = document.read_text(encoding="utf-8")
    start = text.index("<!-- tutorial:start -->")
    end = text.index("<!-- tutorial:end -->")
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(text[start:end])]


def shown_in(expected: str, output: str) -> bool:
    """Each non-blank line of `expected` is a line of `output` (whitespace runs are equal;
    a token such as `12s` matches any number of seconds, minutes or hours)."""
    lines = [" ".join(ln.split()) for ln in output.splitlines()]
    for want in (ln for ln in expected.splitlines() if ln.strip()):
        pattern = r"\s+".join(r"\d+[smhd]" if _SECONDS.match(tok) else re.escape(tok)
                              for tok in want.split())
        if not any(re.fullmatch(pattern, got) for got in lines):
            return False
    return True


class Shell:
    """Runs a tutorial's lines in a working directory that `cd` moves."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
                    "ASYNCOP": "", "HOME": str(cwd)}
        self.background: list[asyncio.subprocess.Process] = []
        self.kubeconfig: str | None = None
        self.outputs: list[tuple[str, str]] = []
        """(command, output) of every line run, in order."""
        self.on_make_run: Callable[[str], Awaitable[None]] | None = None
        """What to check while `make run` runs (given the kubeconfig it printed)."""

    async def run(self, line: str) -> None:
        for part in (p.strip() for p in line.split("&&")):
            if part.startswith("cd "):
                self.cwd = self.cwd / part.removeprefix("cd ").strip()
            elif part.startswith("export ") and "=" in part:
                name, _, value = part.removeprefix("export ").partition("=")
                self.env[name.strip()] = os.path.expandvars(value.strip())
            elif part.startswith("make"):
                self.venv()
                if part == "make run":
                    await self.make_run()
                else:
                    await self.check(part, timeout=300)
            elif part.startswith("asyncop apiserver") and part.endswith("&"):
                await self.apiserver(part.removesuffix("&").strip())
            elif part.startswith("helm install"):
                await self.helm_install(shlex.split(part))
            else:
                await self.check(part, timeout=60)

    async def check(self, command: str, *, timeout: float) -> str:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=self.cwd, env=self.env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        assert proc.returncode == 0, f"{command} failed ({proc.returncode}):\n{out.decode()}"
        self.outputs.append((command, out.decode()))
        return out.decode()

    def venv(self) -> None:
        venv = self.cwd / ".venv"
        if venv.exists():
            return
        import venv as venv_module

        venv_module.create(venv, with_pip=False)
        site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
            "site-packages"
        ours = sysconfig.get_paths()["purelib"]
        # pip, and every dependency, come from this checkout's venv (the Makefile runs
        # `python -m pip`); mypy reads the plain paths, the runtime the `import` line
        (site / "_tutorial_deps.pth").write_text(
            f"{ROOT}\n{ours}\nimport site; site.addsitedir({ours!r})\n")

    async def make_run(self) -> None:
        assert self.on_make_run is not None, "this tutorial's test does not expect `make run`"
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", "make run", cwd=self.cwd, env=self.env, start_new_session=True,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out = Lines(proc, group=True)
        try:
            kubeconfig = await out.wait_for("kubeconfig: ", timeout=120)
            await self.on_make_run(kubeconfig)
        finally:
            await out.stop(signal.SIGINT)  # Ctrl-C, to the whole process group
        assert any("manager started" in ln for ln in out.lines), out.lines[-20:]

    async def apiserver(self, command: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", f"exec {command}", cwd=self.cwd, env=self.env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        self.background.append(proc)
        assert proc.stdout is not None
        first = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert first.decode().startswith("asyncop apiserver listening on "), first
        argv = shlex.split(command)
        self.kubeconfig = argv[argv.index("--kubeconfig-out") + 1]

    async def helm_install(self, argv: list[str]) -> None:
        name, chart = argv[2], argv[3]
        kubeconfig = argv[argv.index("--kubeconfig") + 1]
        request = {"kubeconfig": kubeconfig, "chart": str(self.cwd / chart), "name": name}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HELM, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={"HOME": str(self.cwd), "PATH": "/usr/bin:/bin"})
        out, err = await asyncio.wait_for(proc.communicate(json.dumps(request).encode()), 120)
        result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
        assert result.get("ok"), (result, err.decode()[-2000:])

    async def close(self) -> None:
        for proc in self.background:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
                await asyncio.wait_for(proc.wait(), 20)


async def follow(shell: Shell, blocks: list[tuple[str, str]]) -> None:
    """Do what the tutorial's blocks say (see the module docstring)."""
    assert [lang for lang, _ in blocks if lang == "sh"], "no shell steps found"
    for lang, body in blocks:
        if lang in ("python", "yaml"):
            first = body.splitlines()[0]
            assert first.startswith("# file: "), first
            path = shell.cwd / first.removeprefix("# file: ").strip()
            assert path.exists(), f"the tutorial edits {path}, which the scaffold made"
            path.write_text(body, encoding="utf-8")
        elif lang == "sh":
            for line in body.splitlines():
                if line.strip():
                    await shell.run(line)
        elif lang == "text":
            assert shell.outputs, f"output shown before any command ran:\n{body}"
            command, output = shell.outputs[-1]
            assert shown_in(body, output), (
                f"the document shows, after `{command}`:\n{body}\nbut it printed:\n{output}")
