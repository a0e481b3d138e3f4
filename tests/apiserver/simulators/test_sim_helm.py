"""Helm v4 (helm-python-sdk) on the simulated cluster: a pre-install Job hook, then a wait.

Without a Job controller Helm's default install fails on the hook (docs/apiserver.md, "What
Helm sends"); with the simulators the hook Job completes, Helm deletes it (hook-succeeded)
and the watcher wait sees the Deployment Current. Helm runs in a subprocess so the server
keeps serving on this loop.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from asyncop.apiserver import ApiServer

pytest.importorskip("helm_python")

CHART = Path(__file__).parent / "charts" / "hooked"

SCRIPT = """
import json, sys
import helm_python
args = json.loads(sys.argv[1])
config = helm_python.Config(kubeconfig_path=args["kubeconfig"], namespace="default")
try:
    release = config.install(args["chart"], "shop", {}, wait="watcher", timeout=60)
except helm_python.HelmError as exc:
    print(json.dumps({"error": repr(exc)}))
else:
    print(json.dumps({"status": release["status"]}))
"""


async def helm_install(kubeconfig: Path, home: Path) -> dict[str, Any]:
    arg = json.dumps({"kubeconfig": str(kubeconfig), "chart": str(CHART)})
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SCRIPT, arg, env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    lines = out.decode().strip().splitlines()
    assert proc.returncode == 0 and lines, err.decode()[-2000:]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


async def test_install_with_job_hook_and_watcher_wait(tmp_path: Path) -> None:
    async with ApiServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        result = await helm_install(kubeconfig, tmp_path)
        assert result == {"status": "deployed"}
        store = server.store
        d = store.get(store.resolve("apps", "v1", "deployments"), "default", "shop-web")
        assert d is not None and d["status"]["availableReplicas"] == 2
        assert store.get(store.resolve("batch", "v1", "jobs"), "default", "shop-migrate") is None
        svc = store.get(store.resolve("", "v1", "services"), "default", "shop-web")
        assert svc is not None and 30000 <= svc["spec"]["ports"][0]["nodePort"] <= 32767
