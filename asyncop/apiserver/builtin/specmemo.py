"""A pod spec's skeletons: how a replica's whole spec is decoded, and validated, by one lookup.

Two skeletons, one per stage, each keeping every input its stage reads. Decoding
(`fastwalk`) reads a raw body, so its skeleton (`skeleton`) leaves out only *plain* env
vars — exactly `name` and `value`, both strings (`is_plain_var`): Go's decoder accepts one
whatever its strings hold, changes nothing in it and counts two keys — and keeps how many
each env list had; everything else stays verbatim. Validation reads a decoded spec, and
its skeleton is the one below.

Replicas of a workload (and the pods an operator writes over and over) repeat one spec and
differ in env var *values*. `podspec.pod_spec` remembers a spec it found valid (no cause at
all), with its context, by two texts — its skeleton:

- `outside_text`: the spec without `containers` and `initContainers`, verbatim (ephemeral
  containers included; the text `knownvalid` already keys that part by);
- `containers_text`: those two lists as present, each container verbatim but for an `env`
  list, replaced by `[names, sourced]`: `names`, every var's `name` in order; `sourced`,
  every var that has a `valueFrom` key, whole (`value` included), in order — selected by
  the key's presence, so `valueFrom: {}` (falsy, and refused by kube) stays in, and so
  does `valueFrom: null`, which the rules treat as no source (keeping more is safe).

Why the skeleton keeps every input validation reads (the key is complete):
- ValidatePodSpec's rules (`podspec`, and through it `containers`, `probes`, `volumes`,
  `scheduling`, `security`, `resources`) read the spec outside its containers and each
  container outside its `env`: the skeleton holds those verbatim (only the `env` key of a
  container object whose `env` is a list is replaced; a container, a container list or an
  `env` of any other shape is kept as it is). The Pod-only rules folded into the same memo
  (`pods._pod_only`) read `serviceAccountName`, the volumes and the containers' images —
  verbatim too.
- An env var is read by `containers.env` alone (`_names_valid`, `_each_var`,
  `_value_from`; no other rule reaches a container's `env`): its `name` (every var), its
  `valueFrom` (`None` when absent: nothing more is read) and, for a var whose `valueFrom`
  is an object, whether its `value` is non-empty. A decoded EnvVar has no other field.
  So the rules' verdict on an env is a function of the names by position and of the
  sourced vars whole — which `[names, sourced]` is. (A var's position changes only the
  path a cause is reported at; a spec with causes is never remembered.) The two lists are
  separate members, so a name can never be mistaken for a var.
- Nothing else: the context — `is_pod`, `strict_node_values` and the Pod-only rules — is
  part of the key; no rule reads the server's version or any state but its memories of
  valid parts, which change no answer.

Invariants (`knownvalid`'s, for texts of a whole spec): a text is orjson's exact text
(dict order included; subclasses, dates and dataclasses raise, so such a spec has no
skeleton). A spec that is not exactly a `dict` has none; a container that is not is kept
whole, so orjson refuses it. An env var that is not exactly a `dict` gives none: the
skeleton finds the sourced vars with `in`, the rules with dict's own `get`, which agree
on a dict and may not on a subclass; nor does a var without a `name` (kube refuses it).
A key is kept only when no text contains `null` (NaN and the infinities are written so)
and its texts total at most `MAX_SPEC_KEY_BYTES` (longer ones are not looked up either);
a memory is emptied at `MAX_SPECS` keys: at most 2 MiB of text each (`pod_spec` has two:
the valid skeletons, and the outside texts seen valid, which decide whether a skeleton is
worth building). The bench's 30-var pod has 0.5 + 3.1 KB of skeleton; 16 KiB leaves room
for pods of a dozen containers while 128 of them stay within the bound.
"""

from __future__ import annotations

from typing import Any

import orjson

from asyncop.apiserver.builtin.knownvalid import EXACT

__all__ = ["ALL_CONTAINER_LISTS", "CONTAINER_LISTS", "MAX_SPECS", "MAX_SPEC_KEY_BYTES",
           "KnownTexts", "containers_text", "env_lists", "is_plain_var", "outside_text", "skeleton",
           "text_with_envs"]

MAX_SPEC_KEY_BYTES = 16384
MAX_SPECS = 128
CONTAINER_LISTS = ("containers", "initContainers")
_dumps = orjson.dumps
_PLAIN = frozenset({dict})


