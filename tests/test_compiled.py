"""The modules setup.py compiles (compiled.txt) run compiled only while their build is current.

Python imports a compiled module in place of its .py, so after an edit of the .py the old
build would still run and the tests would test it. `make test` rebuilds on its own (the
Makefile's install step depends on these files); this test catches a run without it.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup_py() -> Callable[[], list[str]]:
    """setup.py's own reading of compiled.txt (importing it builds nothing)."""
    spec = importlib.util.spec_from_file_location("asyncop_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    read: Callable[[], list[str]] = module.compiled_modules
    return read


compiled_modules = _setup_py()


def test_every_listed_module_exists_and_imports() -> None:
    modules = compiled_modules()
    assert modules  # setup.py compiles something
    for path in modules:
        assert (ROOT / path).is_file(), path
        importlib.import_module(path.removesuffix(".py").replace("/", "."))


def test_no_compiled_module_is_older_than_its_source() -> None:
    for path in compiled_modules():
        source = ROOT / path
        stem = source.name.removesuffix(".py")
        builds = [*source.parent.glob(f"{stem}.*.so"), *source.parent.glob(f"{stem}__mypyc.*.so")]
        for built in builds:
            assert built.stat().st_mtime >= source.stat().st_mtime, (
                f"{built.name} is older than {source.name}: rebuild it with "
                "`.venv/bin/python -m pip install -e '.[test]'` (`make test` does)")
