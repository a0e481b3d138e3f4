"""Operator benchmarks (bench/README.md, scenarios 1-4): asyncop against a kopf peer, end to end.

Every case starts a fresh embedded API server in its own process (bench/_server.py: bundled
CRDs, pods that complete at once) and the operator in another, so the operator's CPU seconds
and peak RSS (/proc) are its own. One JSON line per case on stdout:

1. `at_throughput`: N Ats already due (1,000; 10,000 with --large) are created by 16
   concurrent clients; the time from the first create until every At is DONE (seen on a watch
   in this process) gives `ats_per_s`; `cpu_s_per_at` and `peak_rss_mib` are the operator's.
   The end state is checked: every At DONE/Succeeded and exactly one pod per At.
2. `fanin_low`, `fanin_500`: time from a ConfigMap's create (wall clock just before the POST)
   to the start of its first reconcile in a probe controller (p50/p99/max, ms); 200 creates
   one at a time at 50/s, and 2,500 creates paced at 500/s.
3. `schedule`: 1,000 Ats scheduled evenly over 10 s (starting 5 s ahead); lateness of the
   RUNNING transition, seen as the watch event's arrival time here (status times only have
   second precision) minus the schedule (p50/p99/max, ms).
4. `cache_sync`: an informer's initial sync of N ConfigMaps of ~2 KB (20,000; 100,000 with
   --large), created first by 32 concurrent clients; sync seconds and RSS bytes per object.

Observability variants (docs/observability.md): `asyncop-traced` exports a span per reconcile
and per request over OTLP/HTTP to a sink in this process (OTEL_* variables, as a user would
set them); `asyncop-debug` runs with `--debug-endpoints` (per-key reconcile history). Plain
`asyncop` is tracing off, the default.

Each At case runs for `asyncop` (`python -m asyncop run --controllers at`) and for `kopf`
(bench/peers/kopf_at.py under `kopf run`, its default settings). kopf is optional: when it is
not importable, its cases print a `skipped` line. Before a case is timed, one warm-up object
goes through the operator (so start-up and the initial list are not measured).
Usage: `python bench/operator.py [--large] [--only at,fanin,schedule,cache] [--impl asyncop,kopf]`.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/queue.py would shadow the standard library's `queue` (concurrent.futures, urllib3
# import it): search the bench directory last, not first.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p != _HERE] + [_HERE]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import importlib.util  # noqa: E402
import time  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from typing import Any  # noqa: E402

import orjson  # noqa: E402
from _harness import (  # noqa: E402
    BENCH,
    Process,
    Server,
    Workdir,
    create,
    create_all,
    create_paced,
    ensure_namespace,
    follow,
    list_items,
    list_rv,
    load,
    memory_bytes,
    operator_requests,
    percentile,
    requests_by_client,
    session,
    wait_file,
)

AT_PATH = "/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/{ns}/ats"
CM_PATH = "/api/v1/namespaces/{ns}/configmaps"
POD_PATH = "/api/v1/namespaces/{ns}/pods"
NS = "bench"
MIB = 1024 * 1024
IMPLS = ("asyncop", "asyncop+asyncio", "kopf", "kopf-quiet")
PROFILE_DIR = ""  # set by --profile
OTLP_SINK: dict[str, Any] = {"url": "", "requests": 0, "bytes": 0}  # set by otlp_sink()


def emit(line: dict[str, Any]) -> None:
    print(orjson.dumps({"bench": "operator", **line, "load": load()}).decode(), flush=True)


def kopf_missing() -> str | None:
    if importlib.util.find_spec("kopf") is None:
        return (f"kopf is not importable by {sys.executable}; install it (pip install "
                "'kopf>=1.45,<1.46') in a separate venv together with asyncop (-e .) and run "
                "this benchmark with that venv's python")
    return None


def start_operator(impl: str, work: Workdir, server: Server, *, script: str = "at",
                   namespace: str = NS) -> Process:
    kc = str(server.kubeconfig)
    if impl.startswith("asyncop") and script == "at":
        profile = []
        if PROFILE_DIR:  # cProfile writes its stats when the operator exits (SIGTERM)
            out = Path(PROFILE_DIR) / f"{impl.replace(':', '-')}-{time.time():.0f}.prof"
            profile = ["-m", "cProfile", "-o", str(out)]
        argv = [sys.executable, *profile, "-m", "asyncop", "run", "--controllers", "at",
                "--kubeconfig", kc, "--log-format", "json"]
        name, _, loop = impl.partition("+")
        if ":" in name:  # asyncop:16 runs 16 workers (the default is the controller's own)
            argv += ["--workers", name.partition(":")[2]]
        if loop:  # asyncop+asyncio: the standard event loop (default: auto, uvloop if there)
            argv += ["--event-loop", loop]
        env = {"KUBECONFIG": kc}
        if name.startswith("asyncop-traced"):
            env.update(OTEL_TRACES_EXPORTER="otlp", OTEL_BSP_SCHEDULE_DELAY="500",
                       OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=OTLP_SINK["url"])
        if name.startswith("asyncop-debug"):
            argv += ["--debug-endpoints", "--metrics-bind-address", "127.0.0.1:0"]
        return Process(impl, argv, log=work.path / f"{impl}-{script}.log", env=env)
    elif impl.startswith("asyncop"):
        argv = [sys.executable, "-P", str(BENCH / "_asyncop_side.py"), script, "--kubeconfig", kc,
                "--namespace", namespace]
    else:  # kopf, or kopf-quiet (its logs at WARNING)
        scope = ["-A"] if script == "at" else ["--namespace", namespace]
        quiet = ["--quiet"] if impl.endswith("-quiet") else []
        argv = [sys.executable, "-m", "kopf", "run", "--standalone", *quiet, *scope,
                str(BENCH / "peers" / f"kopf_{script}.py")]
    return Process(impl, argv, log=work.path / f"{impl}-{script}.log",
                   env={"KUBECONFIG": kc})


def at_body(name: str, schedule: str) -> dict[str, Any]:
    return {"apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
            "metadata": {"name": name}, "spec": {"schedule": schedule, "command": "true"}}


def phase(event: dict[str, Any]) -> str | None:
    return (event["object"].get("status") or {}).get("phase")


async def wait_done(http: Any, ats: str, rv: str, names: set[str], *, timeout: float,
                    op: Process) -> None:
    """Follow the Ats' watch until every name in `names` is DONE."""
    pending = set(names)

    def on_event(event: dict[str, Any], _: float) -> bool:
        if phase(event) == "DONE":
            pending.discard(event["object"]["metadata"]["name"])
        return not pending

    try:
        await follow(http, ats, rv, on_event, timeout=timeout)
    except TimeoutError:
        op.check_alive()
        raise TimeoutError(f"{len(pending)} Ats not DONE; operator log:\n{op.tail()}") from None


