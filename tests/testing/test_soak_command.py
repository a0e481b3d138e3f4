"""`asyncop soak`: a freshly scaffolded operator under the real command, and its user errors.

The issue's "done when": a project made by `asyncop init` + `asyncop create api`, with a
small controller and a scenario of the user's own added (chaos_project.py), runs under
`asyncop soak` for a short seeded run with 0 violations (exit 0, one JSON line); the same
project with the controller that creates a second child on a retry fails (exit 1) with the
seed and the invariant named, and the same fault schedule (the seed fixes it). Errors in
the user's input are one line and exit 2, as for the rest of the CLI.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from asyncop.cli import main
from asyncop.commands.soak import reproduce, resolve_scenario
from asyncop.testing.chaos.bundled import SCENARIO
from tests.testing.chaos_project import BROKEN, CAUGHT, CONTROLLER, MODEL, PACKAGE
from tests.testing.chaos_project import SCENARIO as USER_SCENARIO

BIN = Path(sys.executable).parent
SHORT = ["--minutes", "1", "--seed", "3", "--rate", "8", "--fault-every", "5",
         "--converge-within", "60", "--workers", "2"]


async def sh(cwd: Path, *argv: str, timeout: float = 120) -> tuple[int, str, str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def one_json_line(out: str) -> dict[str, Any]:
    lines = out.splitlines()
    assert len(lines) == 1, out
    data: dict[str, Any] = json.loads(lines[0])
    return data


@pytest.mark.timeout(150)
async def test_a_scaffolded_operator_passes_and_its_broken_twin_is_caught(tmp_path: Path) -> None:
    for argv in (["asyncop", "init", "--name", "memcached-operator", "--domain", "example.com",
                  "--dir", "proj"],
                 ["asyncop", "create", "api", "--group", "cache", "--version", "v1alpha1",
                  "--kind", "Memcached"]):
        code, out, err = await sh(tmp_path if argv[1] == "init" else tmp_path / "proj", *argv)
        assert code == 0, out + err
    project = tmp_path / "proj"
    pkg = project / PACKAGE
    # the user's edits: a model with a size, a controller, a scenario next to the tests
    (pkg / "api" / "v1alpha1" / "memcached.py").write_text(MODEL)
    controller = pkg / "controllers" / "memcached.py"
    controller.write_text(CONTROLLER)
    (project / "tests" / "test_chaos_memcached.py").write_text(USER_SCENARIO)

    code, out, err = await sh(project, "asyncop", "soak", "tests/test_chaos_memcached.py", *SHORT)
    good = one_json_line(out)
    assert code == 0, (good, err)
    assert good["ok"] is True and good["violations"] == [] and good["violation_count"] == 0
    assert good["soak"] == "memcached-operator" and good["seed"] == 3
    assert good["objects_created"]["deployments"] >= 4 and good["reconciles"] > 20
    assert good["faults_total"] >= 8
    assert good["reproduce"] == ("asyncop soak tests/test_chaos_memcached.py --minutes 1 --seed 3 "
                                 "--replicas 3 --rate 8 --fault-every 5 --converge-within 60 "
                                 "--workers 2")

    controller.write_text(BROKEN)
    code, out, err = await sh(project, "asyncop", "soak", "tests/test_chaos_memcached.py", *SHORT)
    bad = one_json_line(out)
    assert code == 1, (bad, err)
    assert bad["ok"] is False and bad["seed"] == 3 and CAUGHT in bad["violated"]
    assert any(v.split(": ", 2)[1] == CAUGHT and "deployments created" in v
               for v in bad["violations"] if v.startswith("at ")), bad["violations"]
    assert bad["reproduce"] == good["reproduce"]
    assert bad["faults"] == good["faults"]  # the seed's schedule, whatever the operator does


@pytest.mark.parametrize(("argv", "message"), [
    (["--faults", "nope=1"], "--faults: unknown fault kind 'nope'; known: sigkill, sigterm, "
     "restart, wipe, cut, storm410, throttle429, burst5xx, conflict409, slow, jump, "
     "wall_step, wipe_hot"),
    (["--faults", "cut=-1"], "--faults cut=-1: the weight must be a number >= 0"),
    (["--faults", "cut=x"], "--faults cut=x: the weight must be a number >= 0"),
    (["--minutes", "0"], "--minutes must be a positive number"),
    (["--minutes", "nan"], "--minutes must be a positive number"),
    (["--replicas", "0"], "--replicas must be at least 1, not 0"),
    (["--rate", "0"], "--rate must be positive, not 0.0"),
    (["--shards", "0", "--sharding"], "--shards must be between 1 and 4096, not 0"),
    (["--fault-every", "-1"], "--fault-every must be positive, not -1.0"),
    (["--seed", "x"], "argument --seed: invalid int value: 'x' (see `asyncop soak --help`)"),
    (["missing.py"], "missing.py: no such file"),
    (["two.py"], "two defines several Scenarios (a, b); pick one: two.py:a"),
    (["two.py:c"], "two has no attribute 'c' (in two.py:c)"),
    (["two.py:n"], "two:n is a int; point at an Operator, a setup(mgr) function or a "
                   "{name: factory} mapping; or declare a Scenario (asyncop.testing.chaos)"),
    (["empty.py"], "empty has no controllers yet; add one with `asyncop create api`"),
    (["empty.py:scenario"], "empty has no controllers yet; add one with `asyncop create api`"),
    (["setup.py"], "setup: setup(mgr) returned int; return a Controller, a list of "
                   "Controllers or None"),
])
def test_user_errors_are_one_line_and_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str],
                                            argv: list[str], message: str) -> None:
    (workdir / "two.py").write_text(
        "from asyncop.controllers.registry import OPERATOR\n"
        "from asyncop.testing.chaos import Scenario\n"
        "a = Scenario(operator=OPERATOR)\nb = Scenario(operator=OPERATOR)\nn = 1\n")
    (workdir / "empty.py").write_text(
        "from asyncop.operator import Operator\nfrom asyncop.testing.chaos import Scenario\n"
        "operator = Operator(name='empty')\nscenario = Scenario(operator=operator)\n")
    (workdir / "setup.py").write_text(
        "from asyncop.operator import Operator\nfrom asyncop.testing.chaos import Scenario\n"
        "scenario = Scenario(operator=Operator(name='setup', setup=lambda mgr: 1))\n")
    assert main(["soak", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [f"asyncop: error: {message}"], captured.err


def test_a_scenario_that_fails_to_import_shows_its_traceback(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "bad.py").write_text(
        "from asyncop.controllers.registry import OPERATOR\n"
        "from asyncop.testing.chaos import Always, Scenario\n"
        "x = Always('x', lambda s: [])\n"
        "scenario = Scenario(operator=OPERATOR, invariants=[x, x])\n")
    assert main(["soak", "bad.py"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Traceback (most recent call last):"
    assert err[-1] == ("asyncop: error: importing bad.py failed: ValueError: two invariants "
                       "are named 'x' (traceback above)")


def test_what_a_target_resolves_to(workdir: Path) -> None:
    assert resolve_scenario(None) is SCENARIO  # outside a project: the bundled operators
    (workdir / "ops.py").write_text(
        "from asyncop.controllers.registry import OPERATOR as operator\n")
    by_operator = resolve_scenario("ops.py")  # an operator target: its default scenario
    assert by_operator.operator.name == "asyncop"
    assert "foo-observes-generation" in [i.name for i in by_operator.invariants]
    (workdir / "one.py").write_text(
        "from asyncop.controllers.registry import OPERATOR\n"
        "from asyncop.testing.chaos import Scenario\nmine = Scenario(operator=OPERATOR, "
        "name='mine')\n")
    assert resolve_scenario("one.py").name == "mine"
    assert resolve_scenario("one.py:mine").name == "mine"


def test_the_reproduce_line_is_the_normalised_command() -> None:
    from asyncop.cli import build_parser

    args = build_parser().parse_args(["soak", "t.py", "--seed", "4", "--sharding",
                                      "--faults", "cut=2", "wipe=0", "--minutes", "2.5"])
    assert reproduce(args) == ("asyncop soak t.py --minutes 2.5 --seed 4 --replicas 3 "
                               "--sharding --shards 16 --faults cut=2 wipe=0")
    assert reproduce(build_parser().parse_args(["soak"])) == (
        "asyncop soak --minutes 10 --seed 1 --replicas 3")


def test_in_a_project_its_operator_soaks_over_its_samples(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "pyproject.toml").write_text(
        '[tool.asyncop]\noperator = "asyncop.controllers.registry:OPERATOR"\n')
    samples = workdir / "config" / "samples"
    samples.mkdir(parents=True)
    (samples / "foo.yaml").write_text(
        "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: f}\n"
        "spec: {deploymentName: web, replicas: 1}\n")
    scenario = resolve_scenario(None)
    assert scenario.operator.name == "asyncop" and scenario.workload.ops  # the samples
    (samples / "bad.yaml").write_text("kind: [\n")
    assert main(["soak"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("asyncop: error: asyncop: cannot read "), err
