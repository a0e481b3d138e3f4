"""HTTPS mode with a bearer token: kubectl and both Python clients authenticate; requests
without the token get 401 (docs/apiserver.md, "HTTPS and tokens")."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
from pathlib import Path

import aiohttp
import pytest
from kubernetes import client as sync_client
from kubernetes import config as sync_config
from kubernetes_asyncio import client as kclient
from kubernetes_asyncio import config as kconfig

from asyncop.apiserver import ApiServer

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not on PATH")


async def test_https_with_token(tmp_path: Path) -> None:
    async with ApiServer(simulators=False, tls=True, token="s3cret",
                         cert_dir=tmp_path / "certs") as srv:
        assert srv.url.startswith("https://127.0.0.1:")
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig")
        ca_pem = srv.ca_pem
        assert ca_pem is not None
        context = ssl.create_default_context(cadata=ca_pem.decode())
        async with aiohttp.ClientSession() as http:
            async with http.get(srv.url + "/api/v1/namespaces", ssl=context) as r:
                assert r.status == 401
                assert (await r.json())["reason"] == "Unauthorized"
            async with http.get(srv.url + "/version", ssl=context) as r:
                assert r.status == 200
            async with http.get(srv.url + "/api/v1/namespaces", ssl=context,
                                headers={"Authorization": "Bearer s3cret"}) as r:
                assert r.status == 200

        cfg = kclient.Configuration()
        await kconfig.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg,
                                       persist_config=False)
        async with kclient.ApiClient(cfg) as api:
            names = [n.metadata.name for n in (await kclient.CoreV1Api(api).list_namespace()).items]
        assert "default" in names

        def sync_list() -> list[str]:
            api = sync_config.new_client_from_config(config_file=str(kubeconfig))
            with api:
                return [n.metadata.name for n in sync_client.CoreV1Api(api).list_namespace().items]

        assert "kube-system" in await asyncio.to_thread(sync_list)

        if shutil.which("kubectl"):
            proc = await asyncio.create_subprocess_exec(
                "kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "c"),
                "get", "namespaces", "-o", "json", stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode == 0, err.decode()
            assert len(json.loads(out)["items"]) == 4
