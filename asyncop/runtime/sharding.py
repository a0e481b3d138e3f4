"""ShardManager: owning virtual shards through coordination.k8s.io/v1 Leases, like leader
election but for many replicas at once.

Each replica registers a *member* Lease (`<name>-member-<digest of identity>`) and renews it;
the live members are the ones whose member Lease changed within `lease_duration` by our local
observation (client-go's rule: never compare remote timestamps). Every `retry_period` a replica
lists the group's Leases (one LIST, by label), computes the sticky balanced assignment
(`asyncop.runtime.shards.assign`) from the live members and the current shard holders, and:

- a shard assigned to it: renews its *shard* Lease (`<name>-shard-<i>`) when it holds it, or
  takes it when it is free (released) or expired, with the resourceVersion it read
  (optimistic concurrency: of two replicas racing for one Lease, one wins) — and only then
  activates it (the new owner starts only after acquiring);
- a shard it holds but is assigned elsewhere: hands it over — stops admitting its keys, waits
  for its in-flight reconciles (bounded by `drain_timeout`), then releases the Lease
  (`holderIdentity: ""`), so the next owner takes it on its next round;
- a shard whose Lease it could not renew within `renew_deadline`, or sees held by another:
  lost — its work stops at once (`ShardScope.revoke`; controllers cancel in-flight reconciles).

A shard Lease that vanishes while another replica holds it (deleted, or an API server
restarted without state) stays held by our observation until `lease_duration` after its last
change: its holder, unable to renew, works on until its renew deadline, so taking it sooner
would let two replicas reconcile its keys at once.

On `stop()`, every held shard is drained and released (all at once) and the member Lease is
deleted, so the others rebalance on their next round rather than after `lease_duration`; when
the API server cannot be reached, stop ends after one request's retries and leaves the Leases
to expire. Invariant: this
replica reconciles a key only while it holds the Lease of the key's shard (renewed within
`renew_deadline < lease_duration`, so an expired Lease another replica may take is never
still in use here); every timer goes through the Clock.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import structlog

from asyncop.api import AlreadyExists, ApiError, Conflict, NotFound, RawObject, deep_copy
from asyncop.api.kinds import LEASE
from asyncop.api.shards import ShardSpace, fnv1a64
from asyncop.client import Client, TransportError
from asyncop.clock import Clock
from asyncop.runtime.leader import format_micro_time
from asyncop.runtime.rbac import PolicyRule
from asyncop.runtime.shards import ShardScope, assign

log = structlog.get_logger("asyncop.sharding")

GROUP_LABEL = "sharding.asyncop.io/group"
ROLE_LABEL = "sharding.asyncop.io/role"

RBAC_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(("coordination.k8s.io",), ("leases",),
               ("create", "delete", "get", "list", "update")),
)
"""What sharding needs in the Leases' namespace (the Helm chart renders this)."""


@dataclass(frozen=True, slots=True)
class ShardingConfig:
    name: str
    namespace: str
    shards: int = 16
    identity: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    drain_timeout: float = 10.0

    def __post_init__(self) -> None:
        ShardSpace(self.shards)  # checks the range
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError("need retry_period < renew_deadline < lease_duration")


@dataclass(slots=True)
class _Seen:
    """A Lease as last read, and when (local clock) its holder or renewTime last changed."""

    lease: RawObject
    record: tuple[str, str]
    changed_at: float
    gone: bool = False
    """Deleted while held by another replica: held by our observation until it expires."""


def member_lease_name(group: str, identity: str) -> str:
    return f"{group}-member-{fnv1a64(identity.encode()):016x}"


def shard_lease_name(group: str, shard: int) -> str:
    return f"{group}-shard-{shard}"


