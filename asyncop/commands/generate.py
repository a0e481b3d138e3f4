"""`asyncop generate [TARGET] [--check]` and `asyncop crds [TARGET]`.

`generate` writes what the code implies — the CRD YAMLs (`[tool.asyncop] crds`, or `--crds`)
and the chart's `crds/` and `files/rbac-rules.yaml` (`chart`, or `--chart`) — like
kubebuilder's `make manifests`; with `--check` it writes nothing and fails, naming each file,
when anything is out of date (the CI guard against hand edits and forgotten regeneration).
`crds` prints the operator's CRDs as one YAML stream (for `kubectl apply -f -`).

Invariant: a bad model (a non-structural schema, a field with no OpenAPI mapping, a missing
group) is one `UserError` line naming the model and field, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from asyncop.commands.errors import UserError
from asyncop.commands.target import project_config, resolve_operator
from asyncop.crd import CRDError
from asyncop.operator import OperatorError
from asyncop.operator.inspect import Inspection, inspect
from asyncop.project.generate import crd_texts, drift, expected_files, sync


def _inspect(target: str | None) -> Inspection:
    op = resolve_operator(target)
    try:
        return inspect(op)
    except (OperatorError, CRDError) as exc:
        raise UserError(str(exc)) from None


def generate_command(args: argparse.Namespace) -> int:
    config = project_config()
    found = _inspect(args.target)
    crds_dir = Path(args.crds) if args.crds else (config.crds if config else None)
    chart_dir = Path(args.chart) if args.chart else (config.chart if config else None)
    if crds_dir is None and chart_dir is None:
        raise UserError(
            "nowhere to generate to: set crds/chart under [tool.asyncop] in pyproject.toml, "
            "or pass --crds DIR / --chart DIR"
        )
    try:
        files = expected_files(found, crds_dir=crds_dir, chart_dir=chart_dir)
    except CRDError as exc:
        raise UserError(str(exc)) from None
    result = drift(files, crds_dir=crds_dir, chart_dir=chart_dir)
    if args.check:
        for path in result.stale:
            print(f"out of date: {_rel(path)}", file=sys.stderr)
        for path in result.extra:
            print(f"not generated: {_rel(path)}", file=sys.stderr)
        if not result.clean:
            raise UserError("generated files are out of date; run `asyncop generate`")
        print(f"generated files are up to date ({_files(len(files))})")
        return 0
    sync(files, result)
    for path in result.stale:
        print(f"wrote {_rel(path)}")
    for path in result.extra:
        print(f"removed {_rel(path)}")
    if result.clean:
        print(f"generated files are up to date ({_files(len(files))})")
    return 0


def crds_command(args: argparse.Namespace) -> int:
    found = _inspect(args.target)
    try:
        texts = crd_texts(found)
    except CRDError as exc:
        raise UserError(str(exc)) from None
    sys.stdout.write("---\n".join(texts.values()))
    return 0


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
