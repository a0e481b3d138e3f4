"""HTTPS mode: a self-signed certificate for 127.0.0.1/localhost and bearer-token checks.

Plain HTTP is the default (kubectl and client-go send no credentials over it); HTTPS exists
to test authentication. The certificate is generated with the `openssl` command line tool
(no extra Python dependency); a missing `openssl` fails start() loudly. Invariant: with a
token configured, every request except /version and the health probes needs
`Authorization: Bearer <token>`, else 401 with the real server's Status body.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
from dataclasses import dataclass
from pathlib import Path

from asyncop.api import Unauthorized, status_body

PUBLIC_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz"})


@dataclass(frozen=True, slots=True)
class Certificate:
    cert_file: Path
    key_file: Path

    def pem(self) -> bytes:
        return self.cert_file.read_bytes()

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.cert_file), str(self.key_file))
        return context


async def self_signed(directory: Path, *, host: str = "127.0.0.1") -> Certificate:
    """Create a self-signed certificate (also its own CA) valid for `host` and localhost."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("HTTPS mode needs the openssl command line tool on PATH")
    await asyncio.to_thread(directory.mkdir, parents=True, exist_ok=True)
    cert, key = directory / "apiserver.crt", directory / "apiserver.key"
    names = "IP:127.0.0.1,DNS:localhost"
    if host not in ("127.0.0.1", "", "0.0.0.0", "::", "localhost"):
        names += f",IP:{host}"
    proc = await asyncio.create_subprocess_exec(
        openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "365",
        "-subj", "/CN=asyncop-apiserver", "-addext", f"subjectAltName={names}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"openssl failed: {err.decode(errors='replace').strip()}")
    return Certificate(cert, key)


def check_token(path: str, authorization: str, token: str | None) -> None:
    """Raise 401 Unauthorized unless the bearer token matches (or no token is required)."""
    if token is None or path in PUBLIC_PATHS:
        return
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or value.strip() != token:
        raise Unauthorized(status_body(401, "Unauthorized"))