async def warm_up(http: Any, url: str, op: Process, *, timeout: float = 90.0) -> None:
    """One due At through the operator: it is up, synced and warm when this returns."""
    ats = url + AT_PATH.format(ns=NS)
    rv = await list_rv(http, ats)
    await create(http, ats, at_body("warmup", "2020-01-01T00:00:00Z"))
    await wait_done(http, ats, rv, {"warmup"}, timeout=timeout, op=op)


# -- 1. At throughput ----------------------------------------------------------------------
async def at_throughput(impl: str, n: int) -> None:
    work = Workdir("at")
    server = Server(work.path)
    op: Process | None = None
    try:
        op = start_operator(impl, work, server)
        async with session() as http:
            ats = server.url + AT_PATH.format(ns=NS)
            await ensure_namespace(http, server.url, NS)
            await warm_up(http, server.url, op)
            names = [f"at-{i}" for i in range(n)]
            rv = await list_rv(http, ats)
            requests0 = await requests_by_client(http, server.url)
            cpu0, server_cpu0 = op.cpu(), server.proc.cpu()
            start = time.perf_counter()
            waiter = asyncio.create_task(
                wait_done(http, ats, rv, set(names), timeout=60 + n * 0.1, op=op))
            await create_all(http, ats, [at_body(name, "2020-01-01T00:00:00Z")
                                         for name in names], concurrency=16)
            await waiter
            seconds = time.perf_counter() - start
            # CPU is counted until the operator's requests stop (Events and finalizer
            # removals still go out after the last DONE): all the work, not the window.
            requests = await operator_requests(http, server.url, requests0)
            cpu = op.cpu() - cpu0
            server_cpu = server.proc.cpu() - server_cpu0
            # End state: every At DONE/Succeeded, exactly one pod per At.
            items = await list_items(http, ats)
            bad = [i["metadata"]["name"] for i in items
                   if (i.get("status") or {}).get("result") != "Succeeded"]
            pods = await list_items(http, server.url + POD_PATH.format(ns=NS))
            peak_rss = op.peak_rss()
            restart: dict[str, Any] = {}
            if impl.startswith("asyncop"):
                # A restart reconciles every At again with nothing to do: 0 writes expected.
                op.stop()
                before = await requests_by_client(http, server.url)
                op = start_operator(impl, work, server)
                await idle(op)
                again = await operator_requests(http, server.url, before)
                restart = {"restart_requests": sum(again.values()),
                           "restart_requests_by_verb": dict(sorted(again.items()))}
            emit({"case": "at_throughput", "impl": impl, "ats": n,
                  "seconds": round(seconds, 3), "ats_per_s": round(n / seconds, 1),
                  "cpu_s_per_at": round(cpu / n, 5), "operator_cpu_s": round(cpu, 2),
                  "peak_rss_mib": round(peak_rss / MIB, 1),
                  "server_cpu_s": round(server_cpu, 2),
                  "requests_per_at": round(sum(requests.values()) / n, 2),
                  "requests_per_at_by_verb": {k: round(v / n, 2)
                                              for k, v in sorted(requests.items())},
                  "not_succeeded": len(bad), "pods": len(pods), "expected_pods": n + 1,
                  **({"otlp_exports": OTLP_SINK["requests"],
                      "otlp_mib": round(OTLP_SINK["bytes"] / MIB, 2)}
                     if "traced" in impl else {}),
                  **restart})
    finally:
        if op is not None:
            op.stop()
        server.stop()
        work.cleanup()


