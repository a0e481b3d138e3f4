"""ShardGate: how one Controller follows its replica's ShardScope.

- Enqueue: a watch event's key is enqueued only when the key's shard is active here. The
  shard comes from a uid: the object's own for `for_`, the controller owner's (from its
  ownerReference) for `owns` — so owned objects follow their owner's shard —, and the cached
  primary object's for `watches(mapper)`. The uid is remembered per key.
- Reconcile: `start(key)` admits a reconcile only if the shard is still active (it may have
  been handed over while the key waited) and counts it in flight; `finish` ends it.
- Acquired shards: every cached primary object in them, and every cached owned object whose
  owner is in them, is enqueued (so a new owner catches up at once), with `replay_priority`
  (the controller's `LOW_PRIORITY` when its priority queue is on: a replay waits behind live
  events).
- Lost shards: the workers reconciling keys of them are cancelled (`revoking` marks them, so
  the worker takes the cancellation as "stop this key", not as shutdown).

Invariant: a key whose uid is unknown (no event named it and no cached primary has it) is not
reconciled here; the uid map holds only keys of shards this replica held.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from asyncop.api import Kind, RawObject, Request, controller_of
from asyncop.runtime.handlers import Admit, Enqueuer, Watch
from asyncop.runtime.shards import ShardScope


class ShardCache(Protocol):
    """What a sharded Controller reads from `asyncop.runtime.cache.Cache`."""

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None: ...

    def list(self, kind: Kind, *, namespace: str | None = None,
             labels: dict[str, str] | None = None) -> list[RawObject]: ...


class ShardGate:
    def __init__(self, scope: ShardScope, *, cache: ShardCache, primary: Kind | None,
                 watches: tuple[Watch, ...], queue: Enqueuer, replay_priority: int = 0) -> None:
        self.scope = scope
        self.replay_priority = replay_priority
        self.cache = cache
        self.primary = primary
        self.watches = watches
        self.queue = queue
        self.uids: dict[Request, str] = {}
        self.workers: dict[asyncio.Task[Any], int] = {}
        self.revoking: set[asyncio.Task[Any]] = set()
        self._removers = [scope.on_acquired(self.acquired), scope.on_revoked(self.revoked)]

    def close(self) -> None:
        for remove in self._removers:
            remove()

    # -- enqueue -------------------------------------------------------------------------------
    def admit_for(self, watch: Watch) -> Admit:
        target = watch.target

        def admit(request: Request, obj: RawObject) -> bool:
            if target == "self":
                uid = obj["metadata"].get("uid")
            elif target == "owner":
                ref = controller_of(obj)
                uid = ref.get("uid") if ref is not None else None
            else:
                uid = self._primary_uid(request)
            if not uid or self.scope.shard_of(uid) not in self.scope.active:
                return False
            self.uids[request] = uid
            return True

        return admit

    def _primary_uid(self, req: Request) -> str | None:
        if self.primary is None:
            return None
        obj = self.cache.get(self.primary, req.name, req.namespace or None)
        return None if obj is None else obj["metadata"].get("uid")

    # -- reconcile -----------------------------------------------------------------------------
    def start(self, request: Request) -> int | None:
        """The key's shard if it may be reconciled now (counted in flight), else None."""
        uid = self.uids.get(request) or self._primary_uid(request)
        if not uid:
            return None
        shard = self.scope.admit(uid)
        task = asyncio.current_task()
        if shard is not None and task is not None:
            self.workers[task] = shard
        return shard

    def finish(self, request: Request, shard: int) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.workers.pop(task, None)
        self.scope.done(shard)
        if self._primary_uid(request) is None:
            self.uids.pop(request, None)  # the object is gone: nothing more to remember

    def take_revoked(self, task: asyncio.Task[Any]) -> bool:
        """True (once) if `task` was cancelled because its key's shard was lost."""
        if task in self.revoking:
            self.revoking.discard(task)
            return True
        return False

    # -- ownership changes ---------------------------------------------------------------------
    def acquired(self, shards: set[int]) -> None:
        if self.primary is None:
            return
        for obj in self.cache.list(self.primary):
            uid = obj["metadata"].get("uid")
            if uid and self.scope.shard_of(uid) in shards:
                key = _key(obj)
                self.uids[key] = uid
                self.queue.add(key, ("shard_acquired", self.scope.shard_of(uid)),
                               priority=self.replay_priority)
        for watch in self.watches:
            if watch.target != "owner":
                continue
            for obj in self.cache.list(watch.kind):
                ref = controller_of(obj)
                if ref is None or ref.get("kind") != self.primary.kind or not ref.get("uid"):
                    continue
                if self.scope.shard_of(ref["uid"]) in shards:
                    ns = (obj["metadata"].get("namespace") or "") if self.primary.namespaced \
                        else ""
                    key = Request(ref["name"], ns)
                    self.uids[key] = ref["uid"]
                    self.queue.add(key, ("shard_acquired", self.scope.shard_of(ref["uid"])),
                                   priority=self.replay_priority)

    def revoked(self, shards: set[int]) -> None:
        for task, shard in list(self.workers.items()):
            if shard in shards and not task.done():
                self.revoking.add(task)
                task.cancel()


def _key(obj: RawObject) -> Request:
    meta = obj["metadata"]
    return Request(meta["name"], meta.get("namespace") or "")
