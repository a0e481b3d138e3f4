"""Launcher of the embedded API server for the operator benchmarks (its own process).

`python bench/_server.py --kubeconfig-out PATH [--pod-run-duration 0]`: like
`python -m asyncop.apiserver.main`, plus the bundled CRDs installed, pods that complete at
once (the pod simulator's run duration), and a watch history deep enough that a slow
watcher of a 10k-object run resumes instead of re-listing. Prints the same first stdout line
(`asyncop apiserver listening on URL`) once ready; stops cleanly on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import structlog

from asyncop.apiserver.main import serve
from asyncop.apiserver.simulators.config import SimulatorConfig

CRDS = Path(__file__).resolve().parent.parent / "crds"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig-out", required=True)
    parser.add_argument("--pod-run-duration", type=float, default=0.0)
    parser.add_argument("--history", type=int, default=200_000)
    args = parser.parse_args()
    structlog.configure(
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
    )
    # serve() passes `simulators` on to ApiServer, which takes a SimulatorConfig too (its own
    # annotation says bool).
    sims: Any = SimulatorConfig(pod_run_duration=args.pod_run_duration)
    asyncio.run(serve(port=0, kubeconfig_out=args.kubeconfig_out, crds_dir=str(CRDS),
                      simulators=sims, history=args.history, watch_queue_size=100_000))


if __name__ == "__main__":
    main()
