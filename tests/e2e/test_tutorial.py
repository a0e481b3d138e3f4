"""The README's tutorial, followed literally in a fresh directory.

The steps are read from README.md between the `tutorial:start`/`tutorial:end` markers:
`sh` blocks are run line by line with bash (asyncop from this checkout first on PATH),
`python`/`yaml` blocks that start with `# file: <path>` are written to that path. Three kinds
of line are run the way a person at a terminal would experience them, not as a batch job:

- `make run` runs until Ctrl-C: it is started in its own process group, the sample is
  watched until its status lists 3 pods, then the group gets SIGINT;
- `asyncop apiserver ... &` starts a stand-in cluster in the background;
- `helm install NAME CHART --kubeconfig K` is done with helm-python-sdk (the real Helm engine;
  there is no helm binary here) in a subprocess, against that stand-in.

For speed, the project's `.venv` is created before the first `make` with a `.pth` file that
puts this checkout's installed dependencies on its path (so pip downloads nothing), and
`ASYNCOP=` tells the project's Makefile that asyncop is already there. The Makefile itself,
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
from pathlib import Path
from typing import Any

import pytest

from asyncop.api import Kind, NotFound
from asyncop.api.kinds import CRD, DEPLOYMENT
from asyncop.client import Client, load_config
from asyncop.testing import eventually
from tests.e2e.proclines import Lines

pytest.importorskip("helm_python")

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
MEMCACHED = Kind("cache.example.com", "v1alpha1", "memcacheds", "Memcached")
CLUSTERROLE = Kind("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                   namespaced=False)

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


def tutorial() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("<!-- tutorial:start -->")
    end = text.index("<!-- tutorial:end -->")
    return [(m.group(1), m.group(2))
            for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text[start:end], re.M | re.S)]


class Shell:
    """Runs the tutorial's lines in a working directory that `cd` moves."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
                    "ASYNCOP": "", "HOME": str(cwd)}
        self.background: list[asyncio.subprocess.Process] = []
        self.kubeconfig: str | None = None

    async def run(self, line: str) -> None:
        for part in (p.strip() for p in line.split("&&")):
            if part.startswith("cd "):
                self.cwd = self.cwd / part.removeprefix("cd ").strip()
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
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", "make run", cwd=self.cwd, env=self.env, start_new_session=True,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out = Lines(proc, group=True)
        try:
            kubeconfig = await out.wait_for("kubeconfig: ", timeout=120)
            async with Client(await load_config(kubeconfig=kubeconfig)) as client:
                async def three_nodes() -> bool:
                    try:
                        obj = await client.get(MEMCACHED, "memcached-sample", namespace="default")
                    except NotFound:
                        return False
                    return len((obj.get("status") or {}).get("nodes") or []) == 3

                await eventually(three_nodes, timeout=60, message="memcached-sample lists 3 pods")
                dep = await client.get(DEPLOYMENT, "memcached-sample", namespace="default")
                assert dep["spec"]["replicas"] == 3
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
        self.kubeconfig = shlex.split(command)[shlex.split(command).index("--kubeconfig-out") + 1]

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


async def test_the_readme_tutorial_yields_a_working_operator(tmp_path: Path) -> None:
    steps = tutorial()
    assert [lang for lang, _ in steps if lang == "sh"], "no shell steps found"
    shell = Shell(tmp_path)
    try:
        for lang, body in steps:
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
        # the chart went into the stand-in cluster: CRD, Deployment, least-privilege RBAC
        assert shell.kubeconfig is not None
        async with Client(await load_config(kubeconfig=shell.kubeconfig)) as client:
            await client.get(CRD, "memcacheds.cache.example.com")
            dep = await client.get(DEPLOYMENT, "memcached-operator", namespace="default")
            assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == (
                "memcached-operator:0.1.0")
            role = await client.get(CLUSTERROLE, "memcached-operator")
            rules = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"]
                     for r in rule["resources"] for v in rule["verbs"]}
            assert ("apps", "deployments", "create") in rules
            assert ("cache.example.com", "memcacheds/status", "update") in rules
            assert ("apps", "deployments", "delete") not in rules  # only what it declares
    finally:
        await shell.close()


async def test_a_project_fresh_from_init_passes_its_own_test_and_lint(tmp_path: Path) -> None:
    shell = Shell(tmp_path)
    await shell.run("asyncop init --name empty-operator --domain example.org --dir fresh")
    await shell.run("cd fresh && make test lint")
    out = await shell.check(".venv/bin/python -m asyncop generate --check", timeout=60)
    assert out.strip() == "generated files are up to date (1 file)"
