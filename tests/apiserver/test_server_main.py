"""`python -m asyncop.apiserver.main` as its own process: URL line, CRDs, kubeconfig, SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import aiohttp
import yaml

from tests.apiserver.crdkit import WIDGET_CRD


async def test_serve_process(tmp_path: Path) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "widget.yaml").write_text(yaml.safe_dump(WIDGET_CRD))
    kubeconfig = tmp_path / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncop.apiserver.main", "--port", "0", "--no-simulators",
        "--crds", str(crds), "--kubeconfig-out", str(kubeconfig),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert line.startswith("asyncop apiserver listening on http://127.0.0.1:")
        url = line.strip().rsplit(" ", 1)[-1]
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == url
        async with aiohttp.ClientSession() as http:
            async with http.get(url + "/apis/example.com/v1/namespaces/default/widgets") as r:
                assert r.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 30)
    assert code == 0
