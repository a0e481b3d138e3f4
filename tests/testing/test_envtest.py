"""ControlPlane: a real etcd + kube-apiserver from KUBEBUILDER_ASSETS, started and stopped
exactly (skipped with one line when no assets are given)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from asyncop.api.kinds import NAMESPACE
from asyncop.client import Client
from asyncop.testing.envtest import ControlPlane, ControlPlaneError, assets_dir

needs_assets = pytest.mark.skipif(
    assets_dir() is None, reason="KUBEBUILDER_ASSETS names no etcd + kube-apiserver")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def test_assets_dir_needs_etcd_and_apiserver(tmp_path: Path) -> None:
    assert assets_dir(tmp_path) is None
    for name in ("etcd", "kube-apiserver"):
        (tmp_path / name).write_text("#!/bin/sh\n")
    assert assets_dir(tmp_path) is None  # not executable
    (tmp_path / "etcd").chmod(0o755)
    assert assets_dir(tmp_path) is None  # no kube-apiserver yet
    (tmp_path / "kube-apiserver").chmod(0o755)
    assert assets_dir(tmp_path) == tmp_path
    with pytest.raises(ControlPlaneError, match="no envtest assets"):
        ControlPlane(assets=tmp_path / "missing")


@needs_assets
async def test_a_plane_serves_and_stops_exactly(tmp_path: Path) -> None:
    plane = ControlPlane()
    async with plane:
        pids = [proc.pid for _, proc, _ in plane._procs]
        run_dir = plane.run_dir
        assert len(pids) == 2 and run_dir is not None and run_dir.is_dir()
        async with Client(plane.client_config()) as client:
            names = {ns["metadata"]["name"] for ns in (await client.list(NAMESPACE))["items"]}
        assert {"default", "kube-system"} <= names
        kubeconfig = plane.write_kubeconfig(tmp_path / "kubeconfig")
        assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
    assert not any(_alive(pid) for pid in pids)
    assert not run_dir.exists()


@needs_assets
async def test_a_failed_start_leaves_nothing_running() -> None:
    plane = ControlPlane(apiserver_args=["--no-such-flag"])
    with pytest.raises(ControlPlaneError, match="kube-apiserver exited"):
        await plane.start()
    assert plane._procs == [] and plane.run_dir is None