async def idle(op: Process, *, quiet: float = 0.02, timeout: float = 120.0) -> None:
    """Wait until a freshly started operator has started up and then stays (almost) idle:
    its CPU grows by less than `quiet` seconds in each of two consecutive half seconds."""
    deadline = time.monotonic() + timeout
    await asyncio.sleep(2.0)
    last, calm = op.cpu(), 0
    while calm < 2 and time.monotonic() < deadline:
        op.check_alive()
        await asyncio.sleep(0.5)
        now = op.cpu()
        calm = calm + 1 if now - last < quiet else 0
        last = now


# -- 2. Fan-in latency ---------------------------------------------------------------------
async def fanin(impl: str, *, low: int, high: int, rate: float) -> None:
    work = Workdir("fanin")
    server = Server(work.path)
    ns = "fanin"
    op: Process | None = None
    dumps = 0

    async def dump(http: Any, cms: str) -> dict[str, float]:
        nonlocal dumps
        assert op is not None
        dumps += 1
        path = work.path / f"dump-{dumps}.json"
        await create(http, cms, {"metadata": {"name": f"dump-{dumps}"},
                                 "data": {"path": str(path)}})
        seen: dict[str, float] = orjson.loads(
            await wait_file(path, timeout=60, alive=op.check_alive))
        return seen

    try:
        op = start_operator(impl, work, server, script="probe", namespace=ns)
        async with session() as http:
            cms = server.url + CM_PATH.format(ns=ns)
            await ensure_namespace(http, server.url, ns)
            await dump(http, cms)  # warm-up: the probe is up and synced
            cpu0 = op.cpu()
            for case, count, pace in (("fanin_low", low, 50.0), ("fanin_500", high, rate)):
                sent: dict[str, float] = {}
                prefix = case.replace("_", "-")
                bodies = [{"metadata": {"name": f"{prefix}-{i}"}, "data": {"i": str(i)}}
                          for i in range(count)]
                max_in_flight = 1 if case == "fanin_low" else 64
                await create_paced(http, cms, bodies, rate=pace, sent=sent,
                                   max_in_flight=max_in_flight)
                seen: dict[str, float] = {}
                for _ in range(20):  # workers may start the dump before the last few
                    seen = await dump(http, cms)
                    if all(name in seen for name in sent):
                        break
                lat = [(seen[name] - t) * 1000 for name, t in sent.items() if name in seen]
                emit({"case": case, "impl": impl, "objects": count, "rate_per_s": pace,
                      "missing": count - len(lat), "p50_ms": round(percentile(lat, 50), 2),
                      "p99_ms": round(percentile(lat, 99), 2),
                      "max_ms": round(max(lat), 2),
                      "operator_cpu_s": round(op.cpu() - cpu0, 2)})
                cpu0 = op.cpu()
    finally:
        if op is not None:
            op.stop()
        server.stop()
        work.cleanup()


