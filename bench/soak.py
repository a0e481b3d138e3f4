"""The chaos soak of the bundled six operators: a thin caller of asyncop.testing.chaos.

Usage: `python bench/soak.py --seed S --minutes M` (or `make soak MINUTES=M SEED=S`).
Prints ONE JSON line (`bench: "soak"`): faults injected by kind, objects processed, Ats run
(never twice), convergence times, RSS and task counts, and every invariant violation; exits
non-zero if any invariant failed. The same seed replays the same fault schedule and
workload. The engine, the bundled scenario and the fault kinds are the public test kit's
(asyncop/testing/chaos/, `asyncop soak`); docs/soak.md describes them. Here `--minutes` is
real time, about (90 s of it kept for start, convergence and stop), and `--mode auto` draws
leader election or sharding from the seed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson

from asyncop.testing.chaos import FAULT_KINDS, Report, SoakConfig, soak
from asyncop.testing.chaos.bundled import SCENARIO


def config(args: argparse.Namespace) -> SoakConfig:
    reserve = 90.0  # real seconds kept for start, convergence and stop
    seconds = max(30.0, args.minutes * 60 - reserve) * args.rate
    sharded = {"auto": None, "leader": False, "sharding": True}[args.mode]
    kinds = dict(FAULT_KINDS)
    for item in args.faults:
        name, _, weight = item.partition("=")
        if name not in kinds:
            raise SystemExit(f"unknown fault kind {name!r}; known: {', '.join(kinds)}")
        kinds[name] = float(weight or 1)
    return SoakConfig(seed=args.seed, seconds=seconds, rate=args.rate,
                      replicas=args.replicas, sharded=sharded, faults=kinds, workers=4)


def line(report: Report) -> dict[str, object]:
    """The JSON line: the report, marked as the soak benchmark's."""
    return {"bench": "soak", **report.data}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=float, default=10.0, help="real minutes, about")
    parser.add_argument("--rate", type=float, default=1.0,
                        help="virtual seconds per real second (1: real time)")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--mode", choices=["auto", "leader", "sharding"], default="auto",
                        help="auto: drawn from the seed")
    parser.add_argument("--faults", nargs="*", default=[], metavar="KIND=WEIGHT",
                        help="reweigh fault kinds (0 turns one off), e.g. wipe_hot=0.5")
    report = asyncio.run(soak(SCENARIO, config(parser.parse_args())))
    print(orjson.dumps(line(report)).decode(), flush=True)
    sys.exit(0 if report.ok else 1)


if __name__ == "__main__":
    main()
