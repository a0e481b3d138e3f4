"""TLS paths of the Client against a small local HTTPS endpoint (the embedded API server
speaks plain HTTP): inline CA data, client certificates, tls-server-name, insecure mode.

Certificates are made with the openssl command line (EC keys, fast); skipped without it.
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from asyncop.api.kinds import CONFIGMAP
from asyncop.client import Client, ClientConfig, TransportError

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _isdir(path: str) -> bool:
    return os.path.isdir(path)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _issue(d: Path, name: str, cn: str, ext: str) -> None:
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=d)
    (d / f"{name}.ext").write_text(ext)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", f"{name}.crt", "-days", "1", "-extfile", f"{name}.ext",
             cwd=d)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=test-ca",
             "-days", "1", cwd=d)
    # the server certificate names only "kubernetes": reaching 127.0.0.1 needs tls-server-name
    _issue(d, "server", "kubernetes", "subjectAltName=DNS:kubernetes\n")
    _issue(d, "client", "asyncop-user", "extendedKeyUsage=clientAuth\n")
    return d


@pytest.fixture
async def https(pki: Path) -> AsyncIterator[str]:
    async def handler(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        cn = ""
        for rdn in (peer or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    cn = value
        return web.json_response({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": request.match_info["name"], "namespace": "default",
                         "resourceVersion": "1"},
            "data": {"authorization": request.headers.get("Authorization", ""), "cn": cn},
        })

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(pki / "server.crt", pki / "server.key")
    ctx.load_verify_locations(pki / "ca.crt")
    ctx.verify_mode = ssl.CERT_OPTIONAL
    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default/configmaps/{name}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ctx)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"https://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_inline_ca_token_and_tls_server_name(pki: Path, https: str) -> None:
    cfg = ClientConfig(host=https, token="tok-123", ca_data=(pki / "ca.crt").read_text(),
                       tls_server_name="kubernetes")
    client = Client(cfg, max_retries=0)
    async with client:
        got = await client.get(CONFIGMAP, "x")
        tmpdir = client._tmpdir
        assert tmpdir is not None and _isdir(tmpdir)
    assert got["data"] == {"authorization": "Bearer tok-123", "cn": ""}
    assert not _isdir(tmpdir)  # inline PEM files are removed on close


async def test_client_certificate_from_inline_data(pki: Path, https: str) -> None:
    cfg = ClientConfig(host=https, ca_file=str(pki / "ca.crt"), tls_server_name="kubernetes",
                       client_cert_data=(pki / "client.crt").read_text(),
                       client_key_data=(pki / "client.key").read_text())
    async with Client(cfg, max_retries=0) as client:
        got = await client.get(CONFIGMAP, "x")
    assert got["data"]["cn"] == "asyncop-user"


async def test_verification_failures_and_insecure_mode(pki: Path, https: str) -> None:
    # the name in the certificate does not match 127.0.0.1
    async with Client(ClientConfig(host=https, ca_file=str(pki / "ca.crt")),
                      max_retries=0) as client:
        with pytest.raises(TransportError):
            await client.get(CONFIGMAP, "x")
    # an unknown CA (the system store does not know ours)
    async with Client(ClientConfig(host=https, tls_server_name="kubernetes"),
                      max_retries=0) as client:
        with pytest.raises(TransportError):
            await client.get(CONFIGMAP, "x")
    # insecure-skip-tls-verify
    async with Client(ClientConfig(host=https, verify_ssl=False), max_retries=0) as client:
        assert (await client.get(CONFIGMAP, "x"))["metadata"]["name"] == "x"