class ShardManager:
    def __init__(self, client: Client, config: ShardingConfig, *, identity: str,
                 clock: Clock, scope: ShardScope | None = None) -> None:
        self.client = client
        self.config = config
        self.identity = config.identity or identity
        self.clock = clock
        self.scope = scope or ShardScope(ShardSpace(config.shards), clock=clock)
        self.handovers = 0
        """Shards this replica handed over gracefully (drained, then released)."""
        self.acquisitions = 0
        self.losses = 0
        self._seen: dict[str, _Seen] = {}
        self._renewed_at: dict[int, float] = {}
        self._handing_over: dict[int, asyncio.Task[None]] = {}
        self.rounds = 0
        """Rounds completed (readiness: a replica is a member after its first)."""
        self.assignment: dict[int, str] = {}

    @property
    def members(self) -> list[str]:
        now = self.clock.monotonic()
        out = {self.identity}
        for seen in self._seen.values():
            if _role(seen.lease) == "member" and self._alive(seen, now):
                out.add(seen.record[0])
        out.discard("")
        return sorted(out)

    # -- the loop ------------------------------------------------------------------------------
    async def run(self) -> None:
        """Take part until cancelled (then hand everything back, see `stop`)."""
        try:
            while True:
                try:
                    await self.tick()
                except (ApiError, TransportError) as exc:
                    log.warning("sharding round failed", error=str(exc))
                self._expire_unrenewed()
                await self.clock.sleep(self.config.retry_period)
        except asyncio.CancelledError:
            await self.stop()
            raise

    async def tick(self) -> None:
        """One round: renew membership, read the Leases, acquire/renew/hand over shards."""
        await self._renew_member()
        await self._observe()
        now = self.clock.monotonic()
        current = {shard: seen.record[0] for shard, seen in self._shard_leases().items()
                   if seen.record[0] and self._alive(seen, now)}
        for shard in self.scope.held:
            current[shard] = self.identity
        self.assignment = assign(self.config.shards, self.members, current)
        acquired: list[int] = []
        for shard in range(self.config.shards):
            mine = self.assignment.get(shard) == self.identity
            held = shard in self.scope.held
            seen = self._shard_leases().get(shard)
            if held and seen is not None and seen.record[0] not in ("", self.identity):
                self._lose([shard], f"held by {seen.record[0]}")
                continue
            if mine and held and shard not in self._handing_over:
                await self._renew_shard(shard, seen)
            elif mine and not held and (seen is None or not seen.record[0]
                                        or not self._alive(seen, now)):
                if await self._take_shard(shard, seen):
                    acquired.append(shard)
            elif not mine and held and shard not in self._handing_over:
                self._handing_over[shard] = asyncio.create_task(
                    self._hand_over(shard), name=f"shard {shard} hand-over")
        if acquired:
            self.acquisitions += len(acquired)
            self.scope.activate(acquired)
            log.info("shards acquired", shards=acquired, owned=sorted(self.scope.held))
        self.rounds += 1

    async def settle(self) -> None:
        """Wait for the hand-overs started so far (tests drive rounds with `tick`)."""
        while self._handing_over:
            await asyncio.gather(*self._handing_over.values(), return_exceptions=True)

    async def stop(self) -> None:
        """Drain and release every held shard, and leave the group (delete the member Lease)."""
        for task in list(self._handing_over.values()):
            task.cancel()
        await asyncio.gather(*self._handing_over.values(), return_exceptions=True)
        self._handing_over.clear()
        # All at once: drains overlap, and an unreachable API server costs one retry cycle,
        # not one per held shard (a SIGTERM must end within the pod's grace period).
        results = await asyncio.gather(*(self._hand_over(s) for s in sorted(self.scope.held)),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(
                    result, ApiError | TransportError):
                raise result
        if any(isinstance(r, TransportError) for r in results):
            return  # unreachable: the member Lease expires like the shards' Leases
        with contextlib.suppress(ApiError, TransportError):
            await self.client.delete(LEASE, member_lease_name(self.config.name, self.identity),
                                     namespace=self.config.namespace)

    # -- leases --------------------------------------------------------------------------------
    def _shard_leases(self) -> dict[int, _Seen]:
        out: dict[int, _Seen] = {}
        prefix = f"{self.config.name}-shard-"
        for name, seen in self._seen.items():
            if name.startswith(prefix) and name[len(prefix):].isdigit():
                out[int(name[len(prefix):])] = seen
        return out

    def _alive(self, seen: _Seen, now: float) -> bool:
        duration = (seen.lease.get("spec") or {}).get("leaseDurationSeconds") or 0
        return now - seen.changed_at < float(duration)

    async def _observe(self) -> None:
        body = await self.client.list(LEASE, namespace=self.config.namespace,
                                      label_selector=f"{GROUP_LABEL}={self.config.name}")
        now = self.clock.monotonic()
        fresh: dict[str, _Seen] = {}
        for lease in body.get("items") or []:
            spec = lease.get("spec") or {}
            record = (str(spec.get("holderIdentity") or ""), str(spec.get("renewTime") or ""))
            name = lease["metadata"]["name"]
            old = self._seen.get(name)
            changed_at = old.changed_at if old is not None and old.record == record else now
            fresh[name] = _Seen(lease, record, changed_at)
        shard_prefix = f"{self.config.name}-shard-"
        for name, old in self._seen.items():
            # A shard Lease deleted while another replica held it (a stateless API server
            # restart, a `kubectl delete`): its holder may work on until its renew deadline,
            # so it stays held, by our observation, until the lease duration has passed.
            if (name not in fresh and name.startswith(shard_prefix) and old.record[0]
                    and old.record[0] != self.identity and self._alive(old, now)):
                fresh[name] = _Seen(old.lease, old.record, old.changed_at, gone=True)
        self._seen = fresh

    def _lease(self, name: str, role: str, holder: str, *, transitions: int = 0,
               acquire: str | None = None) -> dict[str, Any]:
        now = format_micro_time(self.clock.now())
        return {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": self.config.namespace,
                         "labels": {GROUP_LABEL: self.config.name, ROLE_LABEL: role}},
            "spec": {"holderIdentity": holder,
                     "leaseDurationSeconds": int(self.config.lease_duration),
                     "acquireTime": acquire or now, "renewTime": now,
                     "leaseTransitions": transitions},
        }

    async def _renew_member(self) -> None:
        name = member_lease_name(self.config.name, self.identity)
        seen = self._seen.get(name)
        body = self._lease(name, "member", self.identity)
        if seen is None:
            try:
                await self.client.create(LEASE, body, namespace=self.config.namespace)  # type: ignore[arg-type]
            except AlreadyExists:
                current = await self.client.get(LEASE, name, namespace=self.config.namespace)
                await self._update(current, body["spec"])
        else:
            spec = dict(body["spec"], acquireTime=(seen.lease.get("spec") or {}).get(
                "acquireTime") or body["spec"]["acquireTime"])
            try:
                await self._update(seen.lease, spec)
            except (Conflict, NotFound):
                self._seen.pop(name, None)  # read it again next round

    async def _update(self, lease: RawObject, spec: dict[str, Any]) -> RawObject:
        body = deep_copy(lease)
        body["spec"] = spec
        return await self.client.update(LEASE, body)

    async def _take_shard(self, shard: int, seen: _Seen | None) -> bool:
        name = shard_lease_name(self.config.name, shard)
        try:
            if seen is None or seen.gone:
                stored = await self.client.create(
                    LEASE, self._lease(name, "shard", self.identity),  # type: ignore[arg-type]
                    namespace=self.config.namespace)
            else:
                transitions = int((seen.lease.get("spec") or {}).get("leaseTransitions") or 0)
                stored = await self._update(seen.lease, self._lease(
                    name, "shard", self.identity, transitions=transitions + 1)["spec"])
        except (Conflict, NotFound):
            return False  # another replica won this round
        except (ApiError, TransportError) as exc:
            log.info("shard acquisition failed", shard=shard, error=str(exc))
            return False
        self._seen[name] = _Seen(stored, _record(stored), self.clock.monotonic())
        self._renewed_at[shard] = self.clock.monotonic()
        return True

    async def _renew_shard(self, shard: int, seen: _Seen | None) -> None:
        if seen is None:
            return  # deleted by someone: the renew deadline decides
        spec = dict(seen.lease.get("spec") or {})
        spec["renewTime"] = format_micro_time(self.clock.now())
        spec["leaseDurationSeconds"] = int(self.config.lease_duration)
        try:
            stored = await self._update(seen.lease, spec)
        except (ApiError, TransportError) as exc:  # the renew deadline decides
            log.info("shard renewal failed", shard=shard, error=str(exc))
            return
        name = shard_lease_name(self.config.name, shard)
        self._seen[name] = _Seen(stored, _record(stored), self.clock.monotonic())
        self._renewed_at[shard] = self.clock.monotonic()

    def _expire_unrenewed(self) -> None:
        now = self.clock.monotonic()
        late = [s for s in self.scope.held if s not in self._handing_over
                and now - self._renewed_at.get(s, now) > self.config.renew_deadline]
        if late:
            self._lose(late, "not renewed within the renew deadline")

    def _lose(self, shards: list[int], why: str) -> None:
        self.losses += len(shards)
        for shard in shards:
            self._renewed_at.pop(shard, None)
        log.warning("shards lost", shards=shards, reason=why)
        self.scope.revoke(shards)

    async def _hand_over(self, shard: int) -> None:
        """Stop admitting, drain, release: the next owner takes it on its next round."""
        try:
            idle = await self.scope.drain(shard, grace=self.config.drain_timeout)
            if not idle:
                log.warning("shard drain timed out; releasing anyway", shard=shard)
            seen = self._seen.get(shard_lease_name(self.config.name, shard))
            if seen is not None and seen.record[0] == self.identity:
                spec = dict(seen.lease.get("spec") or {}, holderIdentity="",
                            leaseDurationSeconds=1)
                with contextlib.suppress(Conflict, NotFound):
                    await self._update(seen.lease, spec)
            self.handovers += 1
            log.info("shard handed over", shard=shard)
        finally:
            self._renewed_at.pop(shard, None)
            self.scope.release(shard)
            self._handing_over.pop(shard, None)


def _role(lease: RawObject) -> str:
    return str(((lease.get("metadata") or {}).get("labels") or {}).get(ROLE_LABEL) or "")


def _record(lease: RawObject) -> tuple[str, str]:
    spec = lease.get("spec") or {}
    return (str(spec.get("holderIdentity") or ""), str(spec.get("renewTime") or ""))
