"""World and Workload: the seeded stream of changes a soak makes, and what it writes with.

Concept: a `Workload` is declared by the user: `populate(world)` creates the first objects,
then every virtual second the soak runs about `per_second` of its `ops` (each picked by
weight with the seeded generator) and then `tidy(world)`. Ops are plain coroutines over a
`World`, which reads and writes the embedded API server's store *in-process* (as the e2e
reliability tests do): the workload's own writes are not subject to the injected HTTP
faults, the replicas' traffic is.

`World` remembers what the workload wants (`desired`: the bodies it created and changed,
applied again after a restart without state, as from a GitOps repository) and when each
object last changed (so a convergence can be timed and bounded). `world.rng` is the
workload's own stream of the seed: the same seed gives the same sequence of ops.

Invariants: a write the server refuses (a 422 for an invalid change, say) changes nothing
the World remembers and is counted in `refused`; an update retries a conflict on a fresh
read (the operator writes the same objects); all times are virtual.
"""

from __future__ import annotations

import asyncio
import copy
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asyncop.api import ApiError, Conflict, Kind, NotFound, kind_of
from asyncop.apiserver import ApiServer
from asyncop.apiserver.core.resources import ResourceType
from asyncop.testing.chaos.clock import PacedClock
from asyncop.testing.chaos.facts import GR, KindLike, Obj, Ref, Snapshot

Op = Callable[["World"], Awaitable[None]]
"""One kind of change: a coroutine that makes it through the World."""


