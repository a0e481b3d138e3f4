"""Shared test configuration.

The asyncop test kit (`asyncop.testing.fixtures`: `apiserver`, `apiserver_no_sim`, `kubeconfig`,
`fake_clock`) is loaded through the `pytest11` entry point declared in pyproject.toml, so
operator authors who install asyncop get the same fixtures without any conftest.

The suite runs on several pytest-xdist workers at once (`-n` in pyproject's addopts), so no
test writes into the checkout: Hypothesis keeps its directory (`.hypothesis/`, its constants
and charmap caches even with `database=None`) in each worker's own temporary directory, not
in the current directory, where it would appear in the checkout while
tests/e2e/test_tutorial.py checks that a build leaves the checkout untouched.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir


@pytest.fixture(autouse=True, scope="session")
def _hypothesis_home_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> None:
    set_hypothesis_home_dir(tmp_path_factory.mktemp("hypothesis", numbered=False))


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
