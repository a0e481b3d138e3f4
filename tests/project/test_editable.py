"""asyncop/project/editable.py: an asyncop checkout linked into a venv, editable, untouched.

A bare venv (no pip in it) gets the link; its own interpreter then finds the `asyncop`
distribution (version, dependencies, entry points, PEP 610's editable direct_url) and the
package in the checkout; pip (this venv's, pointed at that interpreter) counts `asyncop>=X`
as installed and uninstalls exactly what was written. The checkout is a copy holding the
files the link reads, and no file in it is created, changed or removed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
EDITABLE = Path("asyncop/project/editable.py")


def snapshot(tree: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(tree)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(tree.rglob("*"))}


def run(python: Path, *argv: str) -> str:
    """`python argv...` from the venv's directory (not this checkout, whose egg-info `-c`
    would find first)."""
    done = subprocess.run([str(python), *argv], capture_output=True, text=True, timeout=60,
                          cwd=python.parents[1])
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_checkout_is_linked_editable_and_left_untouched(tmp_path: Path) -> None:
    checkout = tmp_path / "asyncop-src"
    (checkout / "asyncop" / "project").mkdir(parents=True)
    for rel in ("pyproject.toml", "asyncop/__init__.py", str(EDITABLE)):
        shutil.copy(ROOT / rel, checkout / rel)
    before = snapshot(checkout)
    env = tmp_path / "venv"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"

    out = run(python, "-I", str(checkout / EDITABLE), str(checkout))
    assert out.startswith(f"linked {checkout} into ")
    found = json.loads(run(python, "-c", """if True:
        import importlib.metadata as m, importlib.util as u, json
        d = m.distribution("asyncop")
        print(json.dumps({"version": d.version, "requires": d.requires,
                          "direct_url": json.loads(d.read_text("direct_url.json")),
                          "entry_points": sorted([e.group, e.name, e.value]
                                                 for e in d.entry_points),
                          "origin": u.find_spec("asyncop").origin}))"""))
    assert found["version"] == "0.1.0"
    assert found["direct_url"] == {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    assert found["origin"] == str(checkout / "asyncop" / "__init__.py")
    assert ["pytest11", "asyncop", "asyncop.testing.fixtures"] in found["entry_points"]
    assert ["console_scripts", "asyncop", "asyncop.cli:main"] in found["entry_points"]
    assert any(r.startswith("aiohttp") for r in found["requires"])
    assert 'pytest>=8; extra == "test"' in found["requires"]
    assert (env / "bin" / "asyncop").read_text().startswith(f"#!{python}")

    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    satisfied = subprocess.run([*pip, "install", "--no-index", "--no-deps", "asyncop>=0.1.0"],
                               capture_output=True, text=True, timeout=120)
    assert satisfied.returncode == 0, satisfied.stderr
    assert "Requirement already satisfied: asyncop>=0.1.0" in satisfied.stdout
    # linking again replaces the link; pip removes all of it
    run(python, "-I", str(checkout / EDITABLE), str(checkout))
    removed = subprocess.run([*pip, "uninstall", "-y", "asyncop"], capture_output=True,
                             text=True, timeout=120)
    assert removed.returncode == 0, removed.stderr
    assert not (env / "bin" / "asyncop").exists()
    assert not list(env.rglob("*asyncop*"))
    assert snapshot(checkout) == before


def test_a_directory_that_is_not_an_asyncop_checkout_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "1"\n')
    done = subprocess.run([sys.executable, "-I", str(ROOT / EDITABLE), str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"editable.py: error: {tmp_path} is not an asyncop checkout (its pyproject.toml does "
        "not declare the project 'asyncop' beside an asyncop/ package)")


def test_an_asyncop_installed_by_pip_is_not_shadowed_but_refused(tmp_path: Path) -> None:
    env = tmp_path / "venv"
    venv.create(env, with_pip=False)
    site = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "asyncop").mkdir()
    (site / "asyncop-0.0.9.dist-info").mkdir()
    (site / "asyncop-0.0.9.dist-info" / "INSTALLER").write_text("pip\n")
    done = subprocess.run([str(env / "bin" / "python"), "-I", str(ROOT / EDITABLE), str(ROOT)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"editable.py: error: asyncop is already installed in {site} (asyncop-0.0.9.dist-info); "
        "uninstall it first (pip uninstall asyncop), or start from a fresh venv")
    assert not (site / "_asyncop_checkout.pth").exists()