def outside_text(spec: Any) -> bytes | None:
    """The text of `spec` without its container lists (None: not an exact dict, or a
    value orjson does not write exactly). The same text `knownvalid.memory_key` writes of
    `{k: v for k, v in spec.items() if k not in CONTAINER_LISTS}`."""
    if type(spec) is not dict:
        return None
    outside = spec.copy()
    for kind in CONTAINER_LISTS:
        outside.pop(kind, None)
    try:
        return _dumps(outside, option=EXACT)
    except TypeError:
        return None


def containers_text(spec: dict[str, Any]) -> bytes | None:
    """The text of the container lists present in `spec` (as an object keyed by their
    names) with each container's `env` reduced to `[names, sourced]` (None: a part orjson
    does not write exactly, or an env var that is not exactly a dict)."""
    skeleton = {}
    try:
        for kind in CONTAINER_LISTS:
            if kind in spec:
                items = spec[kind]
                skeleton[kind] = [_container(ctr) for ctr in items] \
                    if type(items) is list else items
        return _dumps(skeleton, option=EXACT)
    except TypeError:
        return None


def _container(ctr: Any) -> Any:
    if type(ctr) is not dict:
        return ctr
    env = ctr.get("env")
    if type(env) is not list:
        return ctr
    if not _PLAIN.issuperset(map(type, env)):  # (a dict subclass's `in` may not be dict's)
        raise TypeError("an env var that is not exactly a dict")
    skeleton = ctr.copy()
    try:
        skeleton["env"] = [[var["name"] for var in env],
                           [var for var in env if "valueFrom" in var]]
    except KeyError:  # a var without a name (refused): no skeleton
        raise TypeError("an env var without a name") from None
    return skeleton


class KnownTexts:
    """Keys made of texts and a context, at most `MAX_SPECS` of them: a key is kept only
    when its texts (its `bytes` members) total at most `MAX_SPEC_KEY_BYTES` and none
    contains `null`. (A set inside, not a set subclass: this module is compiled, and a
    compiled class cannot subclass `set`.)"""

    def __init__(self) -> None:
        self._keys: set[tuple[Any, ...]] = set()

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def clear(self) -> None:
        self._keys.clear()

    def remember(self, key: tuple[Any, ...]) -> None:
        texts = [part for part in key if isinstance(part, bytes)]
        if sum(map(len, texts)) > MAX_SPEC_KEY_BYTES or any(b"null" in t for t in texts):
            return
        if len(self._keys) >= MAX_SPECS:
            self._keys.clear()
        self._keys.add(key)


# --- the decoding skeleton (`fastwalk`): a raw spec, plain env vars left out ------------------

ALL_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def is_plain_var(var: Any) -> bool:
    """An env var of exactly the two keys `name` and `value`, both strings."""
    return type(var) is dict and len(var) == 2 and type(var.get("value")) is str \
        and type(var.get("name")) is str


def skeleton(spec: Any) -> tuple[bytes, tuple[int, ...], int] | None:
    """A raw pod spec's skeleton: its text with the plain env vars left out, the number
    left out of each env list (in order), and their total (None: not exactly a dict, or
    a value orjson does not write exactly)."""
    if type(spec) is not dict:
        return None
    counts: list[int] = []
    envs: list[tuple[str, int, list[Any]]] = []
    for kind, i, env in env_lists(spec):
        rest = [var for var in env if not is_plain_var(var)]
        left_out = len(env) - len(rest)
        counts.append(left_out)
        if left_out:
            envs.append((kind, i, rest))
    text = text_with_envs(spec, envs)
    if text is None:
        return None
    return text, tuple(counts), sum(counts)


def env_lists(spec: dict[str, Any]) -> list[tuple[str, int, list[Any]]]:
    """The env lists of a spec's containers, of every kind, in order: `(kind, i, env)` for
    container `i` of list `kind` when it is exactly a dict whose `env` is a list."""
    out: list[tuple[str, int, list[Any]]] = []
    for kind in ALL_CONTAINER_LISTS:
        items = spec.get(kind)
        if type(items) is list:
            for i, ctr in enumerate(items):
                if type(ctr) is dict:
                    env = ctr.get("env")
                    if type(env) is list:
                        out.append((kind, i, env))
    return out


def text_with_envs(spec: dict[str, Any], envs: list[tuple[str, int, list[Any]]],
                   ) -> bytes | None:
    """orjson's exact text of `spec` with, for each `(kind, i, env)`, the env of container
    `i` of list `kind` written as `env` — `spec` itself unchanged (None: a value orjson
    does not write exactly)."""
    copy = dict(spec) if envs else spec
    for kind, i, env in envs:
        items = copy[kind]
        if items is spec[kind]:
            items = copy[kind] = list(items)
        items[i] = {**items[i], "env": env}
    try:
        return _dumps(copy, option=EXACT)
    except TypeError:
        return None
