"""The `asyncop` command line: run, apiserver, crds, version."""

from __future__ import annotations

import sys

from asyncop import __version__


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["version"]:
        print(f"asyncop {__version__}")
        return 0
    print("asyncop: usage: asyncop {run,apiserver,crds,version}", file=sys.stderr)
    return 2
