"""The `asyncop` command line: run, apiserver, crds, version.

`asyncop run` resolves the cluster like kubectl (or starts the embedded API server with
`--embedded`), checks up front that the server answers, that the CRDs of the enabled
controllers are installed (or installs them with `--install-crds`) and that RBAC lets us
list what we watch, then runs the controllers in a Manager until Ctrl-C/SIGTERM.

Invariant: every user error (bad flag, unreadable kubeconfig, unreachable server, unknown
controller, missing CRD, a 403) ends as ONE line on stderr that names the fix, exit code 2,
no traceback. Losing the lease (or a crashed controller) exits 1, like controller-runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import structlog
import yaml

from asyncop import __version__
from asyncop.api import AlreadyExists, ApiError, Forbidden, Kind, NotFound, RawObject
from asyncop.api import kinds as builtin_kinds
from asyncop.client import Client, ClientConfig, ConfigError, TransportError, load_config
from asyncop.clock import Clock
from asyncop.controllers.crds import crds_yaml, load_crds
from asyncop.controllers.kinds import CUSTOM_KINDS
from asyncop.controllers.registry import CONTROLLERS
from asyncop.runtime.controller import Controller
from asyncop.runtime.leader import LeaderElectionConfig
from asyncop.runtime.logs import configure_logging, parse_level
from asyncop.runtime.manager import LeaderElectionLost, Manager
from asyncop.runtime.server import parse_bind_address

log = structlog.get_logger("asyncop.cli")

FIELD_MANAGER = "asyncop"
LEASE_NAME = "asyncop"
HINT_KINDS = "ats,foos,networks,crdplural,jinghzhus,pods,deployments,services"
SUMMARY_INTERVAL = 5.0


class UserError(Exception):
    """A mistake the user can fix; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="asyncop", description="asyncio Kubernetes operators")
    sub = parser.add_subparsers(dest="command", metavar="{run,apiserver,crds,version}")
    sub.required = True
    run = sub.add_parser("run", help="run the controllers")
    run.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    run.add_argument("--context", help="kubeconfig context")
    run.add_argument("--embedded", action="store_true",
                     help="start an in-process API server instead of using a cluster")
    run.add_argument("--apply", action="extend", nargs="+", default=[], metavar="PATH",
                     help="apply YAML files/directories (multi-document) before the controllers "
                     "start")
    run.add_argument("--controllers", default=",".join(CONTROLLERS),
                     help=f"comma-separated controllers (default: {','.join(CONTROLLERS)})")
    run.add_argument("--namespace", action="extend", nargs="+", default=[], metavar="NS",
                     help="watch only these namespaces (default: all)")
    run.add_argument("--workers", type=int, default=None, help="workers per controller")
    run.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=False,
                     help="run leader election on a Lease (for several replicas)")
    run.add_argument("--leader-election-namespace", default=None, metavar="NS")
    run.add_argument("--metrics-bind-address", default=None, metavar="HOST:PORT",
                     help='"0" disables (default: 0, or 127.0.0.1:0 with --embedded)')
    run.add_argument("--health-probe-bind-address", default=None, metavar="HOST:PORT")
    run.add_argument("--log-format", choices=["console", "json"], default=None)
    run.add_argument("--log-level", default="info")
    run.add_argument("--install-crds", action="store_true",
                     help="install the bundled CRDs if they are missing")
    api = sub.add_parser("apiserver", help="run the embedded API server on its own")
    api.add_argument("--port", type=int, default=0)
    api.add_argument("--host", default="127.0.0.1")
    api.add_argument("--kubeconfig-out", required=True, metavar="PATH")
    api.add_argument("--crds", default=None, metavar="DIR", help="CRD YAMLs to install")
    api.add_argument("--no-simulators", action="store_true")
    sub.add_parser("crds", help="print the bundled CRDs as YAML")
    sub.add_parser("version", help="print the version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry point: parse, run, and turn user errors into one line + exit 2."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(args_list)
        if args.command == "apiserver":
            return _run_apiserver(args)
        return asyncio.run(amain(args_list))
    except UserError as exc:
        return _fail(exc)
    except KeyboardInterrupt:
        return 130


async def amain(argv: Sequence[str]) -> int:
    """`main` for callers that already run an event loop (tests, embedding)."""
    try:
        args = build_parser().parse_args(list(argv))
        if args.command == "version":
            print(f"asyncop {__version__}")
            return 0
        if args.command == "crds":
            sys.stdout.write(crds_yaml())
            return 0
        if args.command == "apiserver":
            raise UserError("`asyncop apiserver` runs its own event loop; call main() instead")
        return await run_command(args)
    except UserError as exc:
        return _fail(exc)
    except (ConfigError, TransportError) as exc:
        return _fail(UserError(f"{exc}; check --kubeconfig/--context"))


def _fail(exc: UserError) -> int:
    print(f"asyncop: error: {exc}", file=sys.stderr)
    return 2


# -- run ----------------------------------------------------------------------------------------
def _controller_names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONTROLLERS]
    if unknown:
        raise UserError(
            f"unknown controller {unknown[0]!r}; choose from: {', '.join(CONTROLLERS)}"
        )
    if not names:
        raise UserError(f"--controllers is empty; choose from: {', '.join(CONTROLLERS)}")
    return names


