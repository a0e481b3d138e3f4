"""Store: the informer's cache of objects keyed by `namespace/name`, with named indexes.

Asyncio-only (no locks): it is written by one Informer and read by anyone on the same event
loop, so every method is synchronous and sees a consistent state. Built-in indexes are
`namespace` (the object's namespace, "" for cluster-scoped objects) and `owner_uid` (the uids
of its ownerReferences); more can be passed as `indexers={name: fn(obj) -> [values]}`.

Invariant: the dicts returned by `get`, `list` and `by_index` are the cached objects
themselves; callers must never mutate them (copy with `asyncop.api.deep_copy` first).
Every index always agrees with the stored objects: index functions must be pure functions
of the object (as client-go requires), since a replaced or deleted object is taken out of
its buckets by running them again on it; no per-key record of its values is kept, so an
index costs one bucket entry per object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from asyncop.api import RawObject, object_key

IndexFunc = Callable[[RawObject], list[str]]
_Keys = list[str]
_Objects = list[RawObject]

NAMESPACE_INDEX = "namespace"
OWNER_UID_INDEX = "owner_uid"


def index_by_namespace(obj: RawObject) -> list[str]:
    return [obj.get("metadata", {}).get("namespace") or ""]


def index_by_owner_uid(obj: RawObject) -> list[str]:
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return [ref["uid"] for ref in refs if ref.get("uid")]


class Store:
    def __init__(self, *, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, RawObject] = {}
        self._indexers: dict[str, IndexFunc] = {
            NAMESPACE_INDEX: index_by_namespace,
            OWNER_UID_INDEX: index_by_owner_uid,
        }
        if indexers:
            self._indexers.update(indexers)
        # index name -> value -> keys (a dict used as an ordered set: smaller than a set)
        self._indices: dict[str, dict[str, dict[str, None]]] = {n: {} for n in self._indexers}

    # -- reads --------------------------------------------------------------------------------

    def get(self, key: str) -> RawObject | None:
        """The cached object (do not mutate it), or None."""
        return self._items.get(key)

    def list(self) -> list[RawObject]:
        return list(self._items.values())

    def keys(self) -> _Keys:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def index_names(self) -> _Keys:
        return list(self._indexers)

    def by_index(self, name: str, value: str) -> _Objects:
        """Objects filed under `value` in index `name` (KeyError for an unknown index)."""
        keys = self._indices[name].get(value)
        if not keys:
            return []
        return [self._items[k] for k in keys]

    def keys_by_index(self, name: str, value: str) -> _Keys:
        return list(self._indices[name].get(value, ()))

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        """Add an index after creation; existing objects are indexed at once."""
        if name in self._indexers:
            raise ValueError(f"index {name!r} already exists")
        self._indexers[name] = fn
        self._indices[name] = {}
        for key, obj in self._items.items():
            self._file(name, fn, key, obj)

    # -- writes -------------------------------------------------------------------------------

    def add(self, obj: RawObject) -> RawObject | None:
        """Insert or replace; returns the previous object under the same key, if any."""
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name, fn in self._indexers.items():
            self._file(name, fn, key, obj)
        return old

    update = add

    def delete(self, obj_or_key: RawObject | str) -> RawObject | None:
        """Remove by object or key; returns the removed object, if it was there."""
        key = obj_or_key if isinstance(obj_or_key, str) else object_key(obj_or_key)
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def replace(self, objs: Iterable[RawObject]) -> None:
        """Make the store hold exactly `objs` (no events; the Informer computes those)."""
        self._items = {}
        self._indices = {n: {} for n in self._indexers}
        for obj in objs:
            self.add(obj)

    # -- index upkeep -------------------------------------------------------------------------

    def _file(self, name: str, fn: IndexFunc, key: str, obj: RawObject) -> None:
        values = fn(obj)
        if not values:
            return
        index = self._indices[name]
        for value in values:
            bucket = index.get(value)
            if bucket is None:
                index[value] = {key: None}
            else:
                bucket[key] = None

    def _unindex(self, key: str, old: RawObject) -> None:
        """Take `key` out of the buckets `old` (the object stored under it) is filed in: the
        index functions run again on it, as client-go's indexer does (they are pure, and a
        cached object never changes), so no per-key record of its values is kept."""
        for name, fn in self._indexers.items():
            values = fn(old)
            if not values:
                continue
            index = self._indices[name]
            for value in values:
                bucket = index.get(value)
                if bucket is not None:
                    bucket.pop(key, None)
                    if not bucket:
                        del index[value]
