"""Development certificates: one self-signed certificate that is also its own CA.

Used by the embedded API server's HTTPS mode and by the operator webhook server. Generated
with the `openssl` command line tool (no extra Python dependency); a missing `openssl` is a
clear RuntimeError. Invariant: the certificate names every host it is given (IP addresses as
IP SANs, the rest as DNS SANs) and is valid for a year; nothing here is meant for production
(use cert-manager or your cluster's CA there).
"""

from __future__ import annotations

import asyncio
import ipaddress
import shutil
import ssl
from dataclasses import dataclass
from pathlib import Path


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


def _san(host: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return f"DNS:{host}"
    return f"IP:{host}"


async def self_signed(directory: Path, *, hosts: list[str], name: str) -> Certificate:
    """Write `<name>.crt` and `<name>.key` into `directory`, valid for every host in `hosts`."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("generating a certificate needs the openssl command line tool on PATH")
    await asyncio.to_thread(directory.mkdir, parents=True, exist_ok=True)
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    names = ",".join(dict.fromkeys(_san(h) for h in hosts))
    proc = await asyncio.create_subprocess_exec(
        openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "365",
        "-subj", f"/CN={name}", "-addext", f"subjectAltName={names}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"openssl failed: {err.decode(errors='replace').strip()}")
    return Certificate(cert, key)


__all__ = ["Certificate", "self_signed"]
