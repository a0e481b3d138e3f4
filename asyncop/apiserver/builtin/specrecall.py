"""Recalled pod specs: a Pod's spec, or a workload's pod template spec, defaulted and
validated by one lookup, its parts shared with the one stored before it.

Controllers and operators write the same pod spec over and over (a Deployment per tenant, a
Job per run, a ReplicaSet's pods) and the copies differ, if at all, in the *values* of plain
env vars (`specmemo.is_plain_var`: exactly `name` and `value`, both strings). Defaulting and
validating such a spec again finds what it found the first time, and storing it makes the
compactor find every part of it again. So the defaults ask `recall` first — one memory per
context: `TEMPLATES` (`poddefaults.template_defaults`, validated by `podspec.pod_template`)
and `PODS` (a Pod's create, `pods`: its own defaults and admission included, and the Pod
rules):

- **The key** (`key_of`) is the raw spec's text (orjson's, exact) with each plain
  var written as its name alone. Every input of kube's pod spec defaults and of
  ValidatePodSpec is in it but the plain vars' values: no default touches an EnvVar without
  a `valueFrom`, and the rules read a var's `value` only when it has one (`specmemo`'s
  docstring lists what each rule reads). A var that is not exactly a dict, a text with
  `null` or longer than `specmemo.MAX_SPEC_KEY_BYTES` has no key. The same walk notes
  where the plain vars are: the places a recall puts the caller's back.
- **Remembered** is a spec that was defaulted in full (`defaulted`), then found valid in
  the memory's context (`validated`; a StatefulSet's template, which kube does not
  validate, is never remembered, only recalled): the very dict, which
  goes on to be canonicalised and stored — kept by the memory as stored (a stored object is
  never mutated, store.py), at most `specmemo.MAX_SPECS` of them.
- **Recalled**, a spec with a known key is the remembered one with the caller's plain vars
  put back at their places (same names, same positions: they are in the key): a new dict
  for the spec, for each container list and container holding plain vars and for their env
  lists; every other part is the remembered spec's own. It is what defaulting the caller's
  spec in full gives (defaults leave plain vars as they are), valid as the remembered one
  was (`handed`: its validation is skipped), and already in its
  canonical form (canonicalising it again changes nothing).

Invariants: a recalled spec equals what the full defaults give and gets the full rules'
verdict (`[]`); the memory holds only specs that were defaulted in full and found valid; the
parts shared are never mutated by the write that received them (the Writer stores the spec
or drops it; where store admission hooks, the one place that may change a spec in between,
follow the defaults, the Writer asks for none: `builtin.defaults(recall=False)`, `pause`).
The pending and handed tables are per-write hand-offs keyed by identity (each holds its
dict, so an id is not reused while listed), emptied past `_HANDOFFS` entries.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.specmemo import (
    MAX_SPEC_KEY_BYTES,
    MAX_SPECS,
    env_lists,
    is_plain_var,
    text_with_envs,
)

__all__ = ["PODS", "TEMPLATES", "SpecRecall", "key_of", "pause"]

_HANDOFFS = 32

_Layout = list[tuple[str, int, tuple[int, ...]]]


def key_of(spec: Any) -> tuple[bytes, _Layout] | None:
    """The key of a raw pod spec, and where its plain vars are: `(kind, i, positions)` for
    each container holding some (None: it has no key; see the module docstring)."""
    if type(spec) is not dict:
        return None
    layout: _Layout = []
    envs: list[tuple[str, int, list[Any]]] = []
    for kind, i, env in env_lists(spec):
        names: list[Any] = []
        positions: list[int] = []
        for j, var in enumerate(env):
            if type(var) is not dict:
                return None
            if is_plain_var(var):
                names.append(var["name"])
                positions.append(j)
            else:
                names.append(var)
        if positions:
            layout.append((kind, i, tuple(positions)))
            envs.append((kind, i, names))
    text = text_with_envs(spec, envs)
    if text is None or len(text) > MAX_SPEC_KEY_BYTES or b"null" in text:
        return None
    return text, layout


class SpecRecall:
    """One memory of defaulted, valid pod specs (one per context: templates, Pods)."""

    def __init__(self) -> None:
        self._known: dict[bytes, dict[str, Any]] = {}
        self._pending: dict[int, tuple[bytes, dict[str, Any]]] = {}
        self._handed: dict[int, dict[str, Any]] = {}
        self.recalled = 0
        """Specs answered from memory so far (tests and benchmarks read it)."""
        self.paused = False
        """While set, nothing is recalled or offered (`pause`)."""

    def __len__(self) -> int:
        return len(self._known)

    def recall(self, spec: Any) -> tuple[dict[str, Any] | None, bytes | None]:
        """The defaulted, valid spec for raw `spec` when its key is remembered (else
        None), and the key (None: it has none)."""
        found = None if self.paused else key_of(spec)
        if found is None:
            return None, None
        key, layout = found
        known = self._known.get(key)
        if known is None:
            return None, key
        out = dict(known)
        for kind, i, positions in layout:  # (the known spec's plain vars are at the same
            rebuilt = out[kind]            # places, with the same names: they are in the key)
            if rebuilt is known[kind]:
                rebuilt = out[kind] = list(rebuilt)
            env = spec[kind][i]["env"]
            known_ctr = rebuilt[i]
            merged = list(known_ctr["env"])
            for j in positions:
                merged[j] = env[j]
            rebuilt[i] = {**known_ctr, "env": merged}
        _hand_off(self._handed, id(out), out)
        self.recalled += 1
        return out, key

    def defaulted(self, spec: dict[str, Any], key: bytes) -> None:
        """`spec`, whose raw key was `key`, has just been defaulted in full."""
        _hand_off(self._pending, id(spec), (key, spec))

    def validated(self, spec: Any) -> None:
        """`spec` was found valid in this memory's context: remembered, if it was just
        defaulted in full (defaults leave plain vars as and where they are)."""
        entry = self._pending.pop(id(spec), None)
        if entry is None or entry[1] is not spec:
            return
        if len(self._known) >= MAX_SPECS:
            self._known.clear()
        self._known[entry[0]] = spec

    def handed(self, spec: Any) -> bool:
        """Whether `spec` was recalled from memory (valid: no need to validate it again)."""
        return self._handed.pop(id(spec), None) is spec

    def clear(self) -> None:
        """Forget every spec (and the count of recalls)."""
        self.recalled = 0
        self._known.clear()
        self._handed.clear()
        self._pending.clear()


TEMPLATES = SpecRecall()
"""Workloads' pod template specs (`poddefaults.template_defaults`, `podspec.pod_template`)."""
PODS = SpecRecall()
"""Pods' own specs on create (`pods`: spec, Pod-only defaults and admission; the Pod
rules with `strict_node_values`)."""


def pause(paused: bool) -> None:
    """Recall nothing (and remember nothing) while paused (`builtin.defaults(recall=False)`,
    for the defaults that store admission hooks follow: a hook may change a spec in place,
    and a recalled spec's parts are stored objects' too)."""
    TEMPLATES.paused = PODS.paused = paused


def _hand_off(table: dict[int, Any], key: int, value: Any) -> None:
    if len(table) >= _HANDOFFS:
        table.clear()
    table[key] = value
