"""The chaos soak: all six bundled operators, 2-3 replicas, a seeded fault schedule.

Usage: `python bench/soak.py --seed S --minutes M` (or `make soak MINUTES=M SEED=S`).
Prints ONE JSON line (`bench: "soak"`): faults injected by kind, objects processed, Ats run
(never twice), convergence times, RSS and task counts, and every invariant violation; exits
non-zero if any invariant failed. The same seed replays the same fault schedule and
workload. docs/soak.md describes the design, the faults and the invariants.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson
from soak_chaos import FAULT_KINDS
from soak_run import SoakConfig, soak


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
                      replicas=args.replicas, sharded=sharded, kinds=kinds)


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
    result = asyncio.run(soak(config(parser.parse_args())))
    print(orjson.dumps(result).decode(), flush=True)
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
