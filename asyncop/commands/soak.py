"""`asyncop soak [TARGET]`: an operator under chaos (asyncop.testing.chaos), one JSON line.

TARGET names a `Scenario` — `path/to/file.py[:attr]` or `pkg.module[:attr]`: that
attribute, or the module's one Scenario — or, failing that, an operator as `asyncop run`
takes it, whose scenario is then `Scenario.for_operator` over the project's samples
(`config/samples/`). Without TARGET: the project's operator that way, or outside a project
the bundled operators' scenario (what `make soak` runs).

`--minutes` is virtual time of workload and faults (real time at `--rate 1`); then the world
must converge within `--converge-within` virtual seconds. The report is ONE JSON line on
stdout (docs/soak.md, "Reading the JSON line"), with `reproduce`: this command again, for
the same seed. Exit 0: every invariant held; 1: any violation; 2: a user error, one line.

Invariant: this is the one module of the package that imports the test kit (the command
*is* the test kit, run from the command line; pyproject.toml's import-linter contract lists
the exception).
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from asyncop.commands.errors import UserError
from asyncop.commands.eventloop import CHOICES
from asyncop.commands.target import TargetFailed, project_config, resolve_operator
from asyncop.crd import CRDError
from asyncop.operator import Operator, OperatorError, TargetError, load_operator
from asyncop.operator.inspect import inspect
from asyncop.operator.loader import load_module

if TYPE_CHECKING:  # imported when the command runs: the rest of the CLI starts without it
    from asyncop.testing.chaos import Scenario

BUNDLED = "asyncop.testing.chaos.bundled:SCENARIO"


HELP = "run an operator under chaos: replicas, faults, invariants; one JSON line"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`asyncop soak`'s options, on its subparser."""
    p.add_argument("target", nargs="?", default=None, metavar="TARGET",
                   help="a file or module with a Scenario (path/to/chaos.py[:attr], "
                   "pkg.module[:attr]) or an operator as for `run` (default: the project's "
                   "operator, else the bundled one); put it before --faults")
    p.add_argument("--minutes", type=float, default=10.0,
                   help="virtual minutes of workload and faults (default 10)")
    p.add_argument("--seed", type=int, default=1, help="the seed (default 1)")
    p.add_argument("--replicas", type=int, default=3, help="operator replicas (default 3)")
    p.add_argument("--sharding", action=argparse.BooleanOptionalAction, default=False,
                   help="share the work over shards instead of electing a leader")
    p.add_argument("--shards", type=int, default=16, metavar="N",
                   help="virtual shards with --sharding (default 16)")
    p.add_argument("--faults", action="extend", nargs="+", default=[], metavar="KIND=WEIGHT",
                   help="reweigh fault kinds (0 turns one off; a kind alone: weight 1), e.g. "
                   "sigkill=4 wipe=0 wipe_hot=1 (the kinds: docs/soak.md)")
    p.add_argument("--rate", type=float, default=1.0,
                   help="virtual seconds per real second (default 1: real time)")
    p.add_argument("--fault-every", type=float, default=15.0, metavar="SECONDS",
                   help="virtual seconds between faults, on average (default 15)")
    p.add_argument("--converge-within", type=float, default=150.0, metavar="SECONDS",
                   help="bound on convergence after the last fault (default 150)")
    p.add_argument("--workers", type=int, default=None,
                   help="workers per controller (default: each controller's own)")
    p.add_argument("--event-loop", choices=CHOICES, default="auto",
                   help="auto (default): uvloop when installed (asyncop[fast]), else asyncio")


def fault_weights(items: list[str]) -> dict[str, float]:
    """FAULT_KINDS reweighed by `kind=weight` items (one line naming what is wrong)."""
    from asyncop.testing.chaos import FAULT_KINDS

    weights = dict(FAULT_KINDS)
    for item in items:
        name, sep, text = item.partition("=")
        if name not in weights:
            raise UserError(f"--faults: unknown fault kind {name!r}; known: "
                            f"{', '.join(FAULT_KINDS)}")
        try:
            weight = float(text) if sep else 1.0
        except ValueError:
            weight = math.nan
        if not (math.isfinite(weight) and weight >= 0):
            raise UserError(f"--faults {item}: the weight must be a number >= 0")
        weights[name] = weight
    return weights


