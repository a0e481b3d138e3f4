"""NamespaceSimulator: the namespace controller that empties and then finalizes a namespace.

A namespace with deletionTimestamp (status.phase Terminating, set by the server on DELETE) has
every namespaced object in it deleted, for every served resource including custom resources
(one storage version per resource). Objects holding finalizers get a deletionTimestamp and are
waited for; meanwhile the namespace carries the conditions NamespaceContentRemaining and
NamespaceFinalizersRemaining (counts per resource and per finalizer). Once nothing is left, the
`kubernetes` entry is removed from spec.finalizers through the finalize path, and the server
removes the namespace when no finalizer remains. Invariant: level-triggered (every pass lists
the namespace's content again); a deletion in a terminating namespace wakes it up.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from asyncop.api import NotFound
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    Simulator,
    deleting,
    name_of,
    ns_of,
    storage_types,
)
from asyncop.apiserver.simulators.config import SimulatorConfig
from asyncop.clock import Clock, format_time

KUBERNETES_FINALIZER = "kubernetes"


def _resource(rt: ResourceType) -> str:
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


class NamespaceSimulator(Simulator[str]):
    name = "namespaces"

    def __init__(self, store: SimStore, clock: Clock, config: SimulatorConfig) -> None:
        super().__init__(store, clock, retry_delay=config.retry_delay,
                         resync_period=config.resync_period)
        self.rt: ResourceType = store.resolve("", "v1", "namespaces")
        self._terminating: set[str] = set()

    def observe(self, event: str, rt: ResourceType, obj: Obj) -> None:
        if rt.gr == self.rt.gr:
            name = name_of(obj)
            if event == "DELETED":
                self._terminating.discard(name)
            elif deleting(obj):
                self._terminating.add(name)
                self.add(name)
        elif rt.namespaced and event != "ADDED":
            ns = ns_of(obj)
            if ns in self._terminating:
                self.add(ns)

    async def resync(self) -> None:
        for ns in self.store.list(self.rt):
            if deleting(ns):
                self._terminating.add(name_of(ns))
                self.add(name_of(ns))

    async def sync(self, key: str) -> None:
        name = key
        ns = self.store.get(self.rt, None, name)
        if ns is None or not deleting(ns):
            self._terminating.discard(name)
            return
        self._terminating.add(name)
        remaining: Counter[str] = Counter()
        finalizers: Counter[str] = Counter()
        for rt in storage_types(self.store):
            if not rt.namespaced:
                continue
            for item in self.store.list(rt, name):
                if not deleting(item):
                    try:
                        left = await self.store.delete(rt, name, name_of(item),
                                                       propagation_policy="Background")
                    except NotFound:
                        continue
                    if left is None:
                        continue
                    item = left
                remaining[_resource(rt)] += 1
                for finalizer in item.get("metadata", {}).get("finalizers") or ():
                    finalizers[finalizer] += 1
        if remaining:
            await self._report(ns, remaining, finalizers)
            return
        spec_finalizers = list((ns.get("spec") or {}).get("finalizers") or ())
        if KUBERNETES_FINALIZER in spec_finalizers:
            self.log.debug("namespace emptied, finalizing", namespace=name)
            await self.store.finalize_namespace(
                name, [f for f in spec_finalizers if f != KUBERNETES_FINALIZER])

    async def _report(self, ns: Obj, remaining: Counter[str], finalizers: Counter[str]) -> None:
        when = format_time(self.clock.now())
        status = dict(ns.get("status") or {})
        old = {c.get("type"): c for c in status.get("conditions") or ()}
        content = ", ".join(f"{r} has {n} resource instances" for r, n in sorted(remaining.items()))
        wanted = [
            ("NamespaceContentRemaining", "True", "SomeResourcesRemain",
             f"Some resources are remaining: {content}"),
        ]
        if finalizers:
            held = ", ".join(f"{f} in {n} resource instances"
                             for f, n in sorted(finalizers.items()))
            wanted.append(("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                           f"Some content in the namespace has finalizers remaining: {held}"))
        else:
            wanted.append(("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                           "All content-preserving finalizers finished"))
        conditions: list[dict[str, Any]] = [
            c for t, c in old.items() if t not in {w[0] for w in wanted}]
        for ctype, cstatus, reason, message in wanted:
            prev = old.get(ctype)
            if prev and (prev.get("status"), prev.get("reason"), prev.get("message")) == (
                    cstatus, reason, message):
                conditions.append(prev)
            else:
                conditions.append({"type": ctype, "status": cstatus, "lastTransitionTime": when,
                                   "reason": reason, "message": message})
        status["phase"] = "Terminating"
        status["conditions"] = conditions
        if status != ns.get("status"):
            ns["status"] = status
            await self.store.update_status(self.rt, ns)
