"""`asyncop debug KIND/NAME`: why did (or didn't) an object reconcile, from a running operator.

It asks the operator's `/debug/reconciles` endpoint (served next to /metrics when the
operator runs with `--debug-endpoints`; asyncop.runtime.debug builds the answer) and prints
it as `kubectl describe` would: the object as the operator's cache has it, who owns the key,
one summary line per controller, the queue state, and the last reconciles (when, trigger,
queue wait, duration, outcome, error, what each wrote). `-o json` prints the answer as is.

The address is `--address`, else `$ASYNCOP_DEBUG_ADDRESS`, else http://127.0.0.1:8080 (the
chart's metrics port, e.g. after `kubectl port-forward deploy/asyncop 8080`). A secured
endpoint (`--metrics-secure`) takes a bearer token (`--token`, `--token-file`).
Invariant: every failure (unreachable, refused, unknown kind) is one line and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import ssl
from typing import Any

import aiohttp
import orjson

from asyncop.commands.errors import UserError

DEFAULT_ADDRESS = "http://127.0.0.1:8080"


def add_parser(sub: Any) -> None:
    debug = sub.add_parser("debug", help="why did (or didn't) an object reconcile: ask a running "
                           "operator (--debug-endpoints)")
    debug.add_argument("object", metavar="KIND/NAME",
                       help="e.g. at/my-at, ats/my-at, foo.samplecontroller.k8s.io/x")
    debug.add_argument("name", nargs="?", default=None, metavar="NAME",
                       help="the name, when KIND and NAME are given apart (kubectl style)")
    debug.add_argument("-n", "--namespace", default="default",
                       help="namespace of the object (default: default)")
    debug.add_argument("--controller", default=None, help="only this controller")
    debug.add_argument("--address", default=None, metavar="URL",
                       help="the operator's metrics address (default: $ASYNCOP_DEBUG_ADDRESS, "
                       f"else {DEFAULT_ADDRESS})")
    debug.add_argument("--token", default=None,
                       help="bearer token for an endpoint behind --metrics-secure")
    debug.add_argument("--token-file", default=None, metavar="PATH")
    debug.add_argument("--insecure-skip-tls-verify", action="store_true",
                       help="accept any certificate (the operator's self-signed one)")
    debug.add_argument("-o", "--output", choices=["text", "json"], default="text")


def _target(args: argparse.Namespace) -> tuple[str, str]:
    text = args.object
    if args.name is not None:
        kind, name = text, args.name
    else:
        kind, sep, name = text.partition("/")
        if not sep:
            raise UserError(f"say which object as KIND/NAME (e.g. at/{text}), or KIND NAME")
    if not kind or not name:
        raise UserError(f"{text!r}: need both a kind and a name (KIND/NAME)")
    return kind, name


def _token(args: argparse.Namespace) -> str | None:
    if args.token_file:
        try:
            with open(args.token_file, encoding="utf-8") as fh:
                return fh.read().strip()
        except OSError as exc:
            raise UserError(f"--token-file {args.token_file}: {exc.strerror}") from None
    return str(args.token) if args.token else None


async def fetch(args: argparse.Namespace) -> dict[str, Any]:
    """The endpoint's JSON answer for the object `args` names."""
    kind, name = _target(args)
    address = (args.address or os.environ.get("ASYNCOP_DEBUG_ADDRESS")
               or DEFAULT_ADDRESS).rstrip("/")
    if "://" not in address:
        address = "http://" + address
    params = {"kind": kind, "name": name, "namespace": args.namespace}
    if args.controller:
        params["controller"] = args.controller
    headers = {"Accept": "application/json"}
    token = _token(args)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    ssl_arg: Any = True
    if args.insecure_skip_tls_verify:
        ssl_arg = ssl.create_default_context()
        ssl_arg.check_hostname = False
        ssl_arg.verify_mode = ssl.CERT_NONE
    url = f"{address}/debug/reconciles"
    try:
        async with aiohttp.ClientSession(trust_env=False) as session, session.get(
                url, params=params, headers=headers, ssl=ssl_arg,
                timeout=aiohttp.ClientTimeout(total=10)) as resp:
            data = await resp.read()
            status = resp.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UserError(f"cannot reach the operator at {address} ({exc.__class__.__name__}): "
                        "is it running with --debug-endpoints, and is its metrics port "
                        "forwarded (kubectl port-forward deploy/NAME 8080)?") from None
    try:
        body = orjson.loads(data) if data else {}
    except orjson.JSONDecodeError:
        body = {}
    if status == 404 and (not isinstance(body, dict) or "error" not in body):
        raise UserError(f"{address} does not serve /debug/reconciles: start the operator "
                        "with --debug-endpoints")
    if status in (401, 403):
        raise UserError(f"{address} refused ({status}): the endpoint is behind "
                        "--metrics-secure; pass --token or --token-file with a token allowed "
                        "to get /debug/reconciles")
    if status != 200 or not isinstance(body, dict):
        message = body.get("error") if isinstance(body, dict) else None
        raise UserError(str(message or f"{address} answered {status}"))
    return body


