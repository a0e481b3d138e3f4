"""HTTPS mode: a self-signed certificate for 127.0.0.1/localhost and bearer-token checks.

Plain HTTP is the default (kubectl and client-go send no credentials over it); HTTPS exists
to test authentication. The certificate comes from `asyncop.certs` (the `openssl` command line
tool; a missing `openssl` fails start() loudly). Invariant: with a
token configured, every request except /version and the health probes needs
`Authorization: Bearer <token>`, else 401 with the real server's Status body; tokens are
compared in constant time. The token's holder is `system:admin` (in `system:masters`), which
is what the review APIs answer for it (`TokenAuthority`).
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

from asyncop import certs
from asyncop.api import Unauthorized, status_body
from asyncop.apiserver.core.reviews import Attributes, UserInfo
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
    if scheme.lower() != "bearer" or not same_secret(value.strip(), token):
        raise Unauthorized(status_body(401, "Unauthorized"))


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison of two tokens (the time does not tell how much matched)."""
    return hmac.compare_digest(given.encode(), expected.encode())


ADMIN = UserInfo("system:admin", ("system:masters", "system:authenticated"))
_EVERYTHING = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
               "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
               "incomplete": False}


class TokenAuthority:
    """Review answers in single-token mode: the token authenticates `system:admin`, who may
    do everything; any other token authenticates nobody."""

    def __init__(self, token: str) -> None:
        self.token = token

    def whoami(self) -> UserInfo:
        return ADMIN

    def review_token(self, token: str) -> UserInfo | None:
        return ADMIN if same_secret(token, self.token) else None

    def allowed(self, user: UserInfo | None, attrs: Attributes) -> tuple[bool, str]:
        if user is None or "system:masters" in user.groups or user.username == ADMIN.username:
            return True, "the token's holder is system:admin (system:masters)"
        return False, ""

    def rules(self, namespace: str) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in _EVERYTHING.items()}
