"""A workload made from a project's samples: copies of each, changed and replaced at random.

Concept: `from_samples(directory)` reads every YAML document under `directory` (as `asyncop
run --apply` does; `asyncop init` projects keep theirs in `config/samples/`). `populate`
creates `copies` of each sample (named `<name>-0`, `<name>-1`, ...); then each op is either
a *change* (weight 3) of one copy's spec or a *churn* (weight 1): one copy deleted and a new
copy created under a new name.

A change is `vary[kind](rng, obj)` — a patch merged into the spec — when the scenario says
how to vary that kind. Otherwise it is drawn from the kind's own schema (the CRD the server
validates with): one scalar field under `spec` (up to three levels deep) that can be given
a valid value without guessing — an integer or number within its bounds (at most 5 above
the minimum, so replica counts stay small), a boolean, or a string enum — gets a new
random value. A kind without such a field gets an annotation changed instead (no new
generation).

Invariants: every random choice comes from the workload's seeded stream; a sample is never
mutated (copies are); a change the server refuses is counted (`World.refused`), not fatal.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from asyncop.api import kind_of
from asyncop.testing.chaos.facts import KindLike, Obj, Ref
from asyncop.testing.chaos.world import Workload, World

SpecChange = Callable[[random.Random, Obj], Mapping[str, Any]]
"""`vary(rng, obj) -> patch`: fields merged into the object's spec."""

TOUCHED = "chaos.asyncop.io/touched"
MAX_SPAN = 5


def load_samples(directory: Path | str) -> list[Obj]:
    """Every YAML document under `directory` (sorted files; `List`s unfolded)."""
    root = Path(directory)
    if not root.is_dir():
        raise ValueError(f"{root}: no such directory of samples")
    docs: list[Obj] = []
    for file in sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml")):
        try:
            loaded = list(yaml.safe_load_all(file.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ValueError(f"cannot read {file}: {str(exc).splitlines()[0]}") from None
        for doc in loaded:
            if not doc:
                continue
            listed = isinstance(doc, dict) and doc.get("kind") == "List"
            items = doc.get("items") if listed else [doc]
            for item in items or []:
                meta = item.get("metadata") if isinstance(item, dict) else None
                if not (isinstance(meta, dict) and meta.get("name") and item.get("kind")
                        and item.get("apiVersion")):
                    raise ValueError(f"{file}: a sample needs apiVersion, kind and "
                                     "metadata.name")
                docs.append(item)
    return docs


def _leaves(schema: Any, path: tuple[str, ...], depth: int,
            out: list[tuple[tuple[str, ...], dict[str, Any]]]) -> None:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return
    for key, sub in sorted(props.items()):
        if not isinstance(sub, dict) or sub.get("x-kubernetes-int-or-string"):
            continue
        kind = sub.get("type")
        if kind == "object" and depth < 2:
            _leaves(sub, (*path, key), depth + 1, out)
        elif kind in ("integer", "number") and "multipleOf" not in sub:
            out.append(((*path, key), sub))
        elif kind == "boolean":
            out.append(((*path, key), sub))
        elif kind == "string" and isinstance(sub.get("enum"), list) and all(
                isinstance(v, str) for v in sub["enum"]) and sub["enum"]:
            out.append(((*path, key), sub))


def _value(rng: random.Random, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "string":
        return rng.choice(schema["enum"])
    low = schema.get("minimum", 0)
    low = low if isinstance(low, int | float) and not isinstance(low, bool) else 0
    high = schema.get("maximum", low + MAX_SPAN)
    high = high if isinstance(high, int | float) and not isinstance(high, bool) else low + MAX_SPAN
    if kind == "integer":
        lo = int(low) + (1 if schema.get("exclusiveMinimum") is True else 0)
        hi = min(int(high) - (1 if schema.get("exclusiveMaximum") is True else 0), lo + MAX_SPAN)
        return rng.randint(lo, max(lo, hi))
    return round(rng.uniform(float(low), min(float(high), float(low) + MAX_SPAN)), 2)


def schema_change(rng: random.Random, obj: Obj,
                  schema: dict[str, Any] | None) -> Callable[[Obj], None]:
    """A random valid change of one scalar spec field (or an annotation), as a function."""
    leaves: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    spec = ((schema or {}).get("properties") or {}).get("spec")
    _leaves(spec, ("spec",), 0, leaves)
    if not leaves:
        stamp = str(rng.randrange(10**9))

        def touch(o: Obj) -> None:
            o.setdefault("metadata", {}).setdefault("annotations", {})[TOUCHED] = stamp
        return touch
    path, sub = rng.choice(leaves)
    value = _value(rng, sub)

    def put(o: Obj) -> None:
        node = o
        for key in path[:-1]:
            nxt = node.get(key)
            if not isinstance(nxt, dict):
                nxt = node[key] = {}
            node = nxt
        node[path[-1]] = value
    return put


def from_samples(directory: Path | str, *, copies: int = 3, per_second: float = 1.0,
                 vary: Mapping[KindLike, SpecChange] | None = None) -> Workload:
    """Copies of each sample under `directory`, changed (3) and replaced (1) at random."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    samples = load_samples(directory)
    varies = {(kind_of(k).api_version, kind_of(k).kind): fn for k, fn in (vary or {}).items()}
    origin: dict[Ref, Obj] = {}  # each live copy -> its sample
    serial = [0]

    async def create_copy(world: World, sample: Obj, suffix: str) -> None:
        body = copy.deepcopy(sample)
        body["metadata"]["name"] = f"{sample['metadata']['name']}-{suffix}"
        for key in ("uid", "resourceVersion", "creationTimestamp", "generation"):
            body["metadata"].pop(key, None)
        made = await world.create(body)
        ref = None if made is None else world.ref(made)
        if ref is not None:
            origin[ref] = sample

    async def populate(world: World) -> None:
        origin.clear()
        serial[0] = 0
        for sample in samples:
            for i in range(copies):
                await create_copy(world, sample, str(i))

    def mine(world: World) -> list[Ref]:
        return sorted((r for r in origin if r in world.desired), key=str)

    async def change(world: World) -> None:
        refs = mine(world)
        if not refs:
            return
        ref = world.rng.choice(refs)
        body, kind = world.desired[ref], world.kind(ref)
        fn = varies.get((str(body.get("apiVersion")), str(body.get("kind"))))
        put = (schema_change(world.rng, body, world.schema(kind)) if fn is None
               else _patch(dict(fn(world.rng, body))))
        await world.update(kind, ref.name, put, namespace=ref.namespace)

    async def churn(world: World) -> None:
        refs = mine(world)
        if not refs:
            return
        ref = world.rng.choice(refs)
        sample = origin.pop(ref)
        await world.delete(world.kind(ref), ref.name, namespace=ref.namespace)
        serial[0] += 1
        await create_copy(world, sample, f"c{serial[0]}")

    return Workload(populate=populate, ops={"change": change, "churn": churn},
                    weights={"change": 3, "churn": 1}, per_second=per_second)


def _patch(patch: dict[str, Any]) -> Callable[[Obj], None]:
    def put(o: Obj) -> None:
        o.setdefault("spec", {}).update(copy.deepcopy(patch))
    return put