def _for_operator(op: Operator) -> Scenario:
    from asyncop.testing.chaos import Scenario

    if op.empty:
        raise UserError(f"{op.name} has no controllers yet; add one with `asyncop create api`")
    config = project_config()
    samples = config.root / "config" / "samples" if config is not None else None
    try:
        return Scenario.for_operator(
            op, samples=samples if samples is not None and samples.is_dir() else None)
    except (OperatorError, CRDError) as exc:
        raise UserError(str(exc)) from None
    except ValueError as exc:  # the samples
        raise UserError(f"{op.name}: {exc}") from None


def resolve_scenario(target: str | None) -> Scenario:
    """The Scenario TARGET names (see the module docstring)."""
    from asyncop.testing.chaos import Scenario

    if target is None:
        config = project_config()
        if config is not None and config.operator is not None:
            return _for_operator(resolve_operator(None))
        target = BUNDLED
    cwd = str(Path.cwd())
    if cwd not in sys.path:  # the project's package, as `python -m` would find it
        sys.path.insert(0, cwd)
    spec, _, attr = target.partition(":")
    try:
        module = load_module(spec)
    except TargetError as exc:
        raise TargetFailed(str(exc), exc.user_traceback) from None
    if attr:
        if not hasattr(module, attr):
            raise UserError(f"{module.__name__} has no attribute {attr!r} (in {target})")
        value = getattr(module, attr)
        if isinstance(value, Scenario):
            return value
    else:
        found = {k: v for k, v in vars(module).items() if isinstance(v, Scenario)}
        if len(found) == 1:
            return next(iter(found.values()))
        if len(found) > 1:
            names = sorted(found)
            raise UserError(f"{module.__name__} defines several Scenarios ({', '.join(names)}); "
                            f"pick one: {spec}:{names[0]}")
    try:
        op = load_operator(target)
    except TargetError as exc:
        raise TargetFailed(f"{exc}; or declare a Scenario (asyncop.testing.chaos)",
                           exc.user_traceback) from None
    return _for_operator(op)


def reproduce(args: argparse.Namespace) -> str:
    """This run's command line, normalised (the same seed replays the same schedule)."""
    argv = ["asyncop", "soak"] + ([args.target] if args.target else [])
    argv += ["--minutes", f"{args.minutes:g}", "--seed", str(args.seed),
             "--replicas", str(args.replicas)]
    if args.sharding:
        argv += ["--sharding", "--shards", str(args.shards)]
    if args.rate != 1.0:
        argv += ["--rate", f"{args.rate:g}"]
    if args.fault_every != 15.0:
        argv += ["--fault-every", f"{args.fault_every:g}"]
    if args.converge_within != 150.0:
        argv += ["--converge-within", f"{args.converge_within:g}"]
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    if args.faults:
        argv += ["--faults", *args.faults]
    return shlex.join(argv)


async def soak_command(args: argparse.Namespace) -> int:
    from asyncop.testing.chaos import SoakConfig, soak

    if not (math.isfinite(args.minutes) and args.minutes > 0):
        raise UserError("--minutes must be a positive number")
    weights = fault_weights(args.faults)
    try:
        config = SoakConfig(seed=args.seed, seconds=args.minutes * 60, rate=args.rate,
                            replicas=args.replicas, sharded=args.sharding, shards=args.shards,
                            faults=weights, fault_every=args.fault_every,
                            converge_within=args.converge_within, workers=args.workers)
    except ValueError as exc:
        raise UserError(_flag(str(exc))) from None
    scenario = resolve_scenario(args.target)
    if scenario.operator.empty:
        raise UserError(f"{scenario.operator.name} has no controllers yet; add one with "
                        "`asyncop create api`")
    try:
        inspect(scenario.operator)  # the controllers build (the soak builds them again)
    except (OperatorError, CRDError) as exc:
        raise UserError(str(exc)) from None
    report = await soak(scenario, config, command=reproduce(args))
    print(report.json(), flush=True)
    return 0 if report.ok else 1


def _flag(message: str) -> str:
    """SoakConfig's field names as the command's flags."""
    for field, flag in (("rate", "--rate"), ("replicas", "--replicas"),
                        ("shards", "--shards"), ("fault_every", "--fault-every"),
                        ("converge_within", "--converge-within"), ("workers", "--workers")):
        message = message.replace(f"SoakConfig.{field} ", f"{flag} ")
    return message