def _validate(args: argparse.Namespace) -> None:
    try:
        parse_level(args.log_level)
        parse_bind_address(args.metrics_bind_address)
        parse_bind_address(args.health_probe_bind_address)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.embedded and (args.kubeconfig or args.context):
        raise UserError("--embedded starts its own API server; drop --kubeconfig/--context")
    for path in args.apply:
        if not Path(path).exists():
            raise UserError(f"--apply {path}: no such file or directory")


async def run_command(args: argparse.Namespace) -> int:
    names = _controller_names(args.controllers)
    _validate(args)
    configure_logging(format=args.log_format, level=args.log_level)
    docs = [doc for path in args.apply for doc in load_manifests(Path(path))]
    embedded: Any = None
    tmpdir: tempfile.TemporaryDirectory[str] | None = None
    try:
        if args.embedded:
            from asyncop.apiserver import ApiServer

            embedded = ApiServer(host="127.0.0.1", port=0)
            await embedded.start()
            tmpdir = tempfile.TemporaryDirectory(prefix="asyncop-")
            kubeconfig = str(embedded.write_kubeconfig(Path(tmpdir.name) / "kubeconfig"))
            print(f"embedded API server: {embedded.url}", flush=True)
            print(f"kubeconfig: {kubeconfig}", flush=True)
            print(f"try: kubectl --kubeconfig {kubeconfig} get {HINT_KINDS}", flush=True)
            config = await load_config(kubeconfig=kubeconfig)
        else:
            try:
                config = await load_config(kubeconfig=args.kubeconfig, context=args.context)
            except ConfigError as exc:
                raise UserError(str(exc)) from None
        return await _run_manager(args, config, names, docs, install=args.install_crds
                                  or args.embedded)
    finally:
        if embedded is not None:
            await embedded.stop()
        if tmpdir is not None:
            tmpdir.cleanup()