@dataclass(frozen=True, kw_only=True)
class Workload:
    """What the soak does to the world: `populate` once, then `ops` at random, `tidy` after."""

    populate: Op | None = None
    ops: Mapping[str, Op] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)
    """name -> relative weight (default 1)."""
    per_second: float = 2.0
    """Ops per virtual second, on average."""
    tidy: Op | None = None
    """Run after each second's ops (e.g. delete what is finished)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.weights) - set(self.ops))
        if unknown:
            raise ValueError(f"weights name unknown ops: {', '.join(unknown)}")
        if any(not w >= 0 for w in self.weights.values()):
            raise ValueError("op weights must not be negative")
        if not self.per_second >= 0:
            raise ValueError("per_second must not be negative")

    async def step(self, world: World, seconds: float, *,
                   failed: Callable[[str, Exception], None]) -> list[str]:
        """`seconds` of virtual time's worth of ops, each drawn (seeded, by weight) right
        before it runs — an op's own draws come from the same stream, in order — then
        `tidy`; what raises is handed to `failed` (`op 'name'` or `tidy step`, and the
        exception) and the step goes on. Returns the names of the ops run, in order."""
        n = int(self.per_second * seconds + world.rng.random())
        names = [name for name in self.ops if self.weights.get(name, 1.0) > 0]
        weights = [self.weights.get(name, 1.0) for name in names]
        ran: list[str] = []
        for _ in range(n if names else 0):
            name = world.rng.choices(names, weights=weights)[0]
            ran.append(name)
            try:
                await self.ops[name](world)
            except Exception as exc:
                failed(f"op {name!r}", exc)
        if self.tidy is not None:
            try:
                await self.tidy(world)
            except Exception as exc:
                failed("tidy step", exc)
        return ran


class World:
    """The workload's (and the checks') in-process access to the embedded API server."""

    def __init__(self, server: ApiServer, clock: PacedClock, *, rng: random.Random,
                 namespace: str) -> None:
        self.server, self.clock, self.rng, self.namespace = server, clock, rng, namespace
        self.start = clock.monotonic()
        self.desired: dict[Ref, Obj] = {}
        self.changed: dict[Ref, float] = {}
        """object -> virtual monotonic time of its last change (by the workload)."""
        self.due: list[tuple[float, Ref]] = []
        self.ops: Counter[str] = Counter()
        """Writes made, by `verb plural`."""
        self.refused: Counter[str] = Counter()
        self.kinds: dict[GR, Kind] = {}
        """Every kind the soak reads (the followed kinds, and what the workload wrote)."""

    # -- time --------------------------------------------------------------------------------
    def now(self) -> datetime:
        """The wall clock (virtual)."""
        return self.clock.now()

    def elapsed(self) -> float:
        """Virtual seconds since the chaos phase began."""
        return self.clock.monotonic() - self.start

    # -- reading -----------------------------------------------------------------------------
    def _rt(self, kind: KindLike) -> ResourceType | None:
        k = kind_of(kind)
        found: ResourceType | None = self.server.store.registry.resolve(
            k.group, k.version, k.plural)
        return found

    def _rt_of(self, obj: Mapping[str, Any]) -> ResourceType | None:
        found: ResourceType | None = self.server.store.type_for_kind(
            str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        return found

    def objects(self, kind: KindLike, *, namespace: str | None = None) -> list[Obj]:
        """The objects of `kind` on the server now (all namespaces unless given)."""
        rt = self._rt(kind)
        if rt is None:
            return []
        return list(self.server.store.list(rt, namespace))

    def get(self, kind: KindLike, name: str, *, namespace: str | None = None) -> Obj | None:
        """The object on the server now, or None."""
        rt = self._rt(kind)
        if rt is None:
            return None
        return self.server.store.get(rt, namespace if namespace is not None else self.namespace,
                                     name)

    def schema(self, kind: KindLike) -> dict[str, Any] | None:
        """The openAPIV3Schema the server validates `kind` with (custom resources only)."""
        rt = self._rt(kind)
        return None if rt is None else rt.schema

    def names(self, kind: KindLike, *, namespace: str | None = None) -> list[str]:
        """The names of the workload's own objects of `kind` (sorted)."""
        ns = namespace if namespace is not None else self.namespace
        return sorted(r.name for r in self.desired if r.is_(kind) and r.namespace == ns)

    def wanted(self, kind: KindLike, name: str, *, namespace: str | None = None) -> Obj | None:
        """What the workload wants the object to be (its body as created and changed)."""
        k = kind_of(kind)
        ns = (namespace if namespace is not None else self.namespace) if k.namespaced else ""
        return self.desired.get(Ref(k.group, k.plural, k.kind, ns, name))

    def ref(self, obj: Mapping[str, Any]) -> Ref | None:
        """The Ref of an object body (its namespace defaults to the scenario's)."""
        rt = self._rt_of(obj)
        if rt is None:
            return None
        meta = obj.get("metadata") or {}
        return self._ref(rt, str(meta.get("name", "")), meta.get("namespace"))

    def kind(self, ref: Ref) -> Kind:
        """The Kind of an object the soak has seen or written."""
        return self.kinds[(ref.group, ref.plural)]

    def snapshot(self) -> Snapshot:
        objects = {key: self.objects(kind) for key, kind in self.kinds.items()}
        return Snapshot(objects, self.now(), kinds=dict(self.kinds))

    # -- writing -----------------------------------------------------------------------------
    def _ref(self, rt: ResourceType, name: str, namespace: str | None) -> Ref:
        ns = (namespace if namespace is not None else self.namespace) if rt.namespaced else ""
        return Ref(rt.group, rt.plural, rt.kind, ns, name)

    def _kind(self, rt: ResourceType) -> None:
        self.kinds.setdefault((rt.group, rt.plural),
                              Kind(rt.group, rt.version, rt.plural, rt.kind, rt.namespaced))

    async def create(self, obj: Mapping[str, Any]) -> Obj | None:
        """Create `obj` (its namespace defaults to the scenario's); None if refused."""
        rt = self._rt_of(obj)
        if rt is None:
            raise ValueError(f"the server does not serve {obj.get('apiVersion')}/"
                             f"{obj.get('kind')} (is its CRD among the operator's?)")
        body: Obj = copy.deepcopy(dict(obj))
        meta = body.setdefault("metadata", {})
        if rt.namespaced:
            meta.setdefault("namespace", self.namespace)
        ref = self._ref(rt, str(meta.get("name", "")), meta.get("namespace"))
        self._kind(rt)
        try:
            made = await self.server.store.create(rt, body)
        except ApiError:
            self.refused[f"create {rt.plural}"] += 1
            return None
        self.desired[ref] = body
        self.changed[ref] = self.clock.monotonic()
        self.ops[f"create {rt.plural}"] += 1
        return made

    async def update(self, kind: KindLike, name: str, change: Callable[[Obj], None], *,
                     namespace: str | None = None) -> bool:
        """Apply `change` to the live object (re-read on a conflict) and to what the workload
        wants; False if it is gone or the server refuses the change."""
        rt = self._rt(kind)
        if rt is None:
            return False
        ref = self._ref(rt, name, namespace)
        for _ in range(10):  # the operators write too: retry a conflict on a fresh read
            found = self.server.store.get(rt, ref.namespace or None, name)
            if found is None:
                return False
            change(found)  # a copy already
            try:
                await self.server.store.update(rt, found)
            except Conflict:
                await asyncio.sleep(0)
                continue
            except NotFound:
                return False
            except ApiError:
                self.refused[f"update {rt.plural}"] += 1
                return False
            if ref in self.desired:
                change(self.desired[ref])
            self.changed[ref] = self.clock.monotonic()
            self.ops[f"update {rt.plural}"] += 1
            return True
        self.refused[f"update {rt.plural}"] += 1
        return False

    async def delete(self, kind: KindLike, name: str, *, namespace: str | None = None) -> bool:
        """Delete the object (and stop wanting it); False if it was not there."""
        rt = self._rt(kind)
        if rt is None:
            return False
        ref = self._ref(rt, name, namespace)
        self.desired.pop(ref, None)
        self.changed.pop(ref, None)
        self.ops[f"delete {rt.plural}"] += 1
        try:
            await self.server.store.delete(rt, ref.namespace or None, name)
        except ApiError:
            return False
        return True

    def expect_change(self, kind: KindLike, name: str, *, after: float,
                      namespace: str | None = None) -> None:
        """The object's desired state changes by itself `after` virtual seconds (a schedule
        falls due): its convergence is timed and bounded from then."""
        k = kind_of(kind)
        ns = (namespace if namespace is not None else self.namespace) if k.namespaced else ""
        self.due.append((self.clock.monotonic() + after, Ref(k.group, k.plural, k.kind, ns, name)))
        self.due.sort(key=lambda item: item[0])

    # -- for the engine ----------------------------------------------------------------------
    def fall_due(self) -> Iterator[Ref]:
        """The expected changes whose time has come (marked changed now)."""
        now = self.clock.monotonic()
        while self.due and self.due[0][0] <= now:
            _, ref = self.due.pop(0)
            if ref in self.desired:
                self.changed[ref] = now
                yield ref

    async def reapply(self) -> None:
        """After a restart without state: every wanted object again."""
        for ref, body in list(self.desired.items()):
            rt = self._rt_of(body)
            if rt is None:
                continue
            try:
                await self.server.store.create(rt, body)
            except ApiError:
                continue
            self.changed[ref] = self.clock.monotonic()
