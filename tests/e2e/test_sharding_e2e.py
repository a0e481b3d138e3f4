"""Sharded `asyncop run` processes doing the At work together, with replicas coming and going.

An `asyncop apiserver` process (pods complete one second after they start), the At CRD, 300
Ats (half due at once, half 8 s later), and `asyncop run --controllers at --sharding` replicas
(Leases of 3 s, so a killed replica's shards move within seconds). While the Ats are worked
through, a fourth replica joins, one is stopped gracefully (SIGTERM: it drains and hands its
shards over) and one is SIGKILLed (its shards move when its Leases expire). At the end every
At is DONE with exactly one pod (the command ran once), and the replicas' debug traces
(`reconcile done`, with start and end on the system-wide monotonic clock) show no At
reconciled by two replicas at the same time.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from asyncop.api.kinds import POD
from asyncop.client import Client, load_config
from asyncop.controllers.crds import load_crds
from asyncop.controllers.kinds import AT
from asyncop.operator.install import install_crds
from asyncop.testing import eventually
from tests.e2e.overlaps import concurrent_keys

ATS = 300
LATER = 8  # seconds: when the second half of the Ats is due


async def start_apiserver(tmp: Path) -> tuple[asyncio.subprocess.Process, str]:
    kubeconfig = str(tmp / "kubeconfig")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncop", "apiserver", "--port", "0", "--kubeconfig-out",
        kubeconfig, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 30)
    assert line.startswith(b"asyncop apiserver listening on "), line
    return proc, kubeconfig


async def start_replica(kubeconfig: str, log: Path) -> asyncio.subprocess.Process:
    out = log.open("wb")
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncop", "run", "--kubeconfig", kubeconfig,
        "--controllers", "at", "--sharding", "--shards", "16", "--lease-duration", "3",
        "--renew-deadline", "2", "--retry-period", "0.3", "--log-format", "json",
        "--log-level", "debug", "--metrics-bind-address", "0",
        stdout=out, stderr=out, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def traces(logs: list[Path]) -> dict[str, list[tuple[float, float, str]]]:
    spans: dict[str, list[tuple[float, float, str]]] = {}
    for log in logs:
        for line in log.read_text().splitlines():
            if '"reconcile done"' not in line:
                continue
            event: dict[str, Any] = json.loads(line)
            spans.setdefault(event["key"], []).append(
                (event["started"], event["ended"], log.stem))
    return spans


async def test_replicas_share_the_ats_through_joins_stops_and_kills(tmp_path: Path) -> None:
    server, kubeconfig = await start_apiserver(tmp_path)
    replicas: list[asyncio.subprocess.Process] = []
    logs = [tmp_path / f"replica-{i}.log" for i in range(4)]
    try:
        async with Client(await load_config(kubeconfig=kubeconfig)) as client:
            await install_crds(client, load_crds(), field_manager="test")
            for log in logs[:3]:
                replicas.append(await start_replica(kubeconfig, log))
            # Half due now, half a few seconds later: work is left for the replica that joins
            # after the first fifth, whatever the speed of the machine.
            now = datetime.now(UTC)
            for i in range(ATS):
                when = now + timedelta(seconds=0 if i < ATS // 2 else LATER)
                due = when.strftime("%Y-%m-%dT%H:%M:%SZ")
                await client.create(AT, {"metadata": {"name": f"at-{i}", "namespace": "default"},
                                         "spec": {"schedule": due, "command": "echo hi"}})

            async def done_count() -> int:
                items = (await client.list(AT, namespace="default"))["items"]
                return sum((i.get("status") or {}).get("phase") == "DONE" for i in items)

            await eventually(lambda: _at_least(done_count, ATS // 5), timeout=60)
            replicas.append(await start_replica(kubeconfig, logs[3]))  # one joins
            replicas[0].send_signal(signal.SIGTERM)  # one leaves gracefully
            await eventually(lambda: _at_least(done_count, ATS // 2), timeout=60)
            replicas[1].kill()  # one dies
            await eventually(lambda: _at_least(done_count, ATS), timeout=120,
                             message="every At DONE")
            items = (await client.list(AT, namespace="default"))["items"]
            assert {(i.get("status") or {}).get("result") for i in items} == {"Succeeded"}
            pods = (await client.list(POD, namespace="default"))["items"]
            per_at: dict[str, int] = {}
            for pod in pods:
                at = pod["metadata"]["labels"]["app"]
                per_at[at] = per_at.get(at, 0) + 1
            assert len(per_at) == ATS and set(per_at.values()) == {1}  # ran exactly once
        assert await asyncio.wait_for(replicas[0].wait(), 20) == 0  # a clean, drained exit
    finally:
        for proc in [*replicas, server]:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(proc.wait(), 20)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
    spans = traces(logs)
    assert len(spans) >= ATS
    assert concurrent_keys(spans) == []  # no At was ever reconciled by two replicas at once
    assert len({who for s in spans.values() for _, _, who in s}) == 4  # all took part


async def _at_least(count: Any, n: int) -> bool:
    return bool(await count() >= n)