async def _run_manager(
    args: argparse.Namespace, config: ClientConfig, names: list[str], docs: list[RawObject],
    *, install: bool,
) -> int:
    namespaces = [n.strip() for v in args.namespace for n in v.split(",") if n.strip()]
    default_bind = "127.0.0.1:0" if args.embedded else "0"
    le = None
    if args.leader_elect:
        le = LeaderElectionConfig(
            name=LEASE_NAME, namespace=args.leader_election_namespace or config.namespace
        )
    mgr = Manager(
        config=config,
        namespaces=namespaces or None,
        leader_election=le,
        metrics_bind_address=args.metrics_bind_address or default_bind,
        health_probe_bind_address=args.health_probe_bind_address or default_bind,
        exit_on_lost_lease=True,
        install_signal_handlers=True,
    )
    controllers: list[Controller] = []
    for name in names:
        factory = CONTROLLERS[name]
        controllers.append(
            factory(mgr) if args.workers is None else factory(mgr, workers=args.workers)
        )
    watched = list(dict.fromkeys(w.kind for c in controllers for w in c.watches))
    await preflight(config, watched, namespaces, install_crds=install)
    if docs:
        await apply_manifests(config, docs)
    for controller in controllers:
        mgr.add(controller)
    try:
        await mgr.start()
    except OSError as exc:
        raise UserError(f"cannot bind the metrics/health address: {exc}") from None
    summary: asyncio.Task[None] | None = None
    try:
        if mgr.metrics_port:
            print(f"metrics: http://127.0.0.1:{mgr.metrics_port}/metrics", flush=True)
        if mgr.health_port and mgr.health_port != mgr.metrics_port:
            print(f"health: http://127.0.0.1:{mgr.health_port}/healthz", flush=True)
        if args.embedded:
            summary = asyncio.create_task(_summary(mgr, controllers), name="summary")
        await mgr.wait()
    except LeaderElectionLost as exc:
        print(f"asyncop: {exc}; exiting so that a new leader takes over", file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"asyncop: a controller failed: {exc!r}", file=sys.stderr)
        return 1
    finally:
        if summary is not None:
            summary.cancel()
            await asyncio.wait([summary])
        await mgr.stop()
    return 0


async def preflight(
    config: ClientConfig, kinds: list[Kind], namespaces: list[str], *, install_crds: bool
) -> None:
    """Fail fast with one clear line: server reachable, CRDs present, RBAC allows listing
    every watched kind."""
    async with Client(config, max_retries=0, timeout=10.0) as client:
        ns = namespaces[0] if namespaces else None
        if install_crds:
            await install_bundled_crds(client, [k for k in kinds if k in CUSTOM_KINDS])
        for kind in kinds:
            try:
                await client.list(kind, namespace=ns, limit=1)
            except TransportError as exc:
                raise UserError(
                    f"cannot reach the API server at {config.host} ({_reason(exc)}); check "
                    "--kubeconfig/--context, or use --embedded"
                ) from None
            except NotFound:
                raise UserError(
                    f"the CRD {kind.resource} is not installed; rerun with --install-crds "
                    "(or: asyncop crds | kubectl apply -f -)"
                ) from None
            except Forbidden as exc:
                raise UserError(
                    f"RBAC forbids listing {kind.resource} ({exc.message}); grant the rules "
                    "of the Helm chart's ClusterRole, or use a more privileged kubeconfig"
                ) from None
            except ApiError as exc:
                raise UserError(f"the API server refused: {exc}") from None


def _reason(exc: BaseException) -> str:
    """The root cause of a transport failure in a few words (e.g. `Connection refused`)."""
    seen: BaseException | None = exc
    while seen is not None:
        os_error = getattr(seen, "os_error", None) or (seen if isinstance(seen, OSError) else None)
        if isinstance(os_error, OSError) and os_error.strerror:
            return str(os_error.strerror)
        seen = seen.__cause__
    return type(exc).__name__


async def install_bundled_crds(client: Client, wanted: list[Kind]) -> None:
    """Server-side apply the bundled CRDs (all of them) and wait until they are served."""
    try:
        for crd in load_crds():
            await client.apply(builtin_kinds.CRD, crd, field_manager=FIELD_MANAGER)
    except Forbidden as exc:
        raise UserError(
            f"RBAC forbids installing CRDs ({exc.message}); ask an admin to run "
            "`asyncop crds | kubectl apply -f -`"
        ) from None
    except TransportError as exc:
        raise UserError(
            f"cannot reach the API server at {client.config.host} ({_reason(exc)})"
        ) from None
    clock: Clock = client.clock
    deadline = clock.monotonic() + 30.0
    for kind in wanted:
        while True:
            try:
                await client.list(kind, limit=1)
                break
            except NotFound:
                if clock.monotonic() > deadline:
                    raise UserError(f"the CRD {kind.resource} was not served within 30s") from None
                await clock.sleep(0.05)


