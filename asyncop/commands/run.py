"""`asyncop run [TARGET]`: run an operator's controllers in a Manager until Ctrl-C/SIGTERM.

TARGET is `path/to/operator.py`, `pkg.module` or `pkg.module:attr` (see
`asyncop.operator.loader`); without it, the bundled controllers run. The cluster is resolved
like kubectl (or the embedded API server starts with `--embedded`). Before any controller
starts, `preflight` checks that the server answers, that the CRDs of the watched custom
resources are installed (or installs the operator's CRDs with `--install-crds`) and that RBAC
lets us list every watched kind.

Tracing follows the standard OTEL_* variables (`asyncop.client.tracing.from_environment`;
off unless they ask for traces); `--debug-endpoints` serves /debug/reconciles for
`asyncop debug`.

Invariant: every user error (bad flag, unloadable target, unreadable kubeconfig,
unreachable server, unknown controller, missing CRD, a 403) ends as a `UserError`: one line
that names the fix, exit code 2. Losing the lease (or a crashed controller) exits 1, like
controller-runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import structlog
import yaml

from asyncop.api import AlreadyExists, ApiError, Forbidden, Kind, NotFound, RawObject
from asyncop.api import kinds as builtin_kinds
from asyncop.client import (
    Client,
    ClientConfig,
    ConfigError,
    TransportError,
    load_config,
    tracing,
)
from asyncop.commands import eventloop
from asyncop.commands.errors import UserError
from asyncop.commands.target import operator_crds, resolve_operator
from asyncop.operator import Operator, OperatorError
from asyncop.operator.install import crd_kinds, install_crds
from asyncop.runtime.controller import Controller
from asyncop.runtime.leader import LeaderElectionConfig
from asyncop.runtime.logs import configure_logging, parse_level
from asyncop.runtime.manager import LeaderElectionLost, Manager
from asyncop.runtime.server import InsecureDebugBind, parse_bind_address
from asyncop.runtime.sharding import ShardingConfig

log = structlog.get_logger("asyncop.cli")

FIELD_MANAGER = "asyncop"
SUMMARY_INTERVAL = 5.0


def _split(values: list[str]) -> list[str]:
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def _validate(args: argparse.Namespace) -> None:
    try:
        parse_level(args.log_level)
        parse_bind_address(args.metrics_bind_address)
        parse_bind_address(args.health_probe_bind_address)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.metrics_cert_dir and not args.metrics_secure:
        raise UserError("--metrics-cert-dir needs --metrics-secure")
    if args.reconcile_history < 1:
        raise UserError("--reconcile-history must be at least 1")
    if args.debug_endpoints and not args.embedded and \
            parse_bind_address(args.metrics_bind_address) is None:
        raise UserError("--debug-endpoints serves /debug/reconciles on the metrics address: "
                        "give --metrics-bind-address (e.g. 127.0.0.1:8080)")
    if args.leader_elect and args.sharding:
        raise UserError("--leader-elect and --sharding exclude each other: one leader does all "
                        "the work, or every replica does its share")
    if not 1 <= args.shards <= 4096:
        raise UserError("--shards must be between 1 and 4096")
    if not 0 < args.retry_period < args.renew_deadline < args.lease_duration:
        raise UserError("need 0 < --retry-period < --renew-deadline < --lease-duration")
    if args.embedded and (args.kubeconfig or args.context):
        raise UserError("--embedded starts its own API server; drop --kubeconfig/--context")
    for path in args.apply:
        if not Path(path).exists():
            raise UserError(f"--apply {path}: no such file or directory")


async def run_command(args: argparse.Namespace, *, process: bool = False) -> int:
    """`asyncop run`; `process=True` when this process exists only for it (the console
    entry point), which may then configure process-wide things once for good."""
    op = resolve_operator(args.target)
    if op.empty:
        raise UserError(f"{op.name} has no controllers yet; add one with `asyncop create api`")
    names = None if args.controllers is None else _split([args.controllers])
    try:
        names = op.select(names)
    except OperatorError as exc:
        raise UserError(str(exc)) from None
    _validate(args)
    configure_logging(format=args.log_format, level=args.log_level, cache_loggers=process)
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
            config = await load_config(kubeconfig=kubeconfig)
        else:
            try:
                config = await load_config(kubeconfig=args.kubeconfig, context=args.context)
            except ConfigError as exc:
                raise UserError(str(exc)) from None
        return await _run_manager(args, config, op, names or None, docs,
                                  install=args.install_crds or args.embedded,
                                  embedded=(embedded.url, kubeconfig) if args.embedded else None)
    finally:
        if embedded is not None:
            await embedded.stop()
        if tmpdir is not None:
            tmpdir.cleanup()


def _hint(controllers: list[Controller]) -> str:
    """The kinds to try with kubectl: what the controllers watch, primary kinds first."""
    kinds = [c.primary for c in controllers if c.primary is not None]
    kinds += [w.kind for c in controllers for w in c.watches]
    return ",".join(dict.fromkeys(k.plural for k in kinds))


async def _run_manager(
    args: argparse.Namespace, config: ClientConfig, op: Operator, names: list[str] | None,
    docs: list[RawObject], *, install: bool, embedded: tuple[str, str] | None,
) -> int:
    namespaces = _split(args.namespace)
    default_bind = "127.0.0.1:0" if args.embedded else "0"
    try:
        provider = tracing.from_environment()
    except tracing.TracingUnavailable as exc:
        raise UserError(str(exc)) from None
    try:
        return await _run_traced(args, config, op, names, docs, install=install,
                                 embedded=embedded, provider=provider, namespaces=namespaces,
                                 default_bind=default_bind)
    finally:
        if provider is not None:
            await asyncio.to_thread(tracing.shutdown, provider)  # export what is buffered


async def _run_traced(
    args: argparse.Namespace, config: ClientConfig, op: Operator, names: list[str] | None,
    docs: list[RawObject], *, install: bool, embedded: tuple[str, str] | None,
    provider: Any, namespaces: list[str], default_bind: str,
) -> int:
    le = sharding = None
    lease_ns = args.leader_election_namespace or config.namespace
    timings = {"lease_duration": args.lease_duration, "renew_deadline": args.renew_deadline,
               "retry_period": args.retry_period}
    if args.leader_elect:
        le = LeaderElectionConfig(name=op.lease_name, namespace=lease_ns, **timings)
    if args.sharding:
        sharding = ShardingConfig(name=op.lease_name, namespace=lease_ns, shards=args.shards,
                                  **timings)
    try:
        mgr = Manager(
            config=config,
            namespaces=namespaces or None,
            leader_election=le,
            sharding=sharding,
            metrics_bind_address=args.metrics_bind_address or default_bind,
            health_probe_bind_address=args.health_probe_bind_address or default_bind,
            exit_on_lost_lease=True,
            install_signal_handlers=True,
            gc_freeze=args.gc_freeze,
            tracer_provider=provider,
            debug_endpoints=args.debug_endpoints,
            reconcile_history=args.reconcile_history,
            metrics_secure=args.metrics_secure,
            metrics_cert_dir=args.metrics_cert_dir,
        )
    except (InsecureDebugBind, ValueError) as exc:
        raise UserError(str(exc)) from None
    try:
        controllers = op.install(mgr, names=names, workers=args.workers)
    except OperatorError as exc:
        raise UserError(str(exc)) from None
    if embedded is not None:  # the three lines together: tools wait for the first
        url, kubeconfig = embedded
        print(f"embedded API server: {url}", flush=True)
        print(f"try: kubectl --kubeconfig {kubeconfig} get {_hint(controllers)}", flush=True)
        print(f"kubeconfig: {kubeconfig}", flush=True)
    watched = list(dict.fromkeys(w.kind for c in controllers for w in c.watches))
    crds = operator_crds(op, controllers)
    await preflight(config, watched, namespaces, install_crds=install, crds=crds)
    if docs:
        await apply_manifests(config, docs, known=crd_kinds(crds))
    try:
        await mgr.start()
    except OSError as exc:
        raise UserError(f"cannot bind the metrics/health address: {exc}") from None
    log.info("operator started", event_loop=eventloop.current(),
             controllers=[c.name for c in controllers])
    summary: asyncio.Task[None] | None = None
    try:
        if mgr.metrics_port:
            print(f"metrics: http://127.0.0.1:{mgr.metrics_port}/metrics", flush=True)
            if args.debug_endpoints:
                print(f"debug: asyncop debug KIND/NAME --address "
                      f"http://127.0.0.1:{mgr.metrics_port}", flush=True)
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
    config: ClientConfig, kinds: list[Kind], namespaces: list[str], *, install_crds: bool,
    crds: list[RawObject] | None = None,
) -> None:
    """Fail fast with one clear line: server reachable, CRDs present, RBAC allows listing
    every watched kind."""
    async with Client(config, max_retries=0, timeout=10.0) as client:
        ns = namespaces[0] if namespaces else None
        if install_crds and crds:
            await install_crd_manifests(client, crds)
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
                    "(or: asyncop crds [TARGET] | kubectl apply -f -)"
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


async def install_crd_manifests(client: Client, crds: list[RawObject]) -> None:
    """Install the operator's CRDs (see `asyncop.operator.install`), as one-line errors."""
    try:
        await install_crds(client, crds, field_manager=FIELD_MANAGER)
    except Forbidden as exc:
        raise UserError(
            f"RBAC forbids installing CRDs ({exc.message}); ask an admin to run "
            "`asyncop crds [TARGET] | kubectl apply -f -`"
        ) from None
    except TransportError as exc:
        raise UserError(
            f"cannot reach the API server at {client.config.host} ({_reason(exc)})"
        ) from None
    except ApiError as exc:
        raise UserError(f"the API server refused a CRD: {exc.message}") from None
    except TimeoutError as exc:
        raise UserError(str(exc)) from None


