"""Compact cached objects: equal parts of objects are stored once (structural sharing).

Kubernetes objects of one kind repeat each other: the pods of one template carry the same
containers, env entries, ports, tolerations and resources, and a new version of an object
repeats most of the old one. `Compactor.share(new, old)` walks `new` against an exemplar
`old` (the previous version of the same object, or the previous object the informer stored)
and puts `old`'s subtree in place of every equal subtree of `new`; short strings that differ
from the exemplar are interned (`sys.intern`), so the common values of all objects (`TCP`,
`IfNotPresent`, image names, label values) exist once, except values that are unique per
object (names, uids, timestamps, IPs: `_UNIQUE`), which would only grow the intern table;
label maps (`labels`, `matchLabels`, `selector`, `nodeSelector`) are stored once per distinct
content in a bounded table of the Compactor's, whatever the exemplar. Keys are shared already
(orjson caches them while parsing).

Invariants:
- lossless: the result is equal to `new` with the same JSON types at every place (an equal
  subtree is taken only when its JSON text is identical too, so `1` never becomes `true`,
  which Python's `==` would allow); nothing is added or dropped;
- reads are unchanged: the result is made of the same plain dicts, lists and strings;
- it relies on the cache's rule that cached objects are never mutated (copy with
  `asyncop.api.deep_copy` first): a shared subtree belongs to several cached objects at once;
- bounded work: every node of `new` is visited at most once, and an equal subtree is
  compared in C (`==`, then its serialised bytes), not walked.

Measured on the pods of bench/memory.py (3.7 KB as served, 26 of 30 env entries the same in
every pod): 15.9 KB of Python objects per parsed pod, 4.9 KB once shared (tracemalloc), for
about as much CPU again as parsing the pod took (42-49 µs against 50-66 µs on the loaded
2-core machine); RSS per cached pod of `asyncop run` went from 18.0 KB to 5.2-5.4 KB.
"""

from __future__ import annotations

import sys
from typing import Any

from orjson import dumps

__all__ = ["INTERN_MAX", "Compactor"]

INTERN_MAX = 48
"""Strings up to this length are interned: names, images, enum values, label values; longer
ones (annotations, certificates, scripts) are almost always unique and are left alone."""

_UNIQUE = frozenset({
    "uid", "resourceVersion", "name", "generateName", "creationTimestamp",
    "deletionTimestamp", "podIP", "ip", "clusterIP", "startTime", "startedAt", "finishedAt",
    "lastTransitionTime", "lastProbeTime", "lastHeartbeatTime", "lastUpdateTime",
    "lastScheduleTime", "lastSuccessfulTime", "renewTime", "acquireTime", "time",
})
"""Keys whose string values are (nearly) unique per object: interning one costs an entry in
the interpreter's table for nothing, so they are only shared with an equal exemplar value
(siblings' timestamps of the same second, an owner's name)."""

_FLAT = frozenset({"labels", "matchLabels", "nodeSelector", "selector"})
"""Keys of small string-to-string maps that recur across objects (label sets): stored once
each, whatever the exemplar (`_canonical`)."""

_FLAT_MAX = 16
"""Label maps of more entries are left to the exemplar."""

_CANON_MAX = 4096
"""How many distinct label maps a Compactor remembers (its table is emptied when full: label
maps that vary per object must not make it grow without bound)."""

_intern = sys.intern
_Flat = tuple[tuple[str, str], ...]


class Compactor:
    """The sharing state of one informer: its table of label maps (the exemplar is passed in
    by the informer: the previous version of the object, or the object stored before it)."""

    __slots__ = ("_canon",)

    def __init__(self) -> None:
        self._canon: dict[_Flat, dict[str, str]] = {}

    def share(self, new: Any, old: Any) -> Any:
        """`new` with every subtree equal to the one at the same place in `old` replaced by
        `old`'s, its label maps by the stored equal ones and its other short strings
        interned; `new` is updated in place (it must be a fresh, unshared object) and
        returned, or `old` when the two are equal."""
        tn = type(new)
        if tn is dict:
            if type(old) is not dict:
                return self._fresh_dict(new)
            if new == old and dumps(new) == dumps(old):
                return old
            for k, v in new.items():
                tv = type(v)
                if tv is str:
                    if len(v) <= INTERN_MAX:
                        o = old.get(k)
                        if type(o) is str and o == v:
                            new[k] = o
                        elif k not in _UNIQUE:
                            new[k] = _intern(v)
                elif tv is dict or tv is list:
                    o = old.get(k)
                    s = self._canonical(v, o) if k in _FLAT and tv is dict \
                        else self.share(v, o)
                    if s is not v:
                        new[k] = s
            return new
        if tn is list:
            if type(old) is not list:
                return self._fresh_list(new)
            if new == old and dumps(new) == dumps(old):
                return old
            n = len(old)
            for i, v in enumerate(new):
                tv = type(v)
                if tv is str:
                    if len(v) <= INTERN_MAX:
                        o = old[i] if i < n else None
                        new[i] = o if type(o) is str and o == v else _intern(v)
                elif tv is dict or tv is list:
                    s = self.share(v, old[i] if i < n else None)
                    if s is not v:
                        new[i] = s
            return new
        if tn is str and len(new) <= INTERN_MAX:
            return _intern(new)
        return new

    def _fresh_dict(self, new: dict[str, Any]) -> dict[str, Any]:
        """No exemplar: intern the short strings, walk the containers."""
        for k, v in new.items():
            tv = type(v)
            if tv is str:
                if len(v) <= INTERN_MAX and k not in _UNIQUE:
                    new[k] = _intern(v)
            elif tv is dict:
                if k in _FLAT:
                    s = self._canonical(v, None)
                    if s is not v:
                        new[k] = s
                else:
                    self._fresh_dict(v)
            elif tv is list:
                self._fresh_list(v)
        return new

    def _fresh_list(self, new: list[Any]) -> list[Any]:
        for i, v in enumerate(new):
            tv = type(v)
            if tv is str:
                if len(v) <= INTERN_MAX:
                    new[i] = _intern(v)
            elif tv is dict:
                self._fresh_dict(v)
            elif tv is list:
                self._fresh_list(v)
        return new

    def _canonical(self, new: dict[str, Any], old: Any) -> Any:
        """A label map: the exemplar's if equal, else the stored one of the same content,
        else `new` (then stored). Only maps of strings qualify (others: `share`)."""
        if len(new) > _FLAT_MAX:
            return self.share(new, old)
        items = []
        for k, v in new.items():
            if type(v) is not str:
                return self.share(new, old)
            items.append((k, _intern(v) if len(v) <= INTERN_MAX else v))
        key = tuple(items)  # order included: the result keeps `new`'s key order
        found = self._canon.get(key)
        if found is not None:
            return found
        if type(old) is dict and tuple(old.items()) == key:
            return old
        if len(self._canon) >= _CANON_MAX:
            self._canon.clear()
        for k, v in items:
            new[k] = v
        self._canon[key] = new
        return new
