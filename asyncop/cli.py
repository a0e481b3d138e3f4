"""The `asyncop` command line: run, debug, init, create api, generate, crds, soak, apiserver,
version.

This module parses and dispatches; the commands live in `asyncop.commands` (`run`:
an operator — the bundled one or a user's TARGET — until Ctrl-C/SIGTERM; `generate`/`crds`:
the CRDs and chart files the code implies; `debug`: ask a running operator why an object did
or didn't reconcile; `soak`: an operator under chaos, one JSON line, exit 1 on a violation).
`apiserver` runs the embedded API server alone.

Invariant: every user error (bad flag, unreadable kubeconfig, unreachable server, unknown
controller, missing CRD, a 403) ends as ONE line on stderr that names the fix, exit code 2,
no traceback. Losing the lease (or a crashed controller) exits 1, like controller-runtime.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from asyncop import __version__
from asyncop.client import ConfigError, TransportError
from asyncop.commands import debug as debug_cmd
from asyncop.commands import eventloop
from asyncop.commands.errors import UserError
from asyncop.commands.eventloop import CHOICES
from asyncop.commands.generate import crds_command, generate_command
from asyncop.commands.run import describe, run_command
from asyncop.commands.scaffold import create_api_command, init_command
from asyncop.commands.soak import HELP as SOAK_HELP
from asyncop.commands.soak import add_arguments as add_soak_arguments
from asyncop.commands.soak import soak_command
from asyncop.commands.target import TargetFailed
from asyncop.controllers.registry import CONTROLLERS

__all__ = ["UserError", "amain", "build_parser", "describe", "main"]

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="asyncop", description="asyncio Kubernetes operators")
    sub = parser.add_subparsers(
        dest="command",
        metavar="{run,debug,init,create,generate,crds,soak,apiserver,version}")
    sub.required = True
    run = sub.add_parser("run", help="run an operator's controllers (default: the bundled ones)")
    run.add_argument("target", nargs="?", default=None, metavar="TARGET",
                     help="path/to/operator.py, pkg.module or pkg.module:attr (default: the "
                     "bundled controllers); put it before options that take several values")
    run.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    run.add_argument("--context", help="kubeconfig context")
    run.add_argument("--embedded", action="store_true",
                     help="start an in-process API server instead of using a cluster")
    run.add_argument("--apply", action="extend", nargs="+", default=[], metavar="PATH",
                     help="apply YAML files/directories (multi-document) before the controllers "
                     "start")
    run.add_argument("--controllers", default=None,
                     help="comma-separated controllers of the target (default: all; bundled: "
                     f"{','.join(CONTROLLERS)})")
    run.add_argument("--namespace", action="extend", nargs="+", default=[], metavar="NS",
                     help="watch only these namespaces (default: all)")
    run.add_argument("--workers", type=int, default=None, help="workers per controller")
    run.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=False,
                     help="run leader election on a Lease (for several replicas)")
    run.add_argument("--leader-election-namespace", default=None, metavar="NS",
                     help="namespace of the Leases (leader election or sharding; default: "
                     "the kubeconfig context's)")
    run.add_argument("--sharding", action=argparse.BooleanOptionalAction, default=False,
                     help="share the work across replicas: every replica reconciles the keys "
                     "of the virtual shards whose Leases it holds")
    run.add_argument("--shards", type=int, default=16, metavar="N",
                     help="virtual shards with --sharding (1-4096, default 16)")
    run.add_argument("--lease-duration", type=float, default=15.0, metavar="SECONDS")
    run.add_argument("--renew-deadline", type=float, default=10.0, metavar="SECONDS")
    run.add_argument("--retry-period", type=float, default=2.0, metavar="SECONDS")
    run.add_argument("--metrics-bind-address", default=None, metavar="HOST:PORT",
                     help='"0" disables (default: 0, or 127.0.0.1:0 with --embedded)')
    run.add_argument("--health-probe-bind-address", default=None, metavar="HOST:PORT")
    run.add_argument("--log-format", choices=["console", "json"], default=None)
    run.add_argument("--log-level", default="info")
    run.add_argument("--install-crds", action="store_true",
                     help="install (server-side apply) the operator's CRDs before starting")
    run.add_argument("--gc-freeze", action=argparse.BooleanOptionalAction, default=True,
                     help="freeze the garbage collector's survivors after each full "
                     "collection, so pauses stay short with a big cache (default: on)")
    run.add_argument("--event-loop", choices=CHOICES, default="auto",
                     help="auto (default): uvloop when installed (asyncop[fast]), else asyncio")
    run.add_argument("--debug-endpoints", action="store_true",
                     help="keep each object's last reconciles and serve /debug/reconciles next "
                     "to /metrics (for `asyncop debug`; a non-loopback metrics address needs "
                     "--metrics-secure)")
    run.add_argument("--reconcile-history", type=int, default=8, metavar="N",
                     help="reconciles kept per object with --debug-endpoints (default 8)")
    run.add_argument("--metrics-secure", action="store_true",
                     help="serve metrics (and /debug) over HTTPS to callers whose bearer "
                     "token the API server authenticates and RBAC allows (TokenReview + "
                     "SubjectAccessReview, as controller-runtime)")
    run.add_argument("--metrics-cert-dir", default=None, metavar="DIR",
                     help="tls.crt and tls.key for --metrics-secure (default: self-signed)")
    debug_cmd.add_parser(sub)
    init = sub.add_parser("init", help="scaffold a new operator project")
    init.add_argument("--name", required=True, help="project name, e.g. memcached-operator")
    init.add_argument("--domain", required=True, help="API group domain, e.g. example.com")
    init.add_argument("--dir", default=".", help="where to write it (default: here)")
    init.add_argument("--package", default=None, help="Python package (default: from --name)")
    create = sub.add_parser("create", help="add to an operator project")
    create_sub = create.add_subparsers(dest="what", metavar="{api}")
    create_sub.required = True
    capi = create_sub.add_parser("api", help="a typed resource, its controller, test, sample")
    capi.add_argument("--group", required=True, help="group (the domain is appended)")
    capi.add_argument("--version", required=True, help="e.g. v1alpha1")
    capi.add_argument("--kind", required=True, help="UpperCamelCase, e.g. Memcached")
    capi.add_argument("--plural", default=None, help="default: the kind pluralised")
    capi.add_argument("--cluster", action="store_true", help="cluster-scoped (default: "
                      "namespaced)")
    api = sub.add_parser("apiserver", help="run the embedded API server on its own")
    api.add_argument("--port", type=int, default=0)
    api.add_argument("--host", default="127.0.0.1")
    api.add_argument("--kubeconfig-out", required=True, metavar="PATH")
    api.add_argument("--crds", default=None, metavar="DIR", help="CRD YAMLs to install")
    api.add_argument("--no-simulators", action="store_true")
    api.add_argument("--tls", action="store_true",
                     help="serve HTTPS with a generated self-signed CA (written into the "
                     "kubeconfig); a token is always required with it (generated when "
                     "none is given)")
    api.add_argument("--token", default=None, metavar="TOKEN",
                     help="require `Authorization: Bearer TOKEN` (written into the kubeconfig, "
                     "mode 0600); default: $ASYNCOP_APISERVER_TOKEN, which keeps it out of "
                     "`ps`, else none (with --tls: a generated one)")
    api.add_argument("--cert-dir", default=None, metavar="DIR",
                     help="where --tls keeps its certificate (default: a temporary directory)")
    api.add_argument("--event-loop", choices=CHOICES, default="auto",
                     help="auto (default): uvloop when installed (asyncop[fast]), else asyncio")
    api.add_argument("--feature-gates", default="", metavar="GATE=BOOL,...",
                     help="kube-apiserver's flag: e.g. WatchList=true (off by default in "
                     "1.33, as in kube)")
    crds = sub.add_parser("crds", help="print an operator's CRDs as YAML (default: bundled)")
    crds.add_argument("target", nargs="?", default=None, metavar="TARGET")
    gen = sub.add_parser("generate", help="write (or --check) the CRDs and chart files that "
                         "the code implies")
    gen.add_argument("target", nargs="?", default=None, metavar="TARGET",
                     help="default: [tool.asyncop] operator in pyproject.toml")
    gen.add_argument("--crds", default=None, metavar="DIR",
                     help="CRD directory (default: [tool.asyncop] crds)")
    gen.add_argument("--chart", default=None, metavar="DIR",
                     help="Helm chart directory (default: [tool.asyncop] chart)")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; fail if any generated file is out of date")
    add_soak_arguments(sub.add_parser("soak", help=SOAK_HELP))
    sub.add_parser("version", help="print the version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry point: parse, run, and turn user errors into one line + exit 2."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(args_list)
        if args.command == "apiserver":
            return _run_apiserver(args)
        return eventloop.run(amain(args_list, process=True),
                             event_loop=getattr(args, "event_loop", "auto"))
    except UserError as exc:
        return _fail(exc)
    except KeyboardInterrupt:
        return 130


async def amain(argv: Sequence[str], *, process: bool = False) -> int:
    """`main` for callers that already run an event loop (tests, embedding); `main` passes
    `process=True` (the process is the command's alone)."""
    try:
        args = build_parser().parse_args(list(argv))
        if args.command == "version":
            print(f"asyncop {__version__}")
            return 0
        if args.command == "crds":
            return crds_command(args)
        if args.command == "generate":
            return generate_command(args)
        if args.command == "init":
            return init_command(args)
        if args.command == "create":
            return create_api_command(args)
        if args.command == "debug":
            return await debug_cmd.debug_command(args)
        if args.command == "apiserver":
            raise UserError("`asyncop apiserver` runs its own event loop; call main() instead")
        if args.command == "soak":
            return await soak_command(args)
        return await run_command(args, process=process)
    except UserError as exc:
        return _fail(exc)
    except (ConfigError, TransportError) as exc:
        return _fail(UserError(f"{exc}; check --kubeconfig/--context"))


def _fail(exc: UserError) -> int:
    if isinstance(exc, TargetFailed) and exc.user_traceback:
        print(exc.user_traceback.rstrip(), file=sys.stderr)
    print(f"asyncop: error: {exc}", file=sys.stderr)
    return 2


# -- apiserver -----------------------------------------------------------------------------------
def _feature_gates(text: str) -> dict[str, bool]:
    """`A=true,B=false` (kube-apiserver's --feature-gates syntax) as a dict."""
    gates: dict[str, bool] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name or value.lower() not in ("true", "false"):
            raise UserError(f"--feature-gates: {part!r} is not GATE=true or GATE=false")
        gates[name] = value.lower() == "true"
    return gates


def _run_apiserver(args: argparse.Namespace) -> int:
    from asyncop.apiserver.bindpolicy import InsecureBind, check_bind
    from asyncop.apiserver.main import serve

    if args.crds and not Path(args.crds).is_dir():
        raise UserError(f"--crds {args.crds}: not a directory")
    token = args.token or os.environ.get("ASYNCOP_APISERVER_TOKEN") or None
    if token is not None and (not token.isprintable() or " " in token):
        raise UserError("--token must be printable text without spaces")
    if args.cert_dir and not args.tls:
        raise UserError("--cert-dir needs --tls")
    try:
        check_bind(args.host, tls=args.tls, authenticated=token is not None)
    except InsecureBind as exc:
        raise UserError(str(exc)) from None
    if args.tls and token is None:
        # kubectl (client-go) prompts for a username when an HTTPS user has no credential,
        # which breaks every non-interactive client: always write one, as kind does (a
        # non-loopback bind still needs a token the user chose, above)
        token = secrets.token_urlsafe(32)
    options = {"tls": args.tls, "token": token, "cert_dir": args.cert_dir,
               "feature_gates": _feature_gates(args.feature_gates)}
    try:
        eventloop.run(serve(host=args.host, port=args.port, kubeconfig_out=args.kubeconfig_out,
                            crds_dir=args.crds, simulators=not args.no_simulators,
                            **options),
                      event_loop=args.event_loop)
    except OSError as exc:
        raise UserError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    return 0
