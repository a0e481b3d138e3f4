"""Leader election over a coordination.k8s.io/v1 Lease, with client-go's semantics.

One `LeaderElector` per process competes for one Lease. The lease record lives in the Lease's
spec (`holderIdentity`, `leaseDurationSeconds`, `acquireTime`, `renewTime`,
`leaseTransitions`). Invariants:

- Expiry is judged on the local clock: a lease held by someone else counts as valid until
  `lease_duration` seconds after *we observed its last change* (never by comparing remote
  timestamps, which may come from a skewed clock), exactly like client-go.
- Every write is an optimistic-concurrency update carrying the resourceVersion that was read;
  a Conflict means another candidate won this round, and we simply try again later.
- While leading, the lease is renewed every `retry_period`; if no renew succeeds within
  `renew_deadline` (or the lease is seen held by someone else) leadership is lost:
  `on_stopped_leading` runs and the elector writes nothing more until the lease is free
  again or has expired by our local observation.
- On clean shutdown (`release_on_cancel`), a leader sets `holderIdentity` to "" and
  `leaseDurationSeconds` to 1 so that a standby takes over on its next retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, cast

import structlog

from asyncop.api import AlreadyExists, ApiError, Conflict, Kind, NotFound, RawObject
from asyncop.api.kinds import LEASE
from asyncop.clock import Clock, wait_for
from asyncop.runtime.rbac import PolicyRule

log = structlog.get_logger("asyncop.leader")

Callback = Callable[[], Awaitable[None] | None]

RBAC_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(("coordination.k8s.io",), ("leases",), ("get", "create", "update")),
)
"""What leader election needs, in the Lease's namespace (the Helm chart renders this)."""


class LeaseClient(Protocol):
    """The part of `asyncop.client.Client` that leader election uses."""

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> RawObject: ...

    async def create(
        self, kind: Kind, obj: RawObject, *, namespace: str | None = None
    ) -> RawObject: ...

    async def update(self, kind: Kind, obj: RawObject) -> RawObject: ...


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """What the Manager needs to run leader election (identity defaults to host + random)."""

    name: str
    namespace: str = "default"
    identity: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True


