"""Build: the embedded API server's hottest modules compiled to C with mypyc.

Everything about the package (metadata, dependencies, packages) is in pyproject.toml; this
file only adds the extension modules. The modules listed in compiled.txt are plain,
`mypy --strict` Python; mypyc compiles them to C extension modules that Python imports in
their place (docs/ARCHITECTURE.md, "Compiled modules"). Each extension is optional: where
one cannot be built (no C compiler, no Python headers) the install goes on and the module
runs as Python. `ASYNCOP_PURE=1` skips compiling altogether.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from setuptools import setup


def compiled_modules() -> list[str]:
    """The paths compiled.txt lists (comments and blank lines left out)."""
    lines = (Path(__file__).parent / "compiled.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def extensions() -> list[Any]:
    if os.environ.get("ASYNCOP_PURE") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # (a build without the build requirements: plain Python)
        return []
    # The build environment holds only the build requirements: what the compiled modules
    # import from elsewhere is type-checked by `make lint`, not here.
    built = mypycify(["--config-file=", "--ignore-missing-imports", "--follow-imports=silent",
                      *compiled_modules()], opt_level="3", separate=True)
    for extension in built:
        extension.optional = True  # a failed compile leaves the module as Python
    return list(built)


if __name__ == "__main__":  # (as setuptools runs it; tests/test_compiled.py imports it)
    setup(ext_modules=extensions())
