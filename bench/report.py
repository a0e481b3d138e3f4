"""Markdown tables from benchmark JSON lines: `python bench/report.py < run.jsonl`.

`make bench` prints one JSON line per case (queue.py, typed.py, apiserver.py, operator.py);
this turns a saved run into the tables of bench/README.md and the README, so the numbers there
are one run's, copied by a program rather than by hand. Lines it does not know are ignored.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

PEERS = {
    "asyncop": "asyncop (defaults: 16 workers, uvloop, INFO logs, Events)",
    "asyncop+asyncio": "asyncop on asyncio's loop",
    "kopf": "kopf 1.45, tuned, INFO logs",
    "kopf-quiet": "kopf 1.45, tuned, WARNING logs",
}


def table(head: list[str], rows: Iterable[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def n(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def main() -> None:
    lines = [json.loads(x) for x in sys.stdin if x.startswith("{")]
    op = [x for x in lines if x.get("bench") == "operator" and "skipped" not in x]
    out: list[str] = []

    at = [x for x in op if x["case"] == "at_throughput"]
    if at:
        out.append(table(
            ["impl", "Ats", "Ats/s", "CPU ms/At", "requests/At", "server CPU ms/At",
             "peak RSS MiB", "not DONE", "pods/expected", "load"],
            [[PEERS.get(x["impl"], x["impl"]), n(x["ats"]), n(x["ats_per_s"], 1),
              n(x["cpu_s_per_at"] * 1000, 2), x.get("requests_per_at", ""),
              n(x["server_cpu_s"] / x["ats"] * 1000, 2), n(x["peak_rss_mib"]),
              x["not_succeeded"], f'{x["pods"]}/{x["expected_pods"]}', x["load"]]
             for x in at]))
        verbs = [(x["impl"], x["ats"], x.get("requests_per_at_by_verb") or {}) for x in at]
        out.append(table(["impl", "Ats", "requests per At by verb"],
                         [[PEERS.get(i, i), n(a), ", ".join(f"{k} {v}" for k, v in v.items())]
                          for i, a, v in verbs]))
    fan = [x for x in op if x["case"].startswith("fanin")]
    if fan:
        out.append(table(["impl", "case", "objects", "p50 ms", "p99 ms", "max ms",
                          "operator CPU s", "load"],
                         [[PEERS.get(x["impl"], x["impl"]), x["case"], n(x["objects"]),
                           x["p50_ms"], x["p99_ms"], x["max_ms"], x["operator_cpu_s"],
                           x["load"]] for x in fan]))
    sched = [x for x in op if x["case"].startswith(("schedule", "curve"))]
    if sched:
        out.append(table(["impl", "case", "Ats", "spread s", "waiting Ats", "p50 ms", "p99 ms",
                          "max ms", "late > 1 s", "CPU ms per PENDING At", "load"],
                         [[PEERS.get(x["impl"], x["impl"]), x["case"], n(x["ats"]),
                           x["spread_s"], n(x.get("preloaded", 0)), x["p50_ms"], x["p99_ms"],
                           x["max_ms"], x["late_over_1s"], x.get("cpu_ms_per_pending_at", ""),
                           x["load"]] for x in sched]))
    cache = [x for x in op if x["case"] == "cache_sync"]
    if cache:
        out.append(table(["objects", "bytes/object (JSON)", "fill s", "sync s", "objects/s",
                          "sync CPU s", "RSS bytes/object", "load"],
                         [[n(x["objects"]), n(x["object_json_bytes"]), x["fill_s"],
                           x["sync_s"], n(x["objects_per_s"]), x["sync_cpu_s"],
                           n(x["rss_bytes_per_object"]), x["load"]] for x in cache]))
    server = [x for x in lines if "case" in x and "bench" not in x]
    if server:
        out.append(table(["case", "rate /s", "server CPU s", "per server CPU-second"],
                         [[x["case"], n(x.get("creates_per_s") or x.get("events_per_s") or 0),
                           x["server_cpu_s"], n(x.get("per_server_cpu_s", 0))]
                          for x in server]))
    print("\n\n".join(out))


if __name__ == "__main__":
    main()