# -- 3. Schedule precision -----------------------------------------------------------------
def rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


async def schedule(impl: str, *, case: str, n: int, spread: float, lead: float,
                   preload: int = 0) -> None:
    work = Workdir("schedule")
    server = Server(work.path)
    op: Process | None = None
    try:
        op = start_operator(impl, work, server)
        async with session() as http:
            ats = server.url + AT_PATH.format(ns=NS)
            await ensure_namespace(http, server.url, NS)
            await warm_up(http, server.url, op)
            extra: dict[str, Any] = {}
            if preload:  # the cost curve: `preload` Ats waiting for a far schedule first
                extra = await pending_ats(http, ats, op, preload)
            base = time.time() + lead
            due = {f"at-{i}": round(base + i * spread / n, 3) for i in range(n)}
            rv = await list_rv(http, ats)
            late: dict[str, float] = {}

            def on_event(event: dict[str, Any], arrived: float) -> bool:
                name = event["object"]["metadata"]["name"]
                if name in due and name not in late and phase(event) in ("RUNNING", "DONE"):
                    late[name] = (arrived - due[name]) * 1000
                return len(late) == n

            waiter = asyncio.create_task(follow(http, ats, rv, on_event,
                                                timeout=lead + spread + 120))
            await create_all(http, ats, [at_body(name, rfc3339(when))
                                         for name, when in due.items()], concurrency=16)
            created = time.time()
            await waiter
            values = list(late.values())
            emit({"case": case, "impl": impl, "ats": n, "spread_s": spread,
                  "created_before_first_due_s": round(base - created, 2),
                  "p50_ms": round(percentile(values, 50), 1),
                  "p99_ms": round(percentile(values, 99), 1),
                  "max_ms": round(max(values), 1), "min_ms": round(min(values), 1),
                  "late_over_1s": sum(v > 1000 for v in values),
                  "peak_rss_mib": round(op.peak_rss() / MIB, 1), **extra})
    finally:
        if op is not None:
            op.stop()
        server.stop()
        work.cleanup()


async def pending_ats(http: Any, ats: str, op: Process, n: int) -> dict[str, Any]:
    """Create n Ats due in an hour and wait until the operator has marked each PENDING:
    the operator's CPU per PENDING At (one reconcile, one status write, one timer)."""
    names = {f"later-{i}" for i in range(n)}
    later = rfc3339(time.time() + 3600)
    rv = await list_rv(http, ats)
    seen: set[str] = set()

    def on_event(event: dict[str, Any], _: float) -> bool:
        name = event["object"]["metadata"]["name"]
        if name in names and phase(event) == "PENDING":
            seen.add(name)
        return len(seen) == n

    cpu0, start = op.cpu(), time.perf_counter()
    waiter = asyncio.create_task(follow(http, ats, rv, on_event, timeout=120 + n * 0.02))
    await create_all(http, ats, [at_body(name, later) for name in sorted(names)],
                     concurrency=16)
    await waiter
    return {"preloaded": n, "preload_s": round(time.perf_counter() - start, 1),
            "cpu_ms_per_pending_at": round((op.cpu() - cpu0) / n * 1000, 3)}


