"""The facts invariants are checked against: what the server committed, and its state now.

Concept: a soak never trusts the operator's word. `History` follows the embedded API
server's own in-process event stream (it survives watch cuts, 410s and restarts; after a
restart without state the soak subscribes it to the new store) and keeps, for every object
ever seen, its `Ref` by uid, creations per kind, and children created per owner uid and
kind. A `Change` is one committed event as invariants see it. A `Snapshot` is the server's
store read in-process at one virtual instant (no HTTP, so checks are unaffected by the
injected faults), with the lookups invariants need (by kind, by name, an owner's controlled
children, the Events about an object).

Invariants: a Snapshot is never mutated after it is built; History only grows (an object
deleted stays known by its uid, so a child can name an owner that is gone).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asyncop.api import Kind, KindSource, kind_of

KindLike = Kind | KindSource
"""A Kind, or a typed resource class (anything with a `KIND`)."""

Obj = dict[str, Any]
"""An object as the server stores it: plain JSON (a copy; mutating it changes nothing)."""

GR = tuple[str, str]  # (group, plural)
EVENT_GR: GR = ("", "events")


def gr(kind: KindLike) -> GR:
    k = kind_of(kind)
    return (k.group, k.plural)


def controller_uid(obj: Obj) -> str | None:
    """The uid in the object's controller owner reference, if it has one."""
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return str(ref.get("uid"))
    return None


@dataclass(frozen=True, slots=True)
class Ref:
    """An object by kind, namespace and name: `Memcached default/mc-1` when printed."""

    group: str
    plural: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, kind: Kind, obj: Obj) -> Ref:
        meta = obj.get("metadata") or {}
        return cls(kind.group, kind.plural, kind.kind, str(meta.get("namespace") or ""),
                   str(meta.get("name") or ""))

    def is_(self, kind: KindLike) -> bool:
        return (self.group, self.plural) == gr(kind)

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else (
            f"{self.kind} {self.name}")


@dataclass(frozen=True, slots=True)
class Change:
    """One committed event: ADDED, MODIFIED or DELETED, the object after it, and when."""

    type: str
    kind: Kind
    obj: Obj
    now: datetime
    """The world's wall clock when the soak saw the event (virtual time)."""

    def is_(self, kind: KindLike) -> bool:
        return (self.kind.group, self.kind.plural) == gr(kind)

    @property
    def ref(self) -> Ref:
        return Ref.of(self.kind, self.obj)

    @property
    def uid(self) -> str:
        return str((self.obj.get("metadata") or {}).get("uid") or "")

    @property
    def owner_uid(self) -> str | None:
        """The uid of the object's controller (its controller owner reference)."""
        return controller_uid(self.obj)


@dataclass
class History:
    """What the server committed, from its event stream, by uid (survives a wipe)."""

    refs: dict[str, Ref] = field(default_factory=dict)
    """uid -> the object it named (every object ever seen)."""
    creations: Counter[GR] = field(default_factory=Counter)
    children: Counter[tuple[str, GR]] = field(default_factory=Counter)
    """(owner uid, child group/plural) -> children ever created with that controller."""
    events: int = 0

    def record(self, change: Change) -> None:
        self.events += 1
        uid = change.uid
        if uid and change.kind.plural != "events":  # an Event owns nothing: not kept
            self.refs[uid] = change.ref
        if change.type == "ADDED":
            key = (change.kind.group, change.kind.plural)
            self.creations[key] += 1
            owner = change.owner_uid
            if owner is not None:
                self.children[(owner, key)] += 1

    def ref(self, uid: str) -> Ref | None:
        """The object that had this uid, live or gone."""
        return self.refs.get(uid)

    def created(self, kind: KindLike) -> int:
        """How many objects of `kind` were ever created."""
        return self.creations[gr(kind)]

    def children_created(self, owner_uid: str, kind: KindLike) -> int:
        """How many objects of `kind` were ever created with `owner_uid` as controller."""
        return self.children[(owner_uid, gr(kind))]


def _deleting(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


class Snapshot:
    """The objects of the followed kinds (all namespaces, Events included) at `now`."""

    def __init__(self, objects: dict[GR, list[Obj]], now: datetime, *,
                 kinds: dict[GR, Kind] | None = None) -> None:
        self.objects = objects
        self.now = now
        self.kinds = kinds or {}
        self._owned: dict[str, dict[GR, list[Obj]]] | None = None

    def of(self, kind: KindLike) -> list[Obj]:
        """Every object of `kind`, deleting ones included."""
        return self.objects.get(gr(kind), [])

    def live(self, kind: KindLike) -> list[Obj]:
        """The objects of `kind` that are not being deleted."""
        return [o for o in self.of(kind) if not _deleting(o)]

    def get(self, kind: KindLike, name: str, namespace: str = "") -> Obj | None:
        for obj in self.of(kind):
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "") == namespace:
                return obj
        return None

    def owned(self) -> dict[str, dict[GR, list[Obj]]]:
        """owner uid -> child group/plural -> the live objects it controls."""
        if self._owned is None:
            out: dict[str, dict[GR, list[Obj]]] = defaultdict(lambda: defaultdict(list))
            for key, objs in self.objects.items():
                if key == EVENT_GR:
                    continue
                for obj in objs:
                    owner = controller_uid(obj)
                    if owner is not None and not _deleting(obj):
                        out[owner][key].append(obj)
            self._owned = out
        return self._owned

    def children(self, owner: Obj, kind: KindLike) -> list[Obj]:
        """The live objects of `kind` whose controller is `owner` (by uid)."""
        uid = str((owner.get("metadata") or {}).get("uid") or "")
        return list(self.owned().get(uid, {}).get(gr(kind), []))

    def events_about(self, obj: Obj, *, reason: str | None = None) -> list[Obj]:
        """The Events whose involvedObject (or regarding) is `obj`, by uid."""
        uid = (obj.get("metadata") or {}).get("uid")
        out = []
        for event in self.objects.get(EVENT_GR, []):
            about = event.get("involvedObject") or event.get("regarding") or {}
            if about.get("uid") == uid and (reason is None or event.get("reason") == reason):
                out.append(event)
        return out
