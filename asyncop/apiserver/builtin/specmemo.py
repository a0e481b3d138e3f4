"""A pod spec's validation skeleton: how a replica's whole spec is validated by one lookup.

Replicas of a workload (and the pods an operator writes over and over) repeat one spec and
differ in env var *values*. `podspec.pod_spec` remembers a spec it found valid (no cause at
all) by the JSON text of its skeleton — the spec with each container's, init container's and
ephemeral container's `env` list replaced by `[names, sourced]`:

- `names`: every var's `name`, in order;
- `sourced`: every var that has a `valueFrom` key, whole (`value` included), in order —
  selected by the key's presence, so `valueFrom: {}` (falsy, and refused by kube) stays in,
  and so does `valueFrom: null`, which the rules treat as no source (keeping more is safe).

Why the skeleton keeps every input validation reads (the key is complete):
- ValidatePodSpec's rules (`podspec`, and through it `containers`, `probes`, `volumes`,
  `scheduling`, `security`, `resources`) read the spec outside its containers and each
  container outside its `env`: the skeleton holds those verbatim (only the `env` key of a
  container object whose `env` is a list is replaced; a container, a container list or an
  `env` of any other shape is kept as it is). The Pod-only rules folded into the same memo
  (`pods._pod_only`) read `serviceAccountName`, the volumes and the containers' images —
  verbatim too. No rule in `pod_spec` reads an ephemeral container (Pods and templates
  refuse them outside it), so reducing their env keeps more than is read.
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

Invariants (`knownvalid`'s, for texts of a whole spec): the key is orjson's exact text
(dict order included; subclasses, dates and dataclasses raise, so such a spec has no key).
A spec that is not exactly a `dict` has no key; a container that is not is kept whole, so
orjson refuses it. An env var that is not exactly a `dict` gives no key: the rules read it
with dict's own `get` and `in`, and a subclass's could differ. A text containing `null`
(NaN and the infinities are written so) is never remembered. Texts over
`MAX_SPEC_KEY_BYTES` are neither looked up nor kept, and the memory is emptied at
`MAX_SPECS` entries: at most 2 MiB of text. The bench's 30-var pod has a 3.6 KB
skeleton; 16 KiB leaves room for pods of a dozen containers while 128 of them stay
within the bound.
"""

from __future__ import annotations

from collections.abc import Hashable
from itertools import repeat
from typing import Any

import orjson

from asyncop.apiserver.builtin.knownvalid import EXACT

__all__ = ["MAX_SPECS", "MAX_SPEC_KEY_BYTES", "KnownSpecs", "SpecKey", "skeleton_key"]

MAX_SPEC_KEY_BYTES = 16384
MAX_SPECS = 128
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_dumps = orjson.dumps
_get = dict.get
_PLAIN = frozenset({dict})


SpecKey = tuple[bytes, Hashable]


class KnownSpecs(set[SpecKey]):
    """The skeleton keys of pod specs found valid, at most `MAX_SPECS` of them."""

    def remember(self, key: SpecKey | None) -> None:
        if key is None or b"null" in key[0]:
            return
        if len(self) >= MAX_SPECS:
            self.clear()
        self.add(key)


def skeleton_key(spec: Any, context: Hashable) -> SpecKey | None:
    """The key `spec` is remembered by with its context (None: never remembered)."""
    if type(spec) is not dict:
        return None
    skeleton = spec.copy()
    try:
        for kind in _CONTAINER_LISTS:
            items = spec.get(kind)
            if type(items) is list:
                skeleton[kind] = [_container(ctr) for ctr in items]
        text = _dumps(skeleton, option=EXACT)
    except TypeError:  # a var that is not an object; a value orjson does not write exactly
        return None
    if len(text) > MAX_SPEC_KEY_BYTES:
        return None
    return (text, context)


def _container(ctr: Any) -> Any:
    if type(ctr) is not dict:
        return ctr
    env = ctr.get("env")
    if type(env) is not list:
        return ctr
    skeleton = ctr.copy()
    skeleton["env"] = [list(map(_get, env, repeat("name"))),  # (TypeError: a var not an object)
                       [var for var in env if "valueFrom" in var]]
    if not _PLAIN.issuperset(map(type, env)):  # a dict subclass's `in` may not be dict's
        raise TypeError("env var of a dict subclass")
    return skeleton
