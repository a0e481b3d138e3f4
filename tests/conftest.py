"""Shared test configuration.

The asyncop test kit (`asyncop.testing.fixtures`: `apiserver`, `apiserver_no_sim`, `kubeconfig`,
`fake_clock`) is loaded through the `pytest11` entry point declared in pyproject.toml, so
operator authors who install asyncop get the same fixtures without any conftest.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh current directory for commands that write a project (`init`, `create api`,
    `generate`, `soak`); the modules the test imported from it and its sys.path entries are
    forgotten afterwards, so the next test's project of the same name is imported afresh."""
    path, modules = list(sys.path), set(sys.modules)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]
