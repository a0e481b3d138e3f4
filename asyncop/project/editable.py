"""Link an asyncop checkout into a virtual environment, editable, without writing into it.

`python -I /path/to/asyncop/asyncop/project/editable.py /path/to/asyncop` (what a scaffolded
project's Makefile runs when `ASYNCOP` names a checkout) makes the running interpreter's
environment see that checkout as the installed distribution `asyncop`, the way an editable
install does: a `.pth` file puts the checkout on `sys.path` (so edits take effect at once, and
mypy finds the package and its `py.typed`), and a `*.dist-info` directory carries the metadata
read from the checkout's pyproject.toml — name, version, dependencies and extras (so that
`pip install -e '.[test]'` of the project counts `asyncop>=X` as satisfied and installs what
asyncop needs), and the entry points (the `asyncop` console script, the pytest plugin). Its
RECORD lists every file written, so `pip uninstall asyncop` removes exactly those.

Why not `pip install -e /path/to/asyncop`: every pip install of a setuptools checkout runs the
build backend in it, which writes `asyncop.egg-info` there (and a non-editable one `build/`
too). Linking reads the checkout and writes only into the environment.

Invariants: standard library only (it runs before asyncop's dependencies are installed, as a
script: `-I` keeps this file's directory off `sys.path`); nothing under the checkout is
created, changed or removed; running it again replaces the previous link with the same
files; an asyncop installed there by other means is refused (uninstall it first), since its
files would shadow the checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import sysconfig
import tomllib
from pathlib import Path

DIST = "asyncop"
PTH = "_asyncop_checkout.pth"
INSTALLER = "asyncop-editable"


class LinkError(ValueError):
    """The path is not an asyncop checkout, or the environment has asyncop installed by
    other means; the message is one line naming it."""


def _project(checkout: Path) -> dict[str, object]:
    pyproject = checkout / "pyproject.toml"
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LinkError(f"{checkout} is not an asyncop checkout: cannot read {pyproject}: "
                        f"{exc}") from None
    project = data.get("project")
    if not isinstance(project, dict) or project.get("name") != DIST or not (
            checkout / DIST / "__init__.py").is_file():
        raise LinkError(f"{checkout} is not an asyncop checkout (its pyproject.toml does not "
                        f"declare the project {DIST!r} beside an {DIST}/ package)")
    return project


def _requirement(spec: str, extra: str | None) -> str:
    if extra is None:
        return spec
    requirement, _, marker = spec.partition(";")
    condition = f'extra == "{extra}"'
    if marker.strip():
        condition = f"({marker.strip()}) and {condition}"
    return f"{requirement.strip()}; {condition}"


def metadata(project: dict[str, object]) -> str:
    """The METADATA file (core metadata 2.1) of `[project]`."""
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for spec in _strings(project.get("dependencies")):
        lines.append(f"Requires-Dist: {_requirement(spec, None)}")
    extras = project.get("optional-dependencies")
    for extra, specs in (extras.items() if isinstance(extras, dict) else ()):
        lines.append(f"Provides-Extra: {extra}")
        lines.extend(f"Requires-Dist: {_requirement(s, extra)}" for s in _strings(specs))
    return "\n".join(lines) + "\n"


def entry_points(project: dict[str, object]) -> str:
    """The entry_points.txt of `[project.scripts]` and `[project.entry-points.*]`."""
    groups: dict[str, dict[str, str]] = {}
    scripts = project.get("scripts")
    if isinstance(scripts, dict):
        groups["console_scripts"] = {str(k): str(v) for k, v in scripts.items()}
    more = project.get("entry-points")
    for group, points in (more.items() if isinstance(more, dict) else ()):
        if isinstance(points, dict):
            groups[str(group)] = {str(k): str(v) for k, v in points.items()}
    return "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
                   for group, points in groups.items())


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _script(target: str) -> str:
    module, _, attr = target.partition(":")
    return (f"#!{sys.executable}\nimport sys\nfrom {module} import {attr}\n\n"
            f"if __name__ == \"__main__\":\n    sys.exit({attr}())\n")


def link(checkout: Path) -> list[Path]:
    """Link `checkout` into the running interpreter's environment; returns the files written
    (see the module docstring)."""
    checkout = checkout.resolve()
    project = _project(checkout)
    site = Path(sysconfig.get_paths()["purelib"])
    scripts_dir = Path(sysconfig.get_paths()["scripts"])
    for old in site.glob(f"{DIST}-*.dist-info"):
        installer = old / "INSTALLER"
        ours = installer.is_file() and installer.read_text(encoding="utf-8").strip() == INSTALLER
        if not ours or (site / DIST).exists():
            raise LinkError(f"asyncop is already installed in {site} ({old.name}); uninstall "
                            "it first (pip uninstall asyncop), or start from a fresh venv")
        shutil.rmtree(old)
    info = site / f"{DIST}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    files: dict[Path, str] = {
        site / PTH: f"{checkout}\n",
        info / "METADATA": metadata(project),
        info / "entry_points.txt": entry_points(project),
        info / "INSTALLER": f"{INSTALLER}\n",
        info / "direct_url.json": json.dumps({"url": checkout.as_uri(),
                                              "dir_info": {"editable": True}}) + "\n",
    }
    scripts = project.get("scripts")
    for name, target in (scripts.items() if isinstance(scripts, dict) else ()):
        files[scripts_dir / str(name)] = _script(str(target))
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        if path.parent == scripts_dir:
            path.chmod(0o755)
    record = info / "RECORD"
    # RECORD paths are relative to site-packages (a script's start with ../)
    rows = [f"{Path(os.path.relpath(path, site)).as_posix()},," for path in [*files, record]]
    record.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [*files, record]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="editable.py", description="Link an asyncop checkout into this environment "
        "(editable; nothing is written into the checkout).")
    parser.add_argument("checkout", type=Path, help="the asyncop checkout (has pyproject.toml)")
    args = parser.parse_args(argv)
    try:
        written = link(args.checkout)
    except LinkError as exc:
        print(f"editable.py: error: {exc}", file=sys.stderr)
        return 2
    print(f"linked {args.checkout.resolve()} into {written[0].parent} (asyncop, editable)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
