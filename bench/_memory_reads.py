"""The cache's read path, in process, for bench/memory.py (`reads`), under whichever tree
PYTHONPATH names: an Informer synced from a LIST of 20,000 pods (bench/memory.py's), then
`cache.get` + three field reads per pod, best of 7 passes. Prints one JSON line."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.append(str(Path(__file__).resolve().parent))  # last: bench/operator.py is no stdlib
from memory import pod_manifest

from asyncop.api import Invalid, Kind, status_body
from asyncop.api.kinds import POD
from asyncop.runtime.cache import Cache
from asyncop.testing import FakeClock

N = 20_000


def served(i: int) -> dict[str, Any]:
    """The pod as the server returns it (defaults and status as bench/memory.py's pods)."""
    pod = pod_manifest(i)
    meta = pod["metadata"]
    meta.update(uid=f"{i:08x}-0000-4000-8000-000000000000", resourceVersion=str(i + 10),
                creationTimestamp="2026-11-26T00:00:00Z", generation=1)
    container = pod["spec"]["containers"][0]
    container.update(imagePullPolicy="IfNotPresent", terminationMessagePolicy="File",
                     terminationMessagePath="/dev/termination-log")
    container["ports"][0]["protocol"] = "TCP"
    pod["spec"].update(restartPolicy="Always", terminationGracePeriodSeconds=30,
                       dnsPolicy="ClusterFirst", schedulerName="default-scheduler",
                       securityContext={}, serviceAccountName="default", priority=0)
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    return pod


class Source:
    def __init__(self) -> None:
        self.body = orjson.dumps({"items": [served(i) for i in range(N)],
                                  "metadata": {"resourceVersion": str(N + 10)}})

    async def list(self, kind: Kind, **_: Any) -> dict[str, Any]:
        page: dict[str, Any] = orjson.loads(self.body)
        return page

    async def watch(self, kind: Kind, **kw: Any) -> Any:
        if kw.get("send_initial_events"):
            raise Invalid(status_body(422, "WatchList off"))
        await asyncio.Event().wait()
        yield {}


async def main() -> None:
    cache = Cache(Source(), clock=FakeClock(), informer_options={"page_size": N})  # type: ignore[arg-type]
    cache.informer(POD)
    await cache.start()
    await cache.wait_for_sync()
    names = [f"worker-{i:06d}" for i in range(N)]
    best = float("inf")
    for _ in range(7):
        started = time.perf_counter()
        for name in names:
            pod = cache.get(POD, name, "default")
            assert pod is not None
            pod["status"]["phase"]
            pod["spec"]["containers"][0]["image"]
            pod["metadata"]["labels"]["app"]
        best = min(best, time.perf_counter() - started)
    await cache.stop()
    print(json.dumps({"ns_per_read": round(best / N * 1e9, 1)}))


if __name__ == "__main__":
    asyncio.run(main())