MAX_MANIFEST_DEPTH = 500
"""Nesting a manifest may have: PyYAML's composer recurses per level, so deeper input would
meet the interpreter's recursion limit, which other code (mypy, for one) may have raised."""


def _check_depth(text: str, file: Path) -> None:
    """UserError when a YAML text nests deeper than MAX_MANIFEST_DEPTH (counted on the
    parser's events, which do not recurse)."""
    level = 0
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            level += 1
            if level > MAX_MANIFEST_DEPTH:
                raise UserError(f"cannot read {file}: YAML nested too deeply")
        elif isinstance(event, yaml.CollectionEndEvent):
            level -= 1


def load_manifests(path: Path) -> list[RawObject]:
    """Every YAML document under `path` (a file, or a directory's *.yaml/*.yml, sorted)."""
    files = (
        sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        if path.is_dir() else [path]
    )
    docs: list[RawObject] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
            _check_depth(text, file)
            loaded = list(yaml.safe_load_all(text))
        except (OSError, yaml.YAMLError) as exc:
            raise UserError(f"cannot read {file}: {str(exc).splitlines()[0]}") from None
        except UnicodeDecodeError as exc:
            raise UserError(f"cannot read {file}: not UTF-8 text (byte {exc.start})") from None
        except RecursionError:
            raise UserError(f"cannot read {file}: YAML nested too deeply") from None
        for number, doc in enumerate(loaded, 1):
            if not doc:
                continue
            if not isinstance(doc, dict):
                raise UserError(f"{file}: document {number} is a {type(doc).__name__}, not an "
                                "object with apiVersion and kind")
            if "kind" not in doc or "apiVersion" not in doc:
                raise UserError(f"{file}: a document without apiVersion/kind")
            if doc["kind"] == "List":
                docs.extend(doc.get("items") or [])
            else:
                docs.append(doc)  # type: ignore[arg-type]
    return docs


def _kind_of(doc: RawObject, known: list[Kind]) -> Kind:
    builtins = [v for v in vars(builtin_kinds).values() if isinstance(v, Kind)]
    for kind in [*builtins, *known]:
        if kind.api_version == doc.get("apiVersion") and kind.kind == doc.get("kind"):
            return kind
    raise UserError(
        f"cannot apply {doc.get('kind')} {doc.get('metadata', {}).get('name')}: unknown kind "
        f"{doc.get('apiVersion')}/{doc.get('kind')} (use kubectl apply for it)"
    )


async def apply_manifests(
    config: ClientConfig, docs: list[RawObject], *, known: list[Kind] | None = None
) -> None:
    """Server-side apply each document (namespaced ones default to the context namespace);
    `known` adds the operator's custom kinds to the built-in ones."""
    async with Client(config, max_retries=2) as client:
        for doc in docs:
            kind = _kind_of(doc, known or [])
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