def load_manifests(path: Path) -> list[RawObject]:
    """Every YAML document under `path` (a file, or a directory's *.yaml/*.yml, sorted)."""
    files = (
        sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        if path.is_dir() else [path]
    )
    docs: list[RawObject] = []
    for file in files:
        try:
            loaded = list(yaml.safe_load_all(file.read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError) as exc:
            raise UserError(f"cannot read {file}: {str(exc).splitlines()[0]}") from None
        for doc in loaded:
            if not doc:
                continue
            if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                raise UserError(f"{file}: a document without apiVersion/kind")
            if doc["kind"] == "List":
                docs.extend(doc.get("items") or [])
            else:
                docs.append(doc)  # type: ignore[arg-type]
    return docs


def _kind_of(doc: RawObject) -> Kind:
    known = [v for v in vars(builtin_kinds).values() if isinstance(v, Kind)] + list(CUSTOM_KINDS)
    for kind in known:
        if kind.api_version == doc.get("apiVersion") and kind.kind == doc.get("kind"):
            return kind
    raise UserError(
        f"cannot apply {doc.get('kind')} {doc.get('metadata', {}).get('name')}: unknown kind "
        f"{doc.get('apiVersion')}/{doc.get('kind')} (use kubectl apply for it)"
    )


async def apply_manifests(config: ClientConfig, docs: list[RawObject]) -> None:
    """Server-side apply each document (namespaced ones default to the context namespace)."""
    async with Client(config, max_retries=2) as client:
        for doc in docs:
            kind = _kind_of(doc)
            meta = doc.setdefault("metadata", {})
            if kind.namespaced:
                meta.setdefault("namespace", config.namespace)
            try:
                await client.apply(kind, doc, field_manager=FIELD_MANAGER)
            except AlreadyExists:
                continue
            except ApiError as exc:
                raise UserError(
                    f"cannot apply {kind.kind} {meta.get('name')}: {exc.message}"
                ) from None
            print(f"applied {kind.resource} {meta.get('name')}", flush=True)


async def _summary(mgr: Manager, controllers: list[Controller]) -> None:
    """Every few seconds, one line per controller (printed when something changed)."""
    last = ""
    while True:
        await mgr.clock.sleep(SUMMARY_INTERVAL)
        parts = [f"{c.name}: {describe(mgr.cache.list(c.primary))}" for c in controllers
                 if c.primary is not None and c.primary in mgr.cache.informers()]
        line = "summary | " + " | ".join(parts)
        if parts and line != last:
            print(line, flush=True)
            last = line


def describe(objs: list[RawObject]) -> str:
    """`3 objects (DONE=2 PENDING=1)`, with `name a/b ready` for objects with replicas."""
    phases: dict[str, int] = {}
    replicas: list[str] = []
    for obj in objs:
        status = obj.get("status") or {}
        phase = status.get("phase") or status.get("state")
        if phase:
            phases[str(phase)] = phases.get(str(phase), 0) + 1
        if "availableReplicas" in status or "replicas" in (obj.get("spec") or {}):
            want = (obj.get("spec") or {}).get("replicas", "?")
            have = status.get("availableReplicas", 0)
            replicas.append(f"{obj['metadata']['name']} {have}/{want} ready")
    text = f"{len(objs)} object{'s' if len(objs) != 1 else ''}"
    if phases:
        text += " (" + " ".join(f"{k}={v}" for k, v in sorted(phases.items())) + ")"
    if replicas:
        text += " " + ", ".join(replicas[:5])
    return text


# -- apiserver -----------------------------------------------------------------------------------
def _run_apiserver(args: argparse.Namespace) -> int:
    from asyncop.apiserver.main import serve

    if args.crds and not Path(args.crds).is_dir():
        raise UserError(f"--crds {args.crds}: not a directory")
    try:
        asyncio.run(serve(host=args.host, port=args.port, kubeconfig_out=args.kubeconfig_out,
                          crds_dir=args.crds, simulators=not args.no_simulators))
    except OSError as exc:
        raise UserError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    return 0
