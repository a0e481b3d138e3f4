"""Compactor: stored objects share their equal parts (strings, dicts and lists).

A stored object is never mutated (store.py), so two stored objects may hold the very same
string, dict or list wherever their values are equal: the apiVersion and kind of every
object of a resource, a namespace, a creation second, the spec of the pods of one template,
the labels of a Deployment's pods, a status many objects are in. `share(resource, obj, old)`
runs at commit time and puts, inside `obj`, the one instance kept for each such value (its
canonical value) in place of the equal copy, so a value repeated across N objects is held
once instead of N times.

A dict or list is looked up by its JSON text (orjson, in C: equal text is an equal value,
with 1, 1.0, true and -0.0 told apart); a hit replaces the whole subtree at once. A miss
keeps looking inside it, down to `MAX_DEPTH` levels; strings are looked up by value.
Where sharing pays is learnt per resource and per path (`metadata.namespace`, `spec`,
`spec.containers[]`, ...) from the bytes its repeats saved against what its entries for
values seen once cost, over a window of `WINDOW` values (a value found again in the version
being replaced does not count: an object's own history does not make sharing pay). A path of
unique values (a name, a uid, a resourceVersion, a per-object spec) stops looking once its
first `EARLY` values found no repeat and only probes again now and then (`PROBE`), so unique
values cost neither a table entry nor a JSON text. A dict looked into (its own value unique)
whose other children repeat — a container but its env, a pod spec but its containers — looks
those children up as one group (`GROUP_MIN`): found, they all become canonical at once and
only the children whose sharing is off are visited. Canonical values held by nothing but the
tables are dropped by `sweep()`, which runs once the tables have doubled since the last sweep
(CPython's reference counts tell what only a table holds).

Invariants: `share` changes no value (== and types); it only replaces, inside a dict or a
list, a value by an equal one that no reader can tell apart, and never the object itself;
the tables hold only values some stored object, history event or snapshot holds too, plus
what came since the last sweep (a sweep forgets every group).
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

_dumps = orjson.dumps

WINDOW = 1024
"""Values a path sees before it decides whether sharing pays there: whether the bytes its
repeats saved outweigh what its tables' entries for values seen once cost (a string's entry
~50 bytes; a container's, its JSON text and ~100 bytes, while a repeat saves ~5 times its
JSON text: the size of the dicts, lists and strings it is made of)."""

PROBE = 64
"""A path that stopped sharing tries again for this many values, after `OFF_SPAN` values it
skipped or after a sweep (workloads change)."""

OFF_SPAN = 2 * WINDOW

EARLY = 64
"""A path none of whose first this many values was found again stops sharing then, not after
a whole `WINDOW` (names, uids, a per-object spec: the first window is what sharing costs)."""

GROUP_MIN = 6
"""A dict looked into (its own value unique) looks up its shared children as one group when it
has at least this many children: a container's fields but its env, a spec's but its
containers, found again at the cost of one JSON text instead of one lookup per child."""

MAX_DEPTH = 4
"""How deep below the object a miss keeps looking (dicts and lists nested deeper are only
shared as a whole, where their parent was)."""


class _Path:
    """One path of one resource: its children by dict key ("[]" for list items), whether
    sharing pays here (decided per window of values seen), and, for a path of dicts, the path
    of their *group* (the dict's children whose own paths share, looked up as one value)."""

    __slots__ = ("children", "early", "gain", "group", "hits", "off", "off_epoch", "on",
                 "seen", "window")

    def __init__(self) -> None:
        self.children: dict[str, _Path] = {}
        self.on = True
        self.seen = 0
        self.hits = 0  # lookups that found a canonical value (counted until the first decision)
        self.gain = 0  # bytes the repeats saved minus what entries of values seen once cost
        self.window = EARLY
        self.early = True
        self.group: _Path | None = None
        self.off: frozenset[str] = frozenset()  # children whose sharing is off
        self.off_epoch = -1

    def child(self, key: str) -> _Path:
        node = self.children.get(key)
        if node is None:
            node = self.children[key] = _Path()
        return node

    def count(self, gain: int) -> None:
        """One value looked up (`gain`: bytes saved, or < 0 what its new entry costs); at the
        end of a window keep sharing only if it paid."""
        self.seen += 1
        self.gain += gain
        if gain > 0:
            self.hits += 1
        if self.seen >= self.window:
            self.decide()

    def decide(self) -> None:
        """The end of a window: keep sharing only if it paid. The first, `EARLY` values long,
        only stops a path none of whose values was found again (a name, a uid); a path with
        repeats goes on to a whole `WINDOW` before its first decision."""
        if self.early:
            self.early = False
            if self.hits:
                self.window = WINDOW  # (seen and gain carry on into the whole window)
                return
        on = self.gain >= 0
        if on != self.on:
            _EPOCH[0] += 1
        self.on = on
        self.seen = self.gain = 0
        self.window = WINDOW

    def skip(self) -> None:
        """One value not looked up (sharing is off here): probe again after `OFF_SPAN`."""
        self.seen += 1
        if self.seen >= OFF_SPAN:
            self.probe()

    def probe(self) -> None:
        if not self.on:
            _EPOCH[0] += 1
        self.on = True
        self.window = PROBE
        self.seen = self.gain = 0

    def off_children(self) -> frozenset[str]:
        """The names of the children whose sharing is off (kept until some path's decision
        changes: `_EPOCH`)."""
        if self.off_epoch != _EPOCH[0]:
            self.off = frozenset(k for k, c in self.children.items() if not c.on)
            self.off_epoch = _EPOCH[0]
        return self.off


_EPOCH = [0]  # bumped whenever a path's sharing turns on or off


class Compactor:
    def __init__(self) -> None:
        self._roots: dict[object, _Path] = {}
        # The canonical values: one table of strings, one of containers by JSON text (one
        # table each, so a value only the tables hold is held exactly once).
        self._strings: dict[str, str] = {}
        self._shapes: dict[bytes, Any] = {}
        self._canonical: set[int] = set()  # ids of the containers in `_shapes`
        # groups of a dict's shared children by their JSON text -> their canonical values
        # (emptied by every sweep: a group holds values no stored object may hold any more)
        self._groups: dict[bytes, dict[str, Any]] = {}
        self._limit = 65_536

    def share(self, resource: object, obj: dict[str, Any],
              old: dict[str, Any] | None = None) -> None:
        """Put canonical values inside `obj` (an object about to be stored). `old`, the
        version it replaces, keeps finding its own values from counting as repeats."""
        root = self._roots.get(resource)
        if root is None:
            root = self._roots[resource] = _Path()
        self._inside(obj, root, 0, old)
        if len(self._strings) + len(self._shapes) + len(self._groups) > self._limit:
            self.sweep()

    def _inside(self, value: dict[str, Any] | list[Any], node: _Path, depth: int,
                old: Any) -> None:
        """Share the children of a dict or list (in place); `old`: the same place in the
        previous version, if any. A dict with a group (`GROUP_MIN`) looks that up first: found,
        only its children whose sharing is off are visited (`_group_hit`). `_one`'s cases for
        strings and containers are inlined in the dict loop (about forty children per Pod),
        with `_Path.count` and `skip`."""
        strings = self._strings
        if isinstance(value, dict):
            members: dict[str, Any] | None = None
            if len(value) >= GROUP_MIN:
                off = node.off_children()
                # a group: some children off (else the whole dict is what is looked up), and
                # enough of them on to pay for one JSON text
                if off and len(value) - len(off) >= GROUP_MIN:
                    group = node.group
                    if group is None:
                        group = node.group = _Path()
                    if group.on:
                        members = {k: v for k, v in value.items() if k not in off}
                        try:
                            group_text = _dumps(members)
                        except TypeError:  # not JSON (no stored object is; stay safe)
                            members = None
                        else:
                            known = self._groups.get(group_text)
                            if known is not None:
                                self._group_hit(value, node, known, off, depth, old,
                                                group_text)
                                return
                            group.count(-100 - len(group_text))
                    else:
                        group.skip()
            children = node.children
            olds = old if type(old) is dict else None
            shapes = self._shapes
            canonical = self._canonical
            for name, item in value.items():
                child = children.get(name)
                if child is None:
                    child = node.child(name)
                kind = type(item)
                if kind is str:
                    if child.on:
                        found = strings.get(item)
                        if found is None:
                            strings[item] = item
                            gain = -50
                        else:
                            if found is not item:
                                value[name] = found
                            if olds is not None and found is olds.get(name):
                                continue  # the old version's own value: not counted
                            gain = 49 + len(item)
                            child.hits += 1
                        child.seen += 1  # child.count(gain), inlined
                        child.gain += gain
                        if child.seen >= child.window:
                            child.decide()
                    else:  # child.skip(), inlined
                        child.seen += 1
                        if child.seen >= OFF_SPAN:
                            child.probe()
                    continue
                if kind is not dict and kind is not list:
                    continue  # int, float, bool, None: small, immutable
                if id(item) in canonical:
                    continue
                was = olds.get(name) if olds is not None else None
                if child.on:
                    try:
                        text = _dumps(item)
                    except TypeError:  # not JSON (no stored object is; stay safe)
                        continue
                    shape: Any = shapes.get(text)
                    if shape is None:
                        gain = -100 - len(text)
                    elif shape is not was:
                        gain = 5 * len(text)
                        child.hits += 1
                    else:
                        gain = 0
                    if shape is None or shape is not was:
                        child.seen += 1  # child.count(gain), inlined
                        child.gain += gain
                        if child.seen >= child.window:
                            child.decide()
                    if shape is not None:
                        if shape is not item:
                            value[name] = shape
                        continue
                    # a copy of the right size: orjson's own result keeps a 4 KiB buffer
                    shapes[bytes(memoryview(text))] = item
                    canonical.add(id(item))
                else:  # child.skip(), inlined
                    child.seen += 1
                    if child.seen >= OFF_SPAN:
                        child.probe()
                if depth < MAX_DEPTH:
                    self._inside(item, child, depth + 1, was)
            if members is not None:  # the group's canonical members, for the next time
                self._groups[bytes(memoryview(group_text))] = {k: value[k] for k in members}
        else:
            child = node.child("[]")
            if not child.on and depth >= MAX_DEPTH:  # nothing to look up nor look into
                child.seen += len(value)
                if child.seen >= OFF_SPAN:
                    child.probe()
                return
            olds_list = old if type(old) is list else ()
            for i, item in enumerate(value):
                new = self._one(item, child, depth, olds_list[i] if i < len(olds_list) else None)
                if new is not item:
                    value[i] = new

    def _group_hit(self, value: dict[str, Any], node: _Path, found: dict[str, Any],
                   off: frozenset[str], depth: int, old: Any, text: bytes) -> None:
        """`value`'s group was found: its members become the canonical ones at once (their
        own paths are not counted: they stay as they are), and only the children whose
        sharing is off are visited (counted as skipped, and looked into)."""
        for name, item in found.items():
            value[name] = item
        olds = old if type(old) is dict else None
        group = node.group
        assert group is not None
        if olds is None or any(olds.get(name) is not item for name, item in found.items()):
            group.count(5 * len(text))  # (the old version's own group: not counted)
        children = node.children
        for name in off:
            item = value.get(name)
            if item is None:
                continue
            child = children[name]
            child.skip()
            kind = type(item)
            if (kind is dict or kind is list) and depth < MAX_DEPTH \
                    and id(item) not in self._canonical:
                self._inside(item, child, depth + 1, olds.get(name) if olds else None)

    def _one(self, value: Any, node: _Path, depth: int, was: Any) -> Any:
        """The canonical value equal to `value` at `node`, or `value` itself (`was`: the
        previous version's value here)."""
        kind = type(value)
        if kind is str:
            if not node.on:
                node.skip()
                return value
            found = self._strings.get(value)
            if found is None:
                node.count(-50)
            elif found is not was:
                node.count(49 + len(value))
            if found is None:
                self._strings[value] = value
                return value
            return found
        if kind is not dict and kind is not list:
            return value  # int, float, bool, None: small, immutable
        if id(value) in self._canonical:
            return value
        if node.on:
            try:
                text = orjson.dumps(value)
            except TypeError:  # not JSON (no stored object is; stay safe): keep as is
                return value
            shape: Any = self._shapes.get(text)
            if shape is None:
                node.count(-100 - len(text))
            elif shape is not was:
                node.count(5 * len(text))
            if shape is not None:
                return shape
            # a copy of the right size: orjson's own result keeps a 4 KiB buffer
            self._shapes[bytes(memoryview(text))] = value
            self._canonical.add(id(value))
        else:
            node.skip()
        if depth < MAX_DEPTH:
            self._inside(value, node, depth + 1, was)
        return value

    def sweep(self) -> None:
        """Drop canonical values nothing else holds; let every path try sharing again.
        What "nothing else" means is measured, not assumed: a probe entry that only the
        table holds is put in each table and counted the same way as every entry (the
        counts differ between CPython versions, and between interpreted and compiled code)."""
        self._groups.clear()
        shapes = self._shapes
        _add_probe(shapes, self._strings)
        texts = list(shapes)
        counts = [_value_refs(shapes, text) for text in texts]
        only = counts[texts.index(_PROBE_TEXT)]
        for text, count in zip(texts, counts, strict=True):
            if count <= only:
                del shapes[text]
        self._canonical = {id(v) for v in shapes.values()}
        strings = self._strings
        words = list(strings)
        word_counts = [_key_refs(words, i) for i in range(len(words))]
        only = word_counts[words.index(_PROBE_WORD)]
        del words
        for word, count in zip(list(strings), word_counts, strict=True):
            if count <= only:
                del strings[word]
        for root in self._roots.values():
            _reset(root)
        self._limit = max(65_536, 2 * (len(strings) + len(shapes)))
        _EPOCH[0] += 1

    @property
    def entries(self) -> int:
        """Canonical values held (strings and containers), and groups."""
        return len(self._strings) + len(self._shapes) + len(self._groups)


def _reset(node: _Path) -> None:
    """After a sweep: a path that stopped sharing tries again, for a short window."""
    if not node.on:
        node.probe()
    node.seen = node.gain = 0
    if node.group is not None:
        _reset(node.group)
    for child in node.children.values():
        _reset(child)


_PROBE_TEXT = b"\xff"  # not UTF-8: never a JSON text orjson writes
_PROBE_WORD = "\x00asyncop compactor probe"


def _add_probe(shapes: dict[bytes, Any], strings: dict[str, str]) -> None:
    """A container and a string that only the tables hold (no local outlives this call)."""
    shapes[_PROBE_TEXT] = []
    word = _PROBE_WORD[:1] + _PROBE_WORD[1:]  # a new string, not the interned constant
    strings[word] = word


def _value_refs(table: dict[bytes, Any], key: bytes) -> int:
    return sys.getrefcount(table[key])


def _key_refs(words: list[str], i: int) -> int:
    return sys.getrefcount(words[i])
