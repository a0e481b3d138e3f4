"""Memory per cached object of `asyncop run`, before and after (issue 19, goals 1-3).

Cases (`--only`, one JSON line per measured run, then one `summary` line per case, impl and
server with the medians):

- `pods`: N pods of ~3.5 KB as served (30 env vars, a `kubectl.kubernetes.io/
  last-applied-configuration` annotation, the server's defaults; 26 of the env entries are
  the same in every pod, 4 differ per pod, as in pods of one manifest), the podlogger
  controller (it reads each pod's phase: the whole pod is cached);
- `podmeta`: the same pods, a controller watching pods metadata-only
  (bench/_memory_targets.py; `after` only: the base has no metadata-only informers);
- `ats`: N Ats waiting (due in a day), the At controller: primed once by a first operator
  run that marks each PENDING, then every measured run is a restart (a no-op reconcile and
  a timer per At, no write).

Each case gets a fresh `asyncop apiserver --no-simulators` (default version 1.33, so the
WatchList gate is off as in kube and the informer falls back to LIST: server `list`), and
for `after` also one with `--feature-gates WatchList=true` (server `stream`: the informer's
streaming list). Impls: `base` is the tree at `--base` (default: the branch point), run from
a `git archive` of it with this venv; `after` is this tree. A run starts the operator, waits
for `/readyz` (caches synced) and then for its CPU to go quiet (every initial reconcile
done), and reads /proc/<pid>/status: VmRSS (steady) and VmHWM (the peak, the initial
list's included). Per object = (RSS - the same impl's RSS with no objects) / N. Runs of base
and after alternate (`--rounds`), and medians are reported: RSS is robust to the other work
on a shared machine, CPU figures are not (none are reported).

`reads`: the read path, in process (bench/_memory_reads.py under each tree): a cache of
20,000 such pods, `cache.get` + three field reads, best of 7 — must stay within 1.2x base.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (
    BENCH,
    Process,
    Workdir,
    cpu_seconds,
    create_all,
    load,
    memory_bytes,
    session,
)

ROOT = BENCH.parent
POD_COLLECTION = "/api/v1/namespaces/default/pods"
AT_COLLECTION = "/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/default/ats"


# -- the objects -------------------------------------------------------------------------------
def pod_manifest(i: int) -> dict[str, Any]:
    """A pod as `kubectl apply` would create it: ~3.5 KB once the server has defaulted it."""
    env = [{"name": f"E{k:02d}", "value": f"v{k:02d}"} for k in range(26)]
    env += [{"name": "IDX", "value": str(i)}, {"name": "SHARD", "value": f"s{i % 16}"},
            {"name": "INST", "value": f"w{i:06d}"}, {"name": "SEED", "value": f"{i * 7919}"}]
    body: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"worker-{i:06d}", "namespace": "default",
                     "labels": {"app": "worker", "tier": "batch", "shard": f"s{i % 16}"}},
        "spec": {"containers": [{
            "name": "worker", "image": "example.com/worker:1.4", "env": env,
            "ports": [{"containerPort": 8080, "name": "http"}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                          "limits": {"memory": "256Mi"}}}]}}
    applied = orjson.dumps(body).decode() + "\n"
    body["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": applied}
    return body


def at_manifest(i: int, schedule: str) -> dict[str, Any]:
    return {"apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
            "metadata": {"name": f"at-{i:06d}", "namespace": "default"},
            "spec": {"schedule": schedule, "command": f"echo at {i}"}}


# -- processes ---------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ApiServerProcess:
    """`asyncop apiserver --no-simulators` with the bundled CRDs, in its own process."""

    def __init__(self, work: Path, *, stream: bool) -> None:
        self.kubeconfig = work / "kubeconfig"
        argv = [sys.executable, "-m", "asyncop", "apiserver", "--no-simulators", "--port", "0",
                "--kubeconfig-out", str(self.kubeconfig), "--crds", str(ROOT / "crds")]
        if stream:
            argv += ["--feature-gates", "WatchList=true"]
        self.proc = Process("apiserver", argv, log=work / "apiserver.log", stdout_pipe=True)
        out = self.proc.popen.stdout
        assert out is not None
        ready, _, _ = select.select([out], [], [], 60.0)
        line = out.readline().decode().strip() if ready else "(nothing within 60 s)"
        if "listening on" not in line:
            self.proc.stop()
            raise RuntimeError(f"server did not start: {line!r}\n{self.proc.tail()}")
        self.url = line.rsplit(" ", 1)[-1]

    def stop(self) -> None:
        self.proc.stop()


def tree_of(commit: str, into: Path) -> Path:
    """The source tree at `commit` (git archive), to run the base with this venv."""
    archive = into / "base.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "archive", commit], cwd=ROOT, stdout=fh, check=True)
    out = into / "base"
    out.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(out, filter="data")
    return out


def operator(tree: Path, work: Path, kubeconfig: Path, controllers: str, tag: str,
             *, target: str | None = None) -> tuple[Process, int]:
    port = free_port()
    # -P: the tree on PYTHONPATH, not the working directory, provides `asyncop`
    argv = [sys.executable, "-P", "-m", "asyncop", "run"]
    if target:
        argv.append(target)
    argv += ["--controllers", controllers, "--kubeconfig", str(kubeconfig),
             "--no-leader-elect", "--log-format", "json",
             "--health-probe-bind-address", f"127.0.0.1:{port}"]
    env = {"PYTHONPATH": str(tree), "KUBECONFIG": str(kubeconfig)}
    proc = Process(f"operator-{tag}", argv, log=work / f"operator-{tag}.log", env=env)
    return proc, port


async def ready_and_quiet(proc: Process, port: int, *, timeout: float) -> float:
    """Seconds until /readyz answers 200; then wait until the CPU goes quiet."""
    started = time.monotonic()
    deadline = started + timeout
    ready_at = None
    async with aiohttp.ClientSession() as http:
        while ready_at is None:
            proc.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{proc.name} not ready within {timeout} s\n{proc.tail()}")
            try:
                async with http.get(f"http://127.0.0.1:{port}/readyz") as r:
                    if r.status == 200:
                        ready_at = time.monotonic() - started
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    quiet, last = 0, cpu_seconds(proc.pid)
    while quiet < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = cpu_seconds(proc.pid)
        quiet = quiet + 1 if now - last < 0.02 else 0
        last = now
    return ready_at


async def measure(tree: Path, work: Path, server: ApiServerProcess, controllers: str,
                  tag: str, *, target: str | None = None, timeout: float = 900) -> dict[str, Any]:
    proc, port = operator(tree, work, server.kubeconfig, controllers, tag, target=target)
    try:
        ready_s = await ready_and_quiet(proc, port, timeout=timeout)
        return {"ready_s": round(ready_s, 2), "rss": memory_bytes(proc.pid, "VmRSS"),
                "hwm": memory_bytes(proc.pid, "VmHWM")}
    finally:
        proc.stop()


# -- cases -------------------------------------------------------------------------------------
async def fill(url: str, collection: str, bodies: Iterator[dict[str, Any]], n: int) -> float:
    started = time.monotonic()
    async with session(limit=32) as http:
        batch: list[dict[str, Any]] = []
        for body in bodies:
            batch.append(body)
            if len(batch) == 2000:
                await create_all(http, url + collection, batch, concurrency=32)
                batch = []
        if batch:
            await create_all(http, url + collection, batch, concurrency=32)
    return time.monotonic() - started


def emit(line: dict[str, Any]) -> None:
    print(json.dumps({"bench": "memory", **line, "load": load()}), flush=True)


async def run_case(case: str, n: int, trees: dict[str, Path], rounds: int,
                   results: list[dict[str, Any]]) -> None:
    servers = ["list", "stream"]
    controllers, target = {"pods": ("podlogger", None), "ats": ("at", None),
                           "podmeta": ("podmeta", str(BENCH / "_memory_targets.py"))}[case]
    for server_kind in servers:
        impls = [i for i in trees if not (i == "base" and (server_kind == "stream"
                                                           or case == "podmeta"))]
        work = Workdir(f"memory-{case}-{server_kind}")
        server = ApiServerProcess(work.path, stream=server_kind == "stream")
        try:
            empty = {impl: await measure(trees[impl], work.path, server, controllers,
                                         f"{impl}-empty", target=target) for impl in impls}
            if case == "ats":
                day = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
                fill_s = await fill(server.url, AT_COLLECTION,
                                    (at_manifest(i, day) for i in range(n)), n)
                await measure(trees["after"], work.path, server, controllers, "prime",
                              timeout=1800)  # marks every At PENDING once
            else:
                fill_s = await fill(server.url, POD_COLLECTION,
                                    (pod_manifest(i) for i in range(n)), n)
            for r in range(rounds):
                for impl in impls:
                    got = await measure(trees[impl], work.path, server, controllers,
                                        f"{impl}-{r}", target=target)
                    base_rss = empty[impl]["rss"]
                    line = {"case": case, "impl": impl, "server": server_kind, "round": r,
                            "objects": n, "fill_s": round(fill_s, 1),
                            "ready_s": got["ready_s"],
                            "empty_rss_mib": round(base_rss / 2**20, 1),
                            "rss_mib": round(got["rss"] / 2**20, 1),
                            "peak_rss_mib": round(got["hwm"] / 2**20, 1),
                            "bytes_per_object": round((got["rss"] - base_rss) / n),
                            "peak_bytes_per_object": round((got["hwm"] - base_rss) / n),
                            "peak_over_steady": round((got["hwm"] - base_rss)
                                                      / max(1, got["rss"] - base_rss), 2)}
                    emit(line)
                    results.append(line)
        finally:
            server.stop()
            work.cleanup()


def summaries(results: list[dict[str, Any]]) -> None:
    keys = sorted({(r["case"], r["impl"], r["server"]) for r in results})
    for case, impl, server in keys:
        rows = [r for r in results if (r["case"], r["impl"], r["server"]) == (case, impl, server)]
        med = {f: statistics.median(r[f] for r in rows)
               for f in ("bytes_per_object", "peak_bytes_per_object", "peak_over_steady",
                         "rss_mib", "peak_rss_mib", "empty_rss_mib", "ready_s")}
        emit({"case": case, "impl": impl, "server": server, "summary": True,
              "runs": len(rows), "objects": rows[0]["objects"], **med})


def reads(trees: dict[str, Path], rounds: int) -> None:
    script = BENCH / "_memory_reads.py"
    got: dict[str, list[float]] = {impl: [] for impl in trees}
    for _ in range(rounds):
        for impl, tree in trees.items():
            out = subprocess.run([sys.executable, "-P", str(script)],
                                 env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree,
                                 capture_output=True, text=True, check=True)
            got[impl].append(json.loads(out.stdout.strip().splitlines()[-1])["ns_per_read"])
    for impl, values in got.items():
        emit({"case": "reads", "impl": impl, "ns_per_get_and_3_fields": min(values),
              "runs": values})


def trees_of(args: argparse.Namespace, tmp: Path) -> dict[str, Path]:
    if args.no_base:
        return {"after": ROOT}
    base = args.base or subprocess.run(
        ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True,
        check=True).stdout.strip()
    return {"base": tree_of(base, tmp), "after": ROOT}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="pods,podmeta,ats,reads")
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--ats", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base", default=None,
                        help="base commit (default: the merge base with the main branch)")
    parser.add_argument("--no-base", action="store_true", help="measure this tree only")
    args = parser.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory(prefix="asyncop-bench-memory-") as tmp:
        trees = trees_of(args, Path(tmp))
        results: list[dict[str, Any]] = []
        if "reads" in only:
            reads(trees, args.rounds)
        for case in ("pods", "podmeta", "ats"):
            if case in only:
                await run_case(case, args.ats if case == "ats" else args.pods, trees,
                               args.rounds, results)
        summaries(results)


if __name__ == "__main__":
    asyncio.run(main())
