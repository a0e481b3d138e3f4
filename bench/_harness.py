"""Process and HTTP plumbing shared by the operator benchmarks (bench/operator.py).

- `Server`: the embedded API server in its own process (bench/_server.py: bundled CRDs, pods
  that complete at once), with a kubeconfig in a private temporary directory.
- `Operator`: an operator process (asyncop or a peer) whose CPU seconds and peak RSS are read
  from /proc/<pid>/stat and /proc/<pid>/status (VmHWM), so each process pays for itself.
- aiohttp helpers: create objects with bounded concurrency or at a paced rate, follow a watch
  (resuming from the last resourceVersion) until a predicate holds or a deadline passes.
Invariants: everything listens on 127.0.0.1; every loop is bounded in count and in time;
every process started here is stopped here (terminate, then kill after a grace period).
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

BENCH = Path(__file__).resolve().parent
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def memory_bytes(pid: int, field: str = "VmHWM") -> int:
    """A /proc/<pid>/status memory field (VmHWM: peak RSS, VmRSS: current) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not found for pid {pid}")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[0]


class Process:
    """A child process with its output in a log file; stopped with terminate, then kill."""

    def __init__(self, name: str, argv: list[str], *, log: Path,
                 env: dict[str, str] | None = None, stdout_pipe: bool = False) -> None:
        self.name = name
        self.log = log
        self._log_file = log.open("wb")
        self.popen = subprocess.Popen(
            argv, stdout=subprocess.PIPE if stdout_pipe else self._log_file,
            stderr=self._log_file, env={**os.environ, **(env or {})}, cwd=BENCH.parent)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def check_alive(self) -> None:
        if self.popen.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.popen.returncode}; "
                               f"last log lines:\n{self.tail()}")

    def tail(self, lines: int = 20) -> str:
        self._log_file.flush()
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def peak_rss(self) -> int:
        return memory_bytes(self.pid, "VmHWM")

    def stop(self, grace: float = 10.0) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=grace)
        if self.popen.stdout is not None:
            self.popen.stdout.close()
        self._log_file.close()


class Server:
    """The embedded API server in its own process, with its kubeconfig."""

    def __init__(self, workdir: Path, *, args: list[str] | None = None,
                 start_timeout: float = 60.0) -> None:
        """`args`: more options for bench/_server.py (its preload takes `start_timeout`)."""
        self.kubeconfig = workdir / "kubeconfig"
        self.proc = Process(
            "apiserver",
            [sys.executable, "-P", str(BENCH / "_server.py"),
             "--kubeconfig-out", str(self.kubeconfig), *(args or [])],
            log=workdir / "apiserver.log", stdout_pipe=True)
        stdout = self.proc.popen.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], start_timeout)
        line = stdout.readline().decode().strip() if ready else \
            f"(nothing within {start_timeout:.0f} s)"
        if not line.startswith("asyncop apiserver listening on "):
            self.proc.stop()
            raise RuntimeError(f"server did not start: {line!r}\n{self.proc.tail()}")
        self.url = line.rsplit(" ", 1)[-1]

    def stop(self) -> None:
        self.proc.stop()


class Workdir:
    """A temporary directory for one case: kubeconfig, logs, probe output."""

    def __init__(self, prefix: str) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix=f"asyncop-bench-{prefix}-")
        self.path = Path(self._tmp.name)

    def cleanup(self) -> None:
        self._tmp.cleanup()


# -- HTTP --------------------------------------------------------------------------------------
DRIVER = "asyncop-bench"
"""The load driver's User-Agent product name: its requests are not the operator's."""


def session(limit: int = 64) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=limit),
                                 timeout=aiohttp.ClientTimeout(total=60),
                                 headers={"User-Agent": f"{DRIVER}/1"})


_BY_CLIENT = re.compile(
    r'asyncop_apiserver_requests_by_client_total\{client="([^"]*)",code="(\d+)",'
    r'resource="([^"]*)",subresource="([^"]*)",verb="([A-Z]+)"\} (\d+)$')


async def requests_by_client(http: aiohttp.ClientSession, url: str) -> Counter[str]:
    """The embedded server's request counters by `client verb resource[/sub]`, from /metrics
    (every code summed)."""
    async with http.get(url + "/metrics") as r:
        text = await r.text()
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        m = _BY_CLIENT.match(line)
        if m:
            client, _, resource, sub, verb, n = m.groups()
            counts[f"{client} {verb} {resource}{'/' + sub if sub else ''}"] += int(n)
    return counts


