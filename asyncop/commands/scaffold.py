"""`asyncop init` and `asyncop create api`: scaffold an operator project, add a kind to it.

Both end by generating the project's CRDs and chart files (what `asyncop generate` writes),
so a fresh project passes its own `make lint` at once. Invariant: every problem is a
`UserError` line; nothing is written when `init` would overwrite a different file.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import asyncop
from asyncop.commands.errors import UserError
from asyncop.crd import CRDError
from asyncop.operator import OperatorError, TargetError, load_operator
from asyncop.operator.inspect import inspect
from asyncop.project.config import ProjectConfig, ProjectError
from asyncop.project.generate import drift, expected_files, sync
from asyncop.project.scaffold import (
    ApiRequest,
    CrdNames,
    InitRequest,
    ScaffoldError,
    Written,
    api_files,
    builtin_clashes,
    crd_clashes,
    crd_names_in,
    init_files,
    register,
    write_kept,
    write_new,
)


def asyncop_source(package_dir: Path | None = None) -> str:
    """Where a new project's Makefile gets asyncop (`ASYNCOP`), as this environment has it: the
    checkout asyncop runs from when it runs from one (an editable install, or a source tree
    on the path: it is linked, editable, never pip-installed, which would write into it), else
    "" (an installed distribution: pip installs the version pyproject.toml asks for)."""
    source = (package_dir or Path(asyncop.__file__).resolve().parent).parent
    pyproject = source / "pyproject.toml"
    if pyproject.is_file() and 'name = "asyncop"' in pyproject.read_text(encoding="utf-8"):
        return str(source)
    return ""


def init_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    request = InitRequest(name=args.name, domain=args.domain, directory=root,
                          package=args.package, asyncop_source=asyncop_source(),
                          asyncop_version=asyncop.__version__)
    try:
        written = write_new(init_files(request))
    except ScaffoldError as exc:
        raise UserError(str(exc)) from None
    _report(written, root)
    _regenerate(root)
    print(f"next: cd {root} && make test, then asyncop create api --group <group> "
          "--version v1alpha1 --kind <Kind>")
    return 0


def create_api_command(args: argparse.Namespace) -> int:
    try:
        config = ProjectConfig.find()
    except ProjectError as exc:
        raise UserError(str(exc)) from None
    if config is None or not config.operator:
        raise UserError("no operator project here: run `asyncop init` first (pyproject.toml "
                        "with [tool.asyncop] operator = ...)")
    package = config.operator.split(":")[0].split(".")[0]
    request = ApiRequest(root=config.root, package=package, domain=config.domain,
                         group=args.group, version=args.version, kind=args.kind,
                         plural=args.plural, namespaced=not args.cluster)
    operator_py = config.root / package / "operator.py"
    crds = [*(crd_names_in(config.crds, root=config.root) if config.crds else ()),
            *bundled_crds()]
    try:
        files = api_files(request)
        notes = [*builtin_clashes(request), *crd_clashes(request, crds)]
        if not operator_py.is_file():
            raise ScaffoldError(f"{operator_py} is missing; create api registers kinds there")
        written = [*write_kept(files), register(operator_py, request)]
    except ScaffoldError as exc:
        raise UserError(str(exc)) from None
    _report(written, config.root)
    for note in notes:
        print(f"note: {note}")
    _regenerate(config.root)
    return 0


def bundled_crds() -> list[CrdNames]:
    """The CRDs of the operators bundled with asyncop (`asyncop run` without a TARGET)."""
    from asyncop.controllers.kinds import RESOURCES  # the bundled controllers load lazily

    out = []
    for resource in RESOURCES:
        info = getattr(resource, "__resource__", None)
        if info is not None:
            out.append(CrdNames(group=info.group, kind=info.kind, plural=info.plural,
                                singular=info.singular, where="bundled with asyncop"))
    return out


def _report(written: list[Written], root: Path) -> None:
    for w in written:
        rel = w.path.relative_to(root) if w.path.is_relative_to(root) else w.path
        note = " (edited: left as it is)" if w.action == "kept" else ""
        print(f"{w.action} {rel}{note}")


def _regenerate(root: Path) -> None:
    """`asyncop generate` for the project at `root`, with its package imported afresh."""
    try:
        config = ProjectConfig.load(root / "pyproject.toml")
    except ProjectError as exc:
        raise UserError(str(exc)) from None
    if config is None or not config.operator:
        return
    package = config.operator.split(":")[0].split(".")[0]
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    importlib.invalidate_caches()
    if str(config.root) not in sys.path:
        sys.path.insert(0, str(config.root))
    try:
        found = inspect(load_operator(config.operator))
        files = expected_files(found, crds_dir=config.crds, chart_dir=config.chart)
    except (TargetError, OperatorError, CRDError) as exc:
        raise UserError(f"generating {root}: {exc}") from None
    result = drift(files, crds_dir=config.crds, chart_dir=config.chart)
    sync(files, result)
    for path in [*result.stale, *result.extra]:
        print(f"generated {path.relative_to(config.root)}")
