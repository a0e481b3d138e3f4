"""Credentials: the Authorization header for a ClientConfig, kept fresh.

A static token is used as is; a token file (service accounts rotate theirs) is re-read at
most once a minute; an exec credential plugin is run through kubernetes_asyncio's
ExecProvider and run again once its token expires; username/password gives Basic auth.
A plugin that hands out a credential already expired (or about to) is not run again for every
request: its runs are spaced 1 s, 2 s, 4 s … up to a minute apart (a 401 does not shorten
that), with one warning per run saying so. Invariant: time is read from the injected Clock
only, and concurrent callers never run the plugin twice at once.
"""

from __future__ import annotations

import asyncio
import base64
from datetime import datetime
from pathlib import Path

import structlog

from asyncop.client.config import ClientConfig, ConfigError
from asyncop.clock import Clock

TOKEN_FILE_REFRESH = 60.0
"""Seconds between re-reads of a token file."""
EXPIRED_RETRY = (1.0, 60.0)
"""First and longest spacing of exec plugin runs while it returns expired credentials."""
EARLY_REFRESH = 10.0
"""Seconds before its expiry that an exec credential is fetched again."""

log = structlog.get_logger("asyncop.client")


class Credentials:
    def __init__(self, config: ClientConfig, *, clock: Clock) -> None:
        self._config = config
        self._clock = clock
        self._header: str | None = None
        self._valid_until: float | None = None
        self._not_before = 0.0  # no plugin run before this (expired credentials back off)
        self._expired_runs = 0
        self._lock = asyncio.Lock()
        if config.token:
            self._header = f"Bearer {config.token}"
        elif config.username and config.password is not None:
            raw = f"{config.username}:{config.password}".encode()
            self._header = "Basic " + base64.b64encode(raw).decode()

    @property
    def dynamic(self) -> bool:
        return self._config.token_file is not None or self._config.exec_config is not None

    async def authorization(self) -> str | None:
        """The value of the Authorization header, or None to send none."""
        if not self.dynamic:
            return self._header
        if not self._stale():
            return self._header
        async with self._lock:
            if self._stale():
                await self._refresh()
        return self._header

    def _stale(self) -> bool:
        now = self._clock.monotonic()
        if self._header is not None and now < self._not_before:
            return False  # an expired-on-arrival credential: not again before its time
        return self._valid_until is None or now >= self._valid_until

    def invalidate(self) -> None:
        """Forget a cached dynamic token (after a 401, the next call fetches a new one)."""
        if self.dynamic:
            self._valid_until = None

    async def _refresh(self) -> None:
        if self._config.token_file is not None:
            path = Path(self._config.token_file)
            try:
                token = (await asyncio.to_thread(path.read_text)).strip()
            except OSError as exc:
                raise ConfigError(f"token file {path} cannot be read ({exc})") from exc
            self._header = f"Bearer {token}"
            self._valid_until = self._clock.monotonic() + TOKEN_FILE_REFRESH
            return
        await self._run_exec_plugin()

    async def _run_exec_plugin(self) -> None:
        from kubernetes_asyncio.config.config_exception import ConfigException
        from kubernetes_asyncio.config.exec_provider import ExecProvider
        from kubernetes_asyncio.config.kube_config import ConfigNode

        exec_cfg = self._config.exec_config or {}
        try:
            status = await ExecProvider(ConfigNode("exec", exec_cfg)).run()
        except (ConfigException, OSError) as exc:
            raise ConfigError(f"exec credential plugin failed ({exc}); fix the plugin") from exc
        token = status.get("token") if isinstance(status, dict) else None
        if not token:
            raise ConfigError(
                "exec credential plugin returned no token (client certificates from exec "
                "plugins are not supported); configure a token-issuing plugin"
            )
        self._header = f"Bearer {token}"
        expiry = status.get("expirationTimestamp")
        now = self._clock.monotonic()
        if not expiry:
            self._valid_until = float("inf")
            return
        when = datetime.fromisoformat(str(expiry).replace("Z", "+00:00"))
        # refresh a little early so a request never carries an expired token
        lifetime = (when - self._clock.now()).total_seconds() - EARLY_REFRESH
        if lifetime >= EXPIRED_RETRY[0]:
            self._expired_runs = 0
            self._valid_until = now + lifetime
            return
        self._expired_runs += 1
        wait = min(EXPIRED_RETRY[0] * 2 ** (self._expired_runs - 1), EXPIRED_RETRY[1])
        self._valid_until = self._not_before = now + wait
        log.warning("exec credential plugin returned an expired credential",
                    command=exec_cfg.get("command"), expiration=str(expiry),
                    runs_in_a_row=self._expired_runs, next_run_in=wait)
