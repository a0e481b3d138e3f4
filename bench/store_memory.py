"""The embedded API server's memory per stored object, in-process (bench/README.md, "The
embedded server's memory").

Each case stores N objects through `Store.writer` (decoding, defaults, validation and the
compactor's sharing, as an HTTP create does) and reports the heap the store holds per object:
tracemalloc's traced bytes after `gc.collect()`, less the empty store's (bodies are parsed
from JSON inside the traced part, as a request's are). Cases: Ats with
one schedule for all, 3,600 schedules, every schedule distinct (the At CRD under crds/);
Pods from one template; Pods whose 30 env values are unique to each (bench/apiserver.py's).
Also the compactor's CPU per object at commit (`share`, timed around each call in a second
run without tracemalloc, GC off).

Usage: python bench/store_memory.py [--n 20000] [--only ats,pods]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from apiserver import pod

from asyncop.apiserver.main import apply_crd_dir
from asyncop.apiserver.storage.store import Store
from asyncop.clock import RealClock

CRDS = Path(__file__).resolve().parent.parent / "crds"
AT_GROUP, AT_VERSION = "cnat.programming-kubernetes.info", "v1alpha1"


def at(i: int, schedules: int) -> dict[str, Any]:
    when = datetime.fromtimestamp(2_000_000_000 + i % schedules, UTC)
    schedule = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": f"{AT_GROUP}/{AT_VERSION}", "kind": "At",
            "metadata": {"name": f"at-{i}", "namespace": "bench"},
            "spec": {"schedule": schedule, "command": "true"}}


def template_pod(i: int) -> dict[str, Any]:
    obj = pod(f"p-{i}", 0)  # one template: every pod's spec the same
    obj["metadata"]["annotations"] = {}
    obj["metadata"]["labels"]["pod-template-hash"] = "5d9f8c7b6"
    return obj


def new_store() -> Store:
    store = Store(clock=RealClock())
    apply_crd_dir(store, str(CRDS))
    store.writer.create(store.resolve("", "v1", "namespaces"), {"metadata": {"name": "bench"}})
    return store


def measure(n: int, group: str, version: str, plural: str,
            make: Callable[[int], dict[str, Any]]) -> dict[str, Any]:
    bodies = [orjson.dumps(make(i)) for i in range(n)]  # parsed as a request's body is
    return {"bytes_per_object": _held(bodies, group, version, plural),
            "share_us": _share_time(bodies, group, version, plural)}


def _held(bodies: list[bytes], group: str, version: str, plural: str) -> int:
    """The store's traced heap per object after `gc.collect()`."""
    store = new_store()
    rt = store.resolve(group, version, plural)
    gc.collect()
    tracemalloc.start()
    empty = tracemalloc.get_traced_memory()[0]
    for body in bodies:
        store.writer.create(rt, orjson.loads(body), namespace="bench")
    store.hub.history.clear()  # the watch history holds every event: not the store's own
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - empty
    tracemalloc.stop()
    return round(held / len(bodies))


def _share_time(bodies: list[bytes], group: str, version: str, plural: str) -> float:
    """The compactor's CPU per object at commit (`share`, timed around each call, GC off,
    without tracemalloc, which slows allocation several-fold)."""
    store = new_store()
    rt = store.resolve(group, version, plural)
    timed = _TimedShare(store.compactor)
    store.compactor = timed  # type: ignore[assignment]
    gc.disable()
    try:
        for body in bodies:
            store.writer.create(rt, orjson.loads(body), namespace="bench")
    finally:
        gc.enable()
    return round(timed.spent / len(bodies) * 1e6, 1)


class _TimedShare:
    """The store's compactor with `share` timed (a compiled Compactor's methods cannot be
    replaced on the instance)."""

    def __init__(self, compactor: Any) -> None:
        self.compactor, self.spent = compactor, 0.0

    def share(self, *args: Any) -> None:
        start = time.perf_counter()
        self.compactor.share(*args)
        self.spent += time.perf_counter() - start

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compactor, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    cases: list[tuple[str, str, str, str, str, Callable[[int], dict[str, Any]]]] = [
        ("ats", "ats_one_schedule", AT_GROUP, AT_VERSION, "ats", lambda i: at(i, 1)),
        ("ats", "ats_3600_schedules", AT_GROUP, AT_VERSION, "ats", lambda i: at(i, 3600)),
        ("ats", "ats_all_distinct", AT_GROUP, AT_VERSION, "ats", lambda i: at(i, 10**9)),
        ("pods", "pods_one_template", "", "v1", "pods", template_pod),
        ("pods", "pods_unique_env", "", "v1", "pods", lambda i: pod(f"p-{i}", i)),
    ]
    only = [p for p in args.only.split(",") if p]
    for family, name, group, version, plural, make in cases:
        if only and family not in only and name not in only:
            continue
        result = {"case": name, "objects": args.n, **measure(args.n, group, version, plural,
                                                              make)}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