# -- 4. Cache scale ------------------------------------------------------------------------
async def cache_sync(n: int) -> None:
    work = Workdir("cache")
    server = Server(work.path)
    ns = "cache"
    try:
        async with session() as http:
            await ensure_namespace(http, server.url, ns)
            filler = "x" * 1900  # with metadata: ~2 KB per object as stored
            start = time.perf_counter()
            await create_all(http, server.url + CM_PATH.format(ns=ns),
                             [{"metadata": {"name": f"cm-{i}", "labels": {"bench": "cache"}},
                               "data": {"payload": filler, "i": str(i)}} for i in range(n)],
                             concurrency=32)
            fill_s = time.perf_counter() - start
            async with http.get(server.url + CM_PATH.format(ns=ns) + "/cm-0") as r:
                object_bytes = len(await r.read())
        op = start_operator("asyncop", work, server, script="cache", namespace=ns)
        try:
            rc = op.popen.wait(timeout=120 + n / 200)
            out = op.log.read_text().strip().splitlines()
            result = next((orjson.loads(line) for line in reversed(out)
                           if line.startswith('{"sync_s"')), None)
            if rc != 0 or result is None:
                raise RuntimeError(f"cache run failed ({rc}):\n{op.tail()}")
        finally:
            op.stop()
        emit({"case": "cache_sync", "impl": "asyncop", "objects": result["objects"],
              "object_json_bytes": object_bytes,
              "fill_s": round(fill_s, 1), "sync_s": round(result["sync_s"], 2),
              "objects_per_s": round(result["objects"] / result["sync_s"]),
              "rss_bytes_per_object": round((result["rss_after"] - result["rss_before"]) / n),
              "rss_after_mib": round(result["rss_after"] / MIB, 1),
              "sync_cpu_s": round(result["cpu_s"], 2),
              "server_rss_mib": round(memory_bytes(server.proc.pid, "VmRSS") / MIB, 1)})
    finally:
        server.stop()
        work.cleanup()


async def otlp_sink() -> Any:
    """An OTLP/HTTP receiver that accepts and counts trace exports (for asyncop-traced)."""
    from aiohttp import web

    async def traces(request: web.Request) -> web.Response:
        OTLP_SINK["requests"] += 1
        OTLP_SINK["bytes"] += len(await request.read())
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application(client_max_size=64 * MIB)
    app.router.add_post("/v1/traces", traces)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    OTLP_SINK["url"] = f"http://127.0.0.1:{runner.addresses[0][1]}/v1/traces"
    return runner


async def run(args: argparse.Namespace) -> None:
    only = set(args.only.split(","))
    impls = [i for i in args.impl.split(",") if i]
    missing = kopf_missing()
    if any(i.startswith("asyncop-traced") for i in impls):
        await otlp_sink()  # lives as long as the run

    async def each(case: str, body: Any, *, variants: bool = True) -> None:
        for impl in impls:
            if ":" in impl and not variants:
                continue
            if impl.startswith("kopf") and missing:
                emit({"case": case, "impl": impl, "skipped": missing})
                continue
            await body(impl)

    if "at" in only:
        await each("at_throughput", lambda impl: at_throughput(impl, args.ats))
    if "fanin" in only:
        await each("fanin", lambda impl: fanin(impl, low=200, high=2500, rate=500.0),
                   variants=False)
    if "schedule" in only:
        await each("schedule", lambda impl: schedule(
            impl, case="schedule", n=1000, spread=10.0, lead=5.0))
        await each("schedule_light", lambda impl: schedule(
            impl, case="schedule_light", n=100, spread=10.0, lead=5.0))
        await each("schedule_burst", lambda impl: schedule(
            impl, case="schedule_burst", n=100, spread=0.0, lead=5.0))
    if "curve" in only:  # not in the default run: 100,000 Ats take minutes
        for preload in args.curve:
            await each("curve", lambda impl, p=preload: schedule(
                impl, case=f"curve_{p}", n=1000, spread=10.0, lead=5.0, preload=p))
    if "cache" in only:
        await cache_sync(args.objects)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true",
                        help="10,000 Ats and 100,000 cached objects")
    parser.add_argument("--ats", type=int, default=None, help="Ats in the throughput case")
    parser.add_argument("--objects", type=int, default=None, help="objects in the cache case")
    parser.add_argument("--only", default="at,fanin,schedule,cache",
                        help="cases; `curve` (not in the default) is the cost curve")
    parser.add_argument("--curve", type=lambda v: [int(x) for x in v.split(",")],
                        default=[1000, 10_000, 100_000],
                        help="Ats waiting in the cache for each point of the cost curve")
    parser.add_argument("--impl", default=",".join(IMPLS))
    parser.add_argument("--profile", metavar="DIR", default="",
                        help="run the asyncop At operator under cProfile, stats into DIR")
    args = parser.parse_args()
    global PROFILE_DIR
    PROFILE_DIR = args.profile
    args.ats = args.ats or (10_000 if args.large else 1_000)
    args.objects = args.objects or (100_000 if args.large else 20_000)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
