"""AuthHealth: whether the API server still accepts the client's credentials.

A token can be revoked, a service-account token can expire, an exec plugin can start handing
out credentials the server refuses. Each request then fails with 401 (or 403), the informers
back off and retry, and nothing else says what is wrong. The Client reports every answer
here: `rejected(code)` for 401/403, `accepted()` for any 2xx. After `FAILING_AFTER` rejections
in a row with no success between them the credentials are *failing*: one ERROR line names
the credential source (kubeconfig and context, token file, exec plugin, in-cluster service
account) and the status; the Manager's `/readyz` fails and `asyncop_client_credentials_
failing` is 1 until a request succeeds again (one INFO line then). `rejections` counts every
401/403 by code for `asyncop_client_auth_rejections_total`.

Invariant: state changes only on answers (no timers); a single 403 for one resource among
successes does not make the credentials failing.
"""

from __future__ import annotations

from collections import Counter

import structlog

from asyncop.client.config import ClientConfig

log = structlog.get_logger("asyncop.client")

FAILING_AFTER = 3
"""Rejections in a row (no success between them) that make the credentials failing."""


def describe_source(config: ClientConfig) -> str:
    """Where the credentials come from, for the one line that reports them failing."""
    parts = [config.source or "explicit configuration"]
    if config.context:
        parts.append(f"context {config.context!r}")
    if config.exec_config:
        parts.append(f"exec plugin {config.exec_config.get('command')!r}")
    elif config.token_file:
        parts.append(f"token file {config.token_file}")
    elif config.token:
        parts.append("bearer token")
    elif config.client_cert_file or config.client_cert_data:
        parts.append("client certificate")
    elif config.username:
        parts.append(f"basic auth user {config.username!r}")
    else:
        parts.append("no credential")
    return ", ".join(parts)


class AuthHealth:
    def __init__(self, config: ClientConfig) -> None:
        self.source = describe_source(config)
        self.in_a_row = 0
        self.failing = False
        self.last_code: int | None = None
        self.rejections: Counter[int] = Counter()

    def rejected(self, code: int, *, verb: str, path: str, message: str = "") -> None:
        self.rejections[code] += 1
        self.in_a_row += 1
        self.last_code = code
        if not self.failing and self.in_a_row >= FAILING_AFTER:
            self.failing = True
            log.error("API server rejects the operator's credentials", credentials=self.source,
                      code=code, verb=verb, path=path, message=message[:300],
                      rejected_in_a_row=self.in_a_row)

    def accepted(self) -> None:
        if self.failing:
            log.info("API server accepts the operator's credentials again",
                     credentials=self.source, after_rejections=self.in_a_row)
        self.failing = False
        self.in_a_row = 0