async def debug_command(args: argparse.Namespace) -> int:
    body = await fetch(args)
    if args.output == "json":
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
    else:
        print(render(body), end="")
    return 0


def _owner(owner: dict[str, Any]) -> str:
    mode = owner.get("mode")
    if mode == "leader-election":
        who = "this replica" if owner.get("thisReplica") else "another replica"
        return f"the leader, {owner.get('leader') or '?'} ({who}; lease {owner.get('lease')})"
    if mode == "sharding":
        if owner.get("shard") is None:
            return "unknown shard (the object is not in this replica's cache)"
        held = "held here" if owner.get("heldHere") else "not held here"
        return (f"shard {owner['shard']} ({held}; assigned to "
                f"{owner.get('assignedTo') or '?'})")
    return "this replica (no leader election or sharding)"


def _seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return "-"
    if value < 0.001:
        return f"{value * 1e6:.0f}µs"
    return f"{value * 1000:.1f}ms" if value < 1 else f"{value:.2f}s"


def _state(state: dict[str, Any]) -> str:
    if not state:
        return "-"
    parts = []
    if state.get("processing"):
        parts.append(f"{state.get('phase', 'processing')} (worker {state.get('worker')}, "
                     f"{_seconds(state.get('forSeconds'))})")
    if state.get("queued"):
        parts.append(f"queued (depth {state.get('queueDepth')})")
    if state.get("requeuedWhileProcessing"):
        parts.append("queued again once done")
    delayed = state.get("delayed")
    if delayed:
        parts.append(f"delayed until {delayed['until']} ({delayed['why']})")
    if state.get("requeues"):
        parts.append(f"{state['requeues']} retries since the last success")
    return "; ".join(parts) or "idle"


def render(body: dict[str, Any]) -> str:
    """The answer as `kubectl describe`-style text."""
    lines = [f"Name:        {body.get('name')}"]
    if body.get("namespace"):
        lines.append(f"Namespace:   {body['namespace']}")
    cached = (f"in the cache at resourceVersion {body.get('resourceVersion')}"
              if body.get("inCache") else "not in this replica's cache")
    lines += [f"Kind:        {body.get('kind')} ({cached})",
              f"Replica:     {body.get('replica')}",
              f"Owner:       {_owner(body.get('owner') or {})}"]
    for c in body.get("controllers") or []:
        running = "running" if c.get("running") else "not running"
        lines += ["", f"Controller:  {c.get('controller')} ({running}, {c.get('workers')} "
                  "workers)", f"  Summary:   {c.get('summary')}",
                  f"  State:     {_state(c.get('state') or {})}"]
        for w in (c.get("state") or {}).get("waitingForOwnWrites") or []:
            lines.append(f"    waiting for {w['kind']} {w['object']} at resourceVersion "
                         f"{w['resourceVersion']}")
        records = c.get("reconciles") or []
        if not records:
            lines.append("  Reconciles: none recorded")
            continue
        lines.append(f"  Reconciles (last {len(records)}, oldest first):")
        for r in records:
            outcome = r.get("outcome", "")
            if r.get("requeueAfterSeconds") is not None:
                outcome += f" {r['requeueAfterSeconds']:g}s"
            lines.append(f"    {r.get('started')}  {outcome}  took "
                         f"{_seconds(r.get('durationSeconds'))}, queued "
                         f"{_seconds(r.get('queuedSeconds'))}, worker {r.get('worker')}")
            lines.append(f"      trigger: {r.get('trigger')}")
            if r.get("ownWritesWaitSeconds") is not None:
                lines.append(f"      waited {_seconds(r['ownWritesWaitSeconds'])} for its "
                             "own writes" + (f" ({r['ownWritesNotSeen']} not seen)"
                                             if r.get("ownWritesNotSeen") else ""))
            if r.get("error"):
                lines.append(f"      error: {r['error']}")
            wrote = [f"{w['kind']} {w['object']}"
                     + (" (deleted)" if w.get("resourceVersion") is None
                        else f"@{w['resourceVersion']}") for w in r.get("wrote") or []]
            wrote += [f"Event {e['type']} {e['reason']}" for e in r.get("events") or []]
            if wrote:
                lines.append(f"      wrote: {', '.join(wrote)}")
            if r.get("traceID"):
                lines.append(f"      trace: {r['traceID']}")
    return "\n".join(lines) + "\n"