def format_micro_time(dt: datetime) -> str:
    """A MicroTime: UTC, exactly six fractional digits and a `Z`."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(
        self,
        client: LeaseClient,
        *,
        name: str,
        namespace: str,
        identity: str,
        clock: Clock,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callback | None = None,
        on_stopped_leading: Callback | None = None,
        release_on_cancel: bool = True,
    ) -> None:
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError("need lease_duration > renew_deadline > retry_period > 0")
        if not identity:
            raise ValueError("identity must not be empty")
        self._client = client
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self._clock = clock
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self.release_on_cancel = release_on_cancel
        self._observed: dict[str, Any] | None = None  # last lease spec seen
        self._observed_meta: dict[str, Any] = {}  # kept so updates preserve labels etc.
        self._observed_at = 0.0  # clock.monotonic() when the spec last changed
        self._last_renew = 0.0
        self._leading = False
        self._log = log.bind(lease=f"{namespace}/{name}", identity=identity)

    @property
    def is_leader(self) -> bool:
        return self._leading

    @property
    def leader(self) -> str:
        """The holder identity we last observed ("" when unknown or released)."""
        return str((self._observed or {}).get("holderIdentity") or "")

    async def run(self) -> None:
        """Acquire, lead, and re-compete after a loss, until cancelled (then release)."""
        try:
            while True:
                await self._acquire()
                self._leading = True
                self._log.info("leader election won")
                await _call(self._on_started)
                await self._renew_until_lost()
                self._leading = False
                self._log.warning("leader election lost")
                await _call(self._on_stopped)
        except asyncio.CancelledError:
            if self._leading:
                self._leading = False
                if self.release_on_cancel:
                    await self.release()
                await _call(self._on_stopped)
            raise

    async def release(self) -> bool:
        """Give the lease up if we hold it (bounded by the renew deadline); True on success."""
        if self._observed is None or self._observed.get("holderIdentity") != self.identity:
            return False
        now = format_micro_time(self._clock.now())
        spec = {
            **self._observed,
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
        }
        try:
            await wait_for(self._clock, self._write(spec), self.renew_deadline)
        except (ApiError, TimeoutError, OSError) as exc:
            self._log.warning("lease release failed", error=str(exc))
            return False
        self._log.info("lease released")
        return True

    # internals -----------------------------------------------------------------------
    async def _acquire(self) -> None:
        while True:
            if await self._try_bounded():
                return
            await self._clock.sleep(self.retry_period)

    async def _renew_until_lost(self) -> None:
        while True:
            await self._clock.sleep(self.retry_period)
            while True:
                if await self._try_bounded():
                    break
                if self._held_by_other():
                    return
                elapsed = self._clock.monotonic() - self._last_renew
                if elapsed >= self.renew_deadline:
                    return
                await self._clock.sleep(min(self.retry_period, self.renew_deadline - elapsed))

    def _held_by_other(self) -> bool:
        holder = self.leader
        return bool(holder) and holder != self.identity

    async def _try_bounded(self) -> bool:
        timeout = self.renew_deadline
        if self._leading:
            timeout = max(0.0, self._last_renew + self.renew_deadline - self._clock.monotonic())
        try:
            return await wait_for(self._clock, self._try_acquire_or_renew(), timeout)
        except TimeoutError:
            self._log.warning("lease request timed out")
        except (Conflict, AlreadyExists):
            self._log.debug("lease write conflict")
        except (ApiError, OSError) as exc:
            self._log.warning("lease request failed", error=str(exc))
        except Exception as exc:  # never let a transport surprise kill the elector
            self._log.exception("lease request error", error=str(exc))
        return False

    async def _try_acquire_or_renew(self) -> bool:
        now = self._clock.now()
        stamp = format_micro_time(now)
        try:
            lease = await self._client.get(LEASE, self.name, namespace=self.namespace)
        except NotFound:
            spec = self._new_spec(stamp, transitions=0)
            obj: RawObject = {
                "apiVersion": LEASE.api_version,
                "kind": LEASE.kind,
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": spec,
            }
            created = await self._client.create(LEASE, obj, namespace=self.namespace)
            self._observe(created, renewed=True)
            return True
        spec_now: dict[str, Any] = dict(lease.get("spec") or {})
        if spec_now != self._observed:
            self._observed = spec_now
            self._observed_at = self._clock.monotonic()
        self._keep_meta(lease)
        holder = spec_now.get("holderIdentity") or ""
        if holder and holder != self.identity:
            duration = float(spec_now.get("leaseDurationSeconds") or self.lease_duration)
            if self._observed_at + duration > self._clock.monotonic():
                return False
        transitions = int(spec_now.get("leaseTransitions") or 0)
        if holder == self.identity and spec_now.get("acquireTime"):
            spec = self._new_spec(str(spec_now["acquireTime"]), transitions=transitions)
            spec["renewTime"] = stamp
        else:
            spec = self._new_spec(stamp, transitions=transitions + 1)
        await self._write(spec)
        return True

    def _new_spec(self, acquire_time: str, *, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration),
            "acquireTime": acquire_time,
            "renewTime": acquire_time,
            "leaseTransitions": transitions,
        }

    async def _write(self, spec: dict[str, Any]) -> None:
        meta = {**self._observed_meta, "name": self.name, "namespace": self.namespace}
        obj = {"apiVersion": LEASE.api_version, "kind": LEASE.kind, "metadata": meta,
               "spec": spec}
        updated = await self._client.update(LEASE, cast(RawObject, obj))
        self._observe(updated, renewed=spec.get("holderIdentity") == self.identity)

    def _keep_meta(self, lease: RawObject) -> None:
        meta = dict(lease.get("metadata") or {})
        meta.pop("managedFields", None)
        self._observed_meta = meta

    def _observe(self, lease: RawObject, *, renewed: bool) -> None:
        self._observed = dict(lease.get("spec") or {})
        self._keep_meta(lease)
        self._observed_at = self._clock.monotonic()
        if renewed:
            self._last_renew = self._observed_at


async def _call(cb: Callback | None) -> None:
    if cb is None:
        return
    result = cb()
    if result is not None:
        await result
