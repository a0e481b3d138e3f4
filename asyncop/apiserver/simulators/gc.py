"""GarbageCollector: ownerReference garbage collection, as kube-controller-manager does it.

Owner identity is the uid: an owner that is missing, or present under the same name with a
different uid, is absent. A namespaced owner is looked up in the dependent's namespace (so a
cross-namespace reference is absent); a cluster-scoped dependent that points at a namespaced
kind keeps the dependent alive. A reference to a kind the server does not serve (any more)
keeps the dependent and is looked at again every `retry_delay` (at least 5 s), like kube's
collector retries an owner it cannot resolve; an owner the collector saw deleted is absent
even when its kind is gone (a custom object deleted with its CRD), so its dependents go.
- background: a dependent whose owners are all absent is deleted (propagationPolicy
  Background, so chains cascade); a dependent with some solid owners just loses the dangling
  references.
- foreground: an owner with deletionTimestamp and the `foregroundDeletion` finalizer gets its
  dependents deleted (foreground too); once no dependent with `blockOwnerDeletion: true` is
  left, the finalizer is removed and the server drops the owner.
- orphan: an owner with the `orphan` finalizer has its reference removed from every
  dependent, then the finalizer is removed.
Dependents are found through an index owner-uid -> dependents built from store events and
rebuilt on every resync. Invariant: level-triggered; every decision re-reads the store, the
index only says where to look.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    Simulator,
    deleting,
    name_of,
    ns_of,
    storage_types,
    uid_of,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.clock import Clock

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
GONE_REMEMBERED = 100_000
"""How many deleted objects' uids the collector remembers (owners whose kind went away)."""

#: (group, plural, namespace, name) of a stored object.
ObjKey = tuple[str, str, str, str]
#: ("dep", ObjKey) | ("owner", ObjKey) | ("ref", apiVersion, kind, namespace, name)
GcKey = tuple[Any, ...]


def _refs(obj: Obj) -> list[dict[str, Any]]:
    return list(obj.get("metadata", {}).get("ownerReferences") or ())


def _finalizers(obj: Obj) -> list[str]:
    return list(obj.get("metadata", {}).get("finalizers") or ())


