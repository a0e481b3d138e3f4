"""The fast decoding walk: the happy path of `walker`, with no bookkeeping at all.

Most bodies are well-typed and have no unknown field: `fast` checks that in a tight loop
(type checks inlined for the common leaves, no paths, no error texts), drops `null` struct
fields and passes quantities through the hook, and returns the number of object keys it
walked (`walker` compares it with the body's key tokens to spot duplicate keys). Anything
else — an unknown field, a wrong type, a value a Go parser refuses, a duplicate-marked
object — raises `Slow` and the full walk (`walker._Full`) decodes the object again with
kube's semantics and words. The type tags are imported by name, not read as `gotypes.X`
as the slower walks do: a module attribute lookup per node costs this loop about 5%.

The parts of a pod spec that every replica of a workload repeats (`REPEATED`: probes,
resources, ports, mounts, volumes, tolerations, env sources …) are walked once per distinct
JSON text: a part the walk accepted and left unchanged is remembered (text and node → its
key count, `knownvalid`'s key rules: no `null`, nothing orjson writes ambiguously) and
the same text is accepted again at the cost of one encoding. A container is remembered
the same way outside its `env` (`_container`: replicas differ in env values, not in the
rest), and its env walked every time. A part is remembered only if its quantities are
canonical already: the walk counts the quantities `canonical.canonicalize` would rewrite
(`rewritten_seen`), and a body whose walk counted none needs no canonical walk. A whole pod
spec (a Pod's, a template's) is remembered the same way by its skeleton, the spec with its
plain env vars left out (`_pod_spec`): replicas that differ only in env values decode in
one encoding and one lookup.
Invariant: `fast` accepts only what Go's decoder accepts.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import orjson

from asyncop.apiserver.builtin.goerrors import time_error
from asyncop.apiserver.builtin.gotypes import (
    ANY,
    BOOL,
    BYTES,
    FLOAT,
    INT,
    INT32,
    INT64,
    INT_OR_STRING,
    LIST,
    MAP,
    MICROTIME,
    QUANTITY,
    STRING,
    STRUCT,
    TIME,
    Node,
)
from asyncop.apiserver.builtin.gotypes import INT32_LIMIT as _I32
from asyncop.apiserver.builtin.gotypes import INT64_LIMIT as _I64
from asyncop.apiserver.builtin.knownvalid import EXACT, KnownCounts, memory_key
from asyncop.apiserver.builtin.quantity import QuantityError, canonical, parse_error
from asyncop.apiserver.builtin.quantityhook import canonical_quantity
from asyncop.apiserver.builtin.specmemo import MAX_SPEC_KEY_BYTES, MAX_SPECS, skeleton

__all__ = ["REPEATED", "REPEATED_ITEMS", "Slow", "count_keys", "fast", "quantity_state",
           "rewritten_seen"]

_dumps = orjson.dumps
_B64_CANONICAL = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


class Slow(Exception):
    """The fast walk met something it does not handle: the full walk takes over."""


#: Go types (`Node[1]`) of the parts replicas repeat: walked once per distinct text
REPEATED = frozenset({
    "v1.Probe", "v1.Lifecycle", "v1.ResourceRequirements", "v1.SecurityContext",
    "v1.EnvVarSource", "[]v1.EnvFromSource", "[]v1.ContainerPort", "[]v1.VolumeMount",
    "[]v1.Volume", "[]v1.Toleration", "v1.Affinity", "v1.PodSecurityContext",
    "[]v1.TopologySpreadConstraint", "[]v1.LocalObjectReference"})
#: Go types of list items walked once per distinct text when not made of plain fields only
#: (env vars with a source: `POD_NAME` from `metadata.name` in every replica)
REPEATED_ITEMS = frozenset({"v1.EnvVar"})
_CLEAN = KnownCounts()


def _remembered(value: Any, node: Node) -> int:
    """`fast(value, node)`, answered from memory for a text walked before (trees are
    compiled once and kept, so a node's id is stable)."""
    try:
        text = _dumps(value, option=EXACT)
    except TypeError:
        return fast(value, node)
    key = (text, id(node))
    n = _CLEAN.get(key)
    if n is None:
        rewritten = _REWRITTEN[0]
        n = fast(value, node)
        # rememberable, unchanged by the walk, and its quantities canonical already
        if memory_key(value, id(node)) == key and _REWRITTEN[0] == rewritten:
            _CLEAN.remember(key, n)
    return n


_CONTAINERS = KnownCounts()


def _container(value: Any, node: Node) -> int:
    """`fast(value, node)` for a container (`v1.Container`): its fields other than `env`
    answered from memory when a container with the same text outside env was walked
    before and left unchanged (replicas repeat their containers; env values differ), its
    env walked every time."""
    if type(value) is not dict:
        return fast(value, node)
    try:
        text = _dumps({k: v for k, v in value.items() if k != "env"}, option=EXACT)
    except TypeError:
        return fast(value, node)
    key = (text, id(node))
    n = _CONTAINERS.get(key)
    if n is not None:
        env = value.get("env", _ABSENT)
        if env is _ABSENT:
            return n
        if type(env) is list:
            return n + 1 + fast(env, node[2]["env"])  # the "env" key and its items
        return fast(value, node)  # (a null env: the walk drops it)
    rewritten = _REWRITTEN[0]
    n = fast(value, node)
    rest = {k: v for k, v in value.items() if k != "env"}
    # rememberable, unchanged by the walk, its quantities canonical (as `_remembered`)
    if memory_key(rest, id(node)) == key and _REWRITTEN[0] == rewritten:
        _CONTAINERS.remember(key, fast(rest, node))  # walking it again counts its keys
    return n


_ABSENT = object()

#: pod specs remembered by skeleton, bounded as validation's are (`specmemo.MAX_SPECS` keys
#: of at most `specmemo.MAX_SPEC_KEY_BYTES`)
_SPECS: dict[tuple[bytes, tuple[int, ...], int], int] = {}


def _pod_spec(value: Any, node: Node) -> int:
    """`fast(value, node)` for a pod spec (`v1.PodSpec`: a Pod's, a template's), answered
    from memory for a spec whose skeleton was walked before and left unchanged.

    Replicas repeat one spec and differ in env var values: the skeleton is the spec with
    every *plain* env var — an object of exactly the two keys `name` and `value`, both
    strings — left out of its list, and how many each list had (`specmemo.skeleton`). Go's decoder
    accepts a plain var whatever its strings hold and changes nothing in it, and it counts
    two keys: so every spec with the same skeleton decodes the same (accepted, unchanged,
    the same keys), whatever its plain vars' names and values and wherever they stand (a
    position only shows in an error, and a spec with one is never remembered). Everything
    else — other vars, the containers outside env, the spec outside its containers — is in
    the text verbatim. Remembered only when the walk rewrote nothing (no `null` dropped:
    the text would differ; no quantity `canonicalize` would rewrite), the text holds no
    `null` and is at most `MAX_SPEC_KEY_BYTES` long."""
    shape = skeleton(value)
    if shape is None:
        return fast(value, node)
    text, counts, plain = shape
    key = (text, counts, id(node))
    n = _SPECS.get(key)
    if n is not None:
        return n + 2 * plain
    rewritten = _REWRITTEN[0]
    n = fast(value, node)
    if _REWRITTEN[0] == rewritten and len(text) <= MAX_SPEC_KEY_BYTES \
            and b"null" not in text and skeleton(value) == shape:
        if len(_SPECS) >= MAX_SPECS:
            _SPECS.clear()
        _SPECS[key] = n - 2 * plain
    return n


def fast(value: Any, node: Node) -> int:
    tag = node[0]
    if tag == STRUCT:
        if type(value) is not dict:
            raise Slow
        fields = node[2]
        simple = node[4]
        n = len(value)
        nulls = None
        for key, item in value.items():
            plain = simple.get(key)
            if plain is not None and type(item) is plain:
                if plain is str or plain is bool:
                    continue
                if plain is int:
                    if -_I32 <= item < _I32:  # int64 fields beyond: the full walk decides
                        continue
                elif plain is list:
                    for text in item:
                        if type(text) is not str:
                            raise Slow
                    continue
                else:  # a map of strings
                    for text in item.values():
                        if type(text) is not str:
                            raise Slow
                    n += len(item)
                    continue
            sub = fields.get(key)
            if sub is None:
                raise Slow
            if item is None:
                nulls = [key] if nulls is None else [*nulls, key]
                continue
            st = sub[0]
            if st == STRING:
                if type(item) is not str:
                    raise Slow
            elif st == INT32:
                if type(item) is not int or not -_I32 <= item < _I32:
                    raise Slow
            elif st == BOOL:
                if type(item) is not bool:
                    raise Slow
            elif st == QUANTITY:
                value[key] = _fast_quantity(item)
            elif sub[1] in REPEATED:
                n += _remembered(item, sub)
            elif sub[1] == "v1.PodSpec":
                n += _pod_spec(item, sub)
            else:
                n += fast(item, sub)
        if nulls is not None:
            for key in nulls:
                del value[key]
        return n
    if tag == LIST:
        if type(value) is not list:
            raise Slow
        sub = node[2]
        st = sub[0]
        n = 0
        if st == STRING:
            for item in value:
                if type(item) is not str:
                    raise Slow
        elif st == QUANTITY:
            for i, item in enumerate(value):
                value[i] = _fast_quantity(item)
        elif st == STRUCT:  # items made of plain fields only are checked right here
            if sub[1] == "v1.Container":
                for item in value:
                    n += _container(item, sub)
                return n
            simple = sub[4]
            walk = _remembered if sub[1] in REPEATED_ITEMS else fast
            for item in value:
                if type(item) is dict:
                    for key, field in item.items():
                        plain = simple.get(key)
                        if plain is str:  # the common case first
                            if type(field) is str:
                                continue
                            break
                        if type(field) is not plain or (plain is int and \
                                not -_I32 <= field < _I32) or plain is list or plain is dict:
                            break
                    else:
                        n += len(item)
                        continue
                elif item is None:
                    raise Slow
                n += walk(item, sub)
        else:
            for item in value:
                if item is None:
                    raise Slow
                n += fast(item, sub)
        return n
    if tag == MAP:
        if type(value) is not dict:
            raise Slow
        sub = node[2]
        st = sub[0]
        n = len(value)
        if st == STRING:
            for item in value.values():
                if type(item) is not str:
                    raise Slow
        elif st == QUANTITY:
            for key, item in value.items():
                value[key] = _fast_quantity(item)
        else:
            for item in value.values():
                if item is None:
                    raise Slow
                n += fast(item, sub)
        return n
    if tag == STRING:
        if type(value) is not str:
            raise Slow
    elif tag in (INT64, INT):
        if type(value) is not int or not -_I64 <= value < _I64:
            raise Slow
    elif tag == INT32:
        if type(value) is not int or not -_I32 <= value < _I32:
            raise Slow
    elif tag == BOOL:
        if type(value) is not bool:
            raise Slow
    elif tag == FLOAT:
        if type(value) is not int and type(value) is not float:
            raise Slow
    elif tag == INT_OR_STRING:
        if type(value) is not str and (type(value) is not int or not -_I32 <= value < _I32):
            raise Slow
    elif tag == TIME or tag == MICROTIME:
        if type(value) is not str or time_error(value, node[2]):
            raise Slow
    elif tag == BYTES:
        if type(value) is not str or not _B64_CANONICAL.fullmatch(value):
            raise Slow
    elif tag == ANY:
        return count_keys(value)
    else:  # QUANTITY outside a container: only at the root, never in a kind
        raise Slow
    return 0


INVALID, STABLE, REWRITTEN = 0, 1, 2


@functools.lru_cache(maxsize=4096)
def quantity_state(text: str) -> int:
    """Quantities repeat (`100m`, `128Mi`): kube's parse check, memoised, and whether
    `canonical.canonicalize` would leave the text as it is (STABLE: already canonical, or
    a form it cannot write) or rewrite it (REWRITTEN: `1024Mi`, `0.5`)."""
    if parse_error(text.strip()) is not None:
        return INVALID
    try:
        return STABLE if canonical(text) == text else REWRITTEN
    except QuantityError:
        return STABLE


_REWRITTEN = [0]  # quantities the walk accepted that canonicalize would rewrite (a count)


def rewritten_seen() -> int:
    """How many accepted quantities `canonicalize` would rewrite the walk has met so far
    (compare before and after a walk: equal means every quantity it met is canonical)."""
    return _REWRITTEN[0]


def _fast_quantity(value: Any) -> Any:
    if type(value) is str:
        state = quantity_state(value)
        if state:
            if state == REWRITTEN:
                _REWRITTEN[0] += 1
            return canonical_quantity(value)
    elif type(value) is int or type(value) is float:
        _REWRITTEN[0] += 1  # (a number is written as a string)
        return canonical_quantity(value)
    raise Slow


def count_keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(count_keys(v) for v in value.values()
                                if isinstance(v, dict | list))
    if isinstance(value, list):
        return sum(count_keys(v) for v in value if isinstance(v, dict | list))
    return 0