async def operator_requests(http: aiohttp.ClientSession, url: str, before: Counter[str],
                            *, settle: float = 0.5, timeout: float = 30.0) -> Counter[str]:
    """Requests made by everyone but the driver since `before`, once they stop growing
    (the last finalizer removals come after the last DONE), keyed `verb resource[/sub]`."""
    deadline = time.monotonic() + timeout
    last = await requests_by_client(http, url)
    while time.monotonic() < deadline:
        await asyncio.sleep(settle)
        now = await requests_by_client(http, url)
        if now == last:
            break
        last = now
    out: Counter[str] = Counter()
    for key, n in (last - before).items():
        client, _, rest = key.partition(" ")
        if client != DRIVER and not rest.startswith("WATCH") and not rest.startswith("LIST"):
            out[rest] += n
    return out


async def ensure_namespace(http: aiohttp.ClientSession, url: str, name: str) -> None:
    async with http.post(url + "/api/v1/namespaces", json={"metadata": {"name": name}}) as r:
        if r.status not in (201, 409):
            raise RuntimeError(f"namespace {name}: {r.status} {await r.text()}")


async def create(http: aiohttp.ClientSession, collection: str, body: dict[str, Any]) -> None:
    async with http.post(collection, data=orjson.dumps(body),
                         headers={"Content-Type": "application/json"}) as r:
        if r.status != 201:
            raise RuntimeError(f"create {collection}: {r.status} {await r.text()}")
        await r.read()


async def create_all(http: aiohttp.ClientSession, collection: str,
                     bodies: list[dict[str, Any]], *, concurrency: int) -> None:
    """POST every body with `concurrency` clients (a fixed pool of coroutines)."""
    todo = iter(bodies)

    async def worker() -> None:
        for body in todo:
            await create(http, collection, body)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def create_paced(http: aiohttp.ClientSession, collection: str,
                       bodies: list[dict[str, Any]], *, rate: float,
                       sent: dict[str, float], max_in_flight: int = 64) -> None:
    """POST bodies at `rate`/s (open loop: a slow answer does not slow the sender, up to
    `max_in_flight`); `sent[name]` is the wall-clock time just before each request."""
    slots = asyncio.Semaphore(max_in_flight)
    start = time.monotonic()

    async def one(body: dict[str, Any]) -> None:
        try:
            sent[body["metadata"]["name"]] = time.time()
            await create(http, collection, body)
        finally:
            slots.release()

    tasks = []
    for i, body in enumerate(bodies):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await slots.acquire()
        tasks.append(asyncio.create_task(one(body)))
    await asyncio.gather(*tasks)


async def list_rv(http: aiohttp.ClientSession, collection: str) -> str:
    async with http.get(collection + "?limit=1") as r:
        body = orjson.loads(await r.read())
        return str(body["metadata"]["resourceVersion"])


async def list_items(http: aiohttp.ClientSession, collection: str) -> list[dict[str, Any]]:
    async with http.get(collection) as r:
        items: list[dict[str, Any]] = orjson.loads(await r.read())["items"]
        return items


async def follow(http: aiohttp.ClientSession, collection: str, rv: str,
                 on_event: Callable[[dict[str, Any], float], bool], *, timeout: float) -> None:
    """Watch `collection` from `rv`, calling `on_event(event, arrival_wall_time)` until it
    returns True; resumes after the server closes the stream; TimeoutError after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"watch of {collection}: condition not met in {timeout:.0f}s")
        url = f"{collection}?watch=1&allowWatchBookmarks=true&resourceVersion={rv}" \
              f"&timeoutSeconds={max(1, int(remaining))}"
        async with http.get(url, timeout=aiohttp.ClientTimeout(total=remaining + 5,
                                                               sock_read=remaining)) as resp:
            if resp.status != 200:
                raise RuntimeError(f"watch {collection}: {resp.status} {await resp.text()}")
            async for line in resp.content:
                now = time.time()
                if not line.strip():
                    continue
                event = orjson.loads(line)
                if event["type"] == "ERROR":
                    raise RuntimeError(f"watch {collection}: {event['object']}")
                rv = event["object"]["metadata"].get("resourceVersion", rv)
                if event["type"] != "BOOKMARK" and on_event(event, now):
                    return


async def wait_file(path: Path, *, timeout: float,
                    alive: Callable[[], None]) -> bytes:
    """Poll for a file another process writes atomically (bounded in time)."""
    deadline = time.monotonic() + timeout
    while (data := _read_if_exists(path)) is None:
        alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was not written within {timeout:.0f}s")
        await asyncio.sleep(0.05)
    return data


def _read_if_exists(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


async def bounded(aw: Awaitable[Any], timeout: float) -> Any:
    return await asyncio.wait_for(aw, timeout)