class GarbageCollector(Simulator[GcKey]):
    name = "gc"

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, retry_delay=config.retry_delay,
                         resync_period=config.resync_period)
        self._dependents: dict[str, set[ObjKey]] = {}
        self._owners_of: dict[ObjKey, tuple[str, ...]] = {}
        # uids of objects seen deleted (bounded): an owner whose kind no longer resolves
        # (its CRD went with it) is still known to be gone
        self._gone: OrderedDict[str, None] = OrderedDict()
        self._retry_unresolvable = max(config.retry_delay, 5.0)

    # the index ----------------------------------------------------------------------------
    def _index(self, key: ObjKey, obj: Obj | None) -> bool:
        """Record `key`'s owner uids (None: gone); True if they changed."""
        new = tuple(str(r.get("uid")) for r in _refs(obj)) if obj is not None else ()
        old = self._owners_of.get(key, ())
        if new == old:
            return False
        for uid in old:
            deps = self._dependents.get(uid)
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self._dependents[uid]
        if new:
            self._owners_of[key] = new
            for uid in new:
                self._dependents.setdefault(uid, set()).add(key)
        else:
            self._owners_of.pop(key, None)
        return True

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        key: ObjKey = (rt.group, rt.plural, ns_of(obj), name_of(obj))
        if event == "DELETED":
            self._index(key, None)
            self._remember_gone(uid_of(obj))
            for dep in self._dependents.get(uid_of(obj), ()):
                self.add(("dep", dep))
            for ref in _refs(obj):  # an owner in foreground deletion may now be unblocked
                self.add(("ref", str(ref.get("apiVersion")), str(ref.get("kind")),
                          key[2], str(ref.get("name"))))
            return
        if self._index(key, obj) and _refs(obj):
            self.add(("dep", key))
        if deleting(obj) and {FOREGROUND, ORPHAN} & set(_finalizers(obj)):
            self.add(("owner", key))

    def _remember_gone(self, uid: str) -> None:
        if not uid:
            return
        self._gone[uid] = None
        self._gone.move_to_end(uid)
        if len(self._gone) > GONE_REMEMBERED:
            self._gone.popitem(last=False)

    async def resync(self) -> None:
        self._dependents.clear()
        self._owners_of.clear()
        for rt in storage_types(self.store):
            for obj in self.store.list(rt):
                key: ObjKey = (rt.group, rt.plural, ns_of(obj), name_of(obj))
                self._index(key, obj)
                if _refs(obj):
                    self.add(("dep", key))
                if deleting(obj) and {FOREGROUND, ORPHAN} & set(_finalizers(obj)):
                    self.add(("owner", key))

    async def sync(self, key: GcKey) -> None:
        what = key[0]
        if what == "dep":
            await self._sync_dependent(key[1])
        elif what == "owner":
            await self._sync_owner(key[1])
        else:
            _, api_version, kind, ns, name = key
            rt = self.store.type_for_kind(api_version, kind)
            if rt is not None:
                await self._sync_owner((rt.group, rt.plural, ns if rt.namespaced else "", name))

    def _get(self, key: ObjKey) -> tuple[ResourceType | None, Obj | None]:
        rt = self.store.registry.storage_type((key[0], key[1]))
        if rt is None:
            return None, None
        return rt, self.store.get(rt, key[2] or None, key[3])

    # dependents ---------------------------------------------------------------------------
    def _owner_state(self, dep_rt: ResourceType, dep_ns: str, ref: dict[str, Any]) -> str:
        """"solid", "waiting" (owner in foreground deletion), "absent" or "unresolvable"
        (its kind is not served: retried, like kube's garbage collector does)."""
        if str(ref.get("uid", "")) in self._gone:
            return "absent"
        rt = self.store.type_for_kind(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        if rt is None:
            return "unresolvable"
        if rt.namespaced and not dep_rt.namespaced:
            return "solid"  # a namespaced owner of a cluster-scoped object: never collected
        owner = self.store.get(rt, dep_ns if rt.namespaced else None, str(ref.get("name", "")))
        if owner is None or uid_of(owner) != ref.get("uid"):
            return "absent"
        if deleting(owner) and FOREGROUND in _finalizers(owner):
            return "waiting"
        return "solid"

    async def _sync_dependent(self, key: ObjKey) -> None:
        rt, obj = self._get(key)
        if rt is None or obj is None or deleting(obj):
            return
        refs = _refs(obj)
        if not refs:
            return
        states = [self._owner_state(rt, key[2], ref) for ref in refs]
        if "unresolvable" in states:
            # kube's collector cannot tell whether such an owner exists: it keeps the
            # dependent and looks again later (the kind may come back, or the owner's
            # deletion may become known)
            self.add_after(("dep", key), self._retry_unresolvable)
            states = ["solid" if st == "unresolvable" else st for st in states]
        if "solid" in states:
            if "absent" in states:
                obj["metadata"]["ownerReferences"] = [
                    r for r, s in zip(refs, states, strict=True) if s != "absent"]
                await self.store.update(rt, obj)
                self.log.debug("removed dangling owner references", object=key[3],
                              namespace=key[2])
            return
        policy = "Foreground" if "waiting" in states else "Background"
        self.log.debug("collecting dependent", object=key[3], namespace=key[2],
                      resource=rt.plural, propagation=policy)
        await self.store.delete(rt, key[2] or None, key[3], propagation_policy=policy)

    # owners being deleted -----------------------------------------------------------------
    async def _sync_owner(self, key: ObjKey) -> None:
        rt, owner = self._get(key)
        if rt is None or owner is None or not deleting(owner):
            return
        finalizers = _finalizers(owner)
        uid = uid_of(owner)
        if ORPHAN in finalizers:
            for dep_key in list(self._dependents.get(uid, ())):
                dep_rt, dep = self._get(dep_key)
                if dep_rt is None or dep is None:
                    continue
                refs = _refs(dep)
                kept = [r for r in refs if r.get("uid") != uid]
                if len(kept) != len(refs):
                    dep["metadata"]["ownerReferences"] = kept
                    await self.store.update(dep_rt, dep)
            await self._drop_finalizer(rt, owner, ORPHAN)
        elif FOREGROUND in finalizers:
            blocking = 0
            for dep_key in list(self._dependents.get(uid, ())):
                dep_rt, dep = self._get(dep_key)
                if dep_rt is None or dep is None:
                    continue
                ref = next((r for r in _refs(dep) if r.get("uid") == uid), None)
                if ref is None:
                    continue
                if not deleting(dep):
                    dep = await self.store.delete(dep_rt, dep_key[2] or None, dep_key[3],
                                                  propagation_policy="Foreground")
                if dep is not None and ref.get("blockOwnerDeletion"):
                    blocking += 1
            if blocking == 0:
                await self._drop_finalizer(rt, owner, FOREGROUND)

    async def _drop_finalizer(self, rt: ResourceType, owner: Obj, finalizer: str) -> None:
        owner["metadata"]["finalizers"] = [f for f in _finalizers(owner) if f != finalizer]
        await self.store.update(rt, owner)
        self.log.debug("removed deletion finalizer", object=name_of(owner),
                      namespace=ns_of(owner), finalizer=finalizer)
