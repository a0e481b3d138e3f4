"""HTTPS mode: a self-signed certificate for 127.0.0.1/localhost and bearer-token checks.

Plain HTTP is the default (kubectl and client-go send no credentials over it); HTTPS exists
to test authentication. The certificate comes from `asyncop.certs` (the `openssl` command line
tool; a missing `openssl` fails start() loudly). Invariant: with a
token configured, every request except /version and the health probes needs
`Authorization: Bearer <token>`, else 401 with the real server's Status body.
"""

from __future__ import annotations

from pathlib import Path

from asyncop import certs
from asyncop.api import Unauthorized, status_body
from asyncop.certs import Certificate

PUBLIC_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz"})


async def self_signed(directory: Path, *, host: str = "127.0.0.1") -> Certificate:
    """Create a self-signed certificate (also its own CA) valid for `host` and localhost."""
    hosts = ["127.0.0.1", "localhost"]
    if host not in ("127.0.0.1", "", "0.0.0.0", "::", "localhost"):
        hosts.append(host)
    return await certs.self_signed(directory, hosts=hosts, name="apiserver")


def check_token(path: str, authorization: str, token: str | None) -> None:
    """Raise 401 Unauthorized unless the bearer token matches (or no token is required)."""
    if token is None or path in PUBLIC_PATHS:
        return
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or value.strip() != token:
        raise Unauthorized(status_body(401, "Unauthorized"))
