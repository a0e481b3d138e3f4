"""`asyncop init` scaffolds a chaos test (tests/test_chaos.py) that passes as written.

In-process: a project is scaffolded into a temporary directory, a kind is added with
`create api` (its scaffolded controller records the generation it acted on), and the
generated test function is awaited as pytest would: the operator's replicas under a short
seeded soak over copies of the sample, every invariant kept. (tests/e2e/test_tutorial.py runs
the same file through a fresh project's `make test`, before and after the tutorial's edits.)
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

from asyncop.cli import amain


@pytest.mark.timeout(90)
async def test_the_scaffolded_chaos_test_passes(workdir: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert await amain(["init", "--name", "chaos-operator", "--domain", "example.com"]) == 0
    assert await amain(["create", "api", "--group", "cache", "--version", "v1alpha1",
                 "--kind", "Memcached"]) == 0
    assert "wrote tests/test_chaos.py" in capsys.readouterr().out.splitlines()
    sys.path.insert(0, str(workdir))
    spec = importlib.util.spec_from_file_location("scaffolded_chaos",
                                                  workdir / "tests" / "test_chaos.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert [i.name for i in module.scenario.invariants] == ["memcached-observes-generation"]
    test = module.test_the_operator_keeps_its_invariants_under_chaos
    assert inspect.iscoroutinefunction(test)
    await test()  # raises SoakFailed, naming the invariants, if any fails
