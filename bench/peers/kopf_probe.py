"""The fan-in latency probe for kopf: the peer of `bench/_asyncop_side.py probe`.

Run with `kopf run --standalone --namespace NS bench/peers/kopf_probe.py`. An event handler
on ConfigMaps records `time.time()` when kopf first calls it for each name; a ConfigMap named
`dump-*` makes it write all recorded times as JSON `{name: wall_time}` to the path in its
`data.path` (temporary file + rename). kopf's default settings; no asyncop imports.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import kopf


@kopf.on.startup()
async def configure(memo: kopf.Memo, **_: Any) -> None:
    memo.seen = {}


@kopf.on.event("", "v1", "configmaps")
async def record(name: str, type: str | None, body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    memo.seen.setdefault(name, time.time())
    if name.startswith("dump-") and type != "DELETED":
        path = Path(body.get("data", {})["path"])
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(memo.seen))
        os.replace(tmp, path)
