"""Ready-made invariants for what most operators promise about their children.

- `created_at_most(owner, child, n)`: no owner ever gets more than `n` children of a kind
  created (by its uid, so an owner deleted and created again is a new one) — "exactly one
  Deployment per Memcached, even across retries, restarts and failovers".
- `live_at_most(owner, child, n)`: at no moment does an owner control more than `n` live
  children of a kind.
- `expected_children(owner, expected, kinds=...)`: at the end, each owner controls exactly
  the children its spec implies (by kind and name, each once), and no child of a kind in
  `kinds` is left controlled by an owner that is gone (an orphan).
- `observes_generation(kind)`: every object's `status.observedGeneration` reaches its
  `metadata.generation` (the controller has acted on its latest spec).

Each returns an invariant (invariants.py) with a readable default name, or `name=`.
Invariant: these read only the facts; none depends on the operator's own reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from asyncop.api import kind_of
from asyncop.testing.chaos.facts import Change, History, KindLike, Obj, Ref, Snapshot, gr
from asyncop.testing.chaos.invariants import Always, AtEnd, Converges, Tracked, Tracker


def _lower(kind: KindLike) -> str:
    return kind_of(kind).kind.lower()


def created_at_most(owner: KindLike, child: KindLike, n: int = 1, *,
                    after_deletion: bool = False, name: str | None = None) -> Tracked:
    """At most `n` objects of `child` are ever created with one `owner` as controller.

    A child created once its owner is deleted (or being deleted) does not count unless
    `after_deletion`: a replica whose cache has not seen the deletion yet may still act on
    the owner, as in any cluster, and the garbage collector removes such a child at once.
    Count it when even that one creation matters (a job that must never run twice)."""
    if n < 0:
        raise ValueError("n must not be negative")
    owner_gr, child_gr = gr(owner), gr(child)
    default = f"at-most-{n}-{_lower(child)}-created-per-{_lower(owner)}"

    class _Created(Tracker):
        def __init__(self) -> None:
            self.counts: Counter[str] = Counter()
            self.deleted: set[str] = set()

        def observe(self, change: Change, history: History) -> Iterable[str]:
            if (change.kind.group, change.kind.plural) == owner_gr:
                if change.type == "DELETED" or change.obj.get("metadata", {}).get(
                        "deletionTimestamp"):
                    self.deleted.add(change.uid)
                return ()
            if change.type != "ADDED" or (change.kind.group, change.kind.plural) != child_gr:
                return ()
            uid = change.owner_uid
            ref = history.ref(uid) if uid is not None else None
            if uid is None or ref is None or (ref.group, ref.plural) != owner_gr:
                return ()
            if uid in self.deleted and not after_deletion:
                return ()
            self.counts[uid] += 1
            if self.counts[uid] <= n:
                return ()
            return [f"{ref}: {self.counts[uid]} {kind_of(child).plural} created "
                    f"({change.ref.name} the last), at most {n}"]

    return Tracked(name or default, _Created)


def live_at_most(owner: KindLike, child: KindLike, n: int = 1, *,
                 name: str | None = None) -> Always:
    """At no moment does one `owner` control more than `n` live objects of `child`."""
    if n < 0:
        raise ValueError("n must not be negative")

    def check(snap: Snapshot) -> Iterable[str]:
        for parent in snap.of(owner):
            kids = snap.children(parent, child)
            if len(kids) > n:
                names = sorted(str(k.get("metadata", {}).get("name")) for k in kids)
                yield (f"{_ref(owner, parent)}: {len(kids)} live {kind_of(child).plural} "
                       f"{names}, at most {n}")

    return Always(name or f"at-most-{n}-live-{_lower(child)}-per-{_lower(owner)}", check)


def expected_children(owner: KindLike,
                      expected: Callable[[Obj, Snapshot], Mapping[KindLike, Iterable[str]]],
                      *, kinds: Sequence[KindLike], name: str | None = None) -> AtEnd:
    """At the end, every live `owner` controls exactly `expected(owner, snapshot)` among the
    children of `kinds` (kind -> names; each once), and none of them is left controlled by
    an owner of this kind that is gone."""
    owner_gr = gr(owner)
    kind_grs = {gr(k): kind_of(k) for k in kinds}

    def check(snap: Snapshot, history: History) -> Iterable[str]:
        owners = {str(o.get("metadata", {}).get("uid")): o for o in snap.live(owner)}
        for uid, by_kind in sorted(snap.owned().items()):
            mine = {k: v for k, v in by_kind.items() if k in kind_grs and v}
            if not mine:
                continue
            parent = owners.get(uid)
            if parent is None:
                ref = history.ref(uid)
                if ref is not None and (ref.group, ref.plural) == owner_gr:
                    names = sorted(str(c.get("metadata", {}).get("name"))
                                   for cs in mine.values() for c in cs)
                    yield f"orphaned children of {ref}: {names}"
                continue
            want = {(gr(k), n) for k, names in expected(parent, snap).items() for n in names}
            have = Counter((k, str(c.get("metadata", {}).get("name")))
                           for k, cs in mine.items() for c in cs)
            for (k, child_name), count in sorted(have.items()):
                plural = kind_grs[k].plural
                if (k, child_name) not in want:
                    yield f"{_ref(owner, parent)}: foreign child {plural}/{child_name}"
                elif count > 1:
                    yield f"{_ref(owner, parent)}: {count} children {plural}/{child_name}"

    return AtEnd(name or f"{_lower(owner)}-children-as-expected", check)


def observes_generation(kind: KindLike, *, within: float | None = None,
                        name: str | None = None) -> Converges:
    """Every live object of `kind` gets `status.observedGeneration == metadata.generation`."""

    def check(obj: Obj, _: Snapshot) -> str | None:
        want = obj.get("metadata", {}).get("generation")
        seen = (obj.get("status") or {}).get("observedGeneration")
        return None if seen == want else f"observedGeneration {seen}, generation {want}"

    return Converges(name or f"{_lower(kind)}-observes-generation", kind, check, within=within)


def _ref(kind: KindLike, obj: Obj) -> Ref:
    return Ref.of(kind_of(kind), obj)
