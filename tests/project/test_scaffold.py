"""asyncop init / create api in-process: the files, idempotency, one-line errors."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from asyncop.cli import main
from asyncop.commands.scaffold import asyncop_source

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "asyncop" / "project" / "templates"
requires_make = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def outside_make() -> dict[str, str]:
    """This environment without what a parent make exports (`make test` runs these tests: a
    nested make would print "Entering directory" lines and inherit the parent's flags)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}


def out_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]


def test_init_then_create_api_then_again(workdir: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--name", "memcached-operator", "--domain", "example.com"]) == 0
    lines = out_lines(capsys)
    assert "wrote memcached_operator/operator.py" in lines
    assert "wrote charts/memcached-operator/templates/deployment.yaml" in lines
    assert "generated charts/memcached-operator/files/rbac-rules.yaml" in lines
    pyproject = (workdir / "pyproject.toml").read_text()
    assert 'operator = "memcached_operator.operator"' in pyproject
    assert 'domain = "example.com"' in pyproject

    assert main(["create", "api", "--group", "cache", "--version", "v1alpha1",
                 "--kind", "Memcached"]) == 0
    lines = out_lines(capsys)
    assert lines[:6] == [
        "wrote memcached_operator/api/v1alpha1/__init__.py",
        "wrote memcached_operator/api/v1alpha1/memcached.py",
        "wrote memcached_operator/controllers/memcached.py",
        "wrote tests/test_memcached.py",
        "wrote config/samples/cache_v1alpha1_memcached.yaml",
        "updated memcached_operator/operator.py",
    ]
    crd = yaml.safe_load((workdir / "config/crd/memcacheds.cache.example.com.yaml").read_text())
    assert crd["spec"]["group"] == "cache.example.com"
    assert crd["spec"]["versions"][0]["name"] == "v1alpha1"
    rules = yaml.safe_load(
        (workdir / "charts/memcached-operator/files/rbac-rules.yaml").read_text())
    assert {"apiGroups": ["cache.example.com"], "resources": ["memcacheds/status"],
            "verbs": ["patch", "update"]} in rules["controllers"]["memcached"]
    operator_py = (workdir / "memcached_operator/operator.py").read_text()

    # idempotent: a second run changes nothing and says so
    assert main(["create", "api", "--group", "cache", "--version", "v1alpha1",
                 "--kind", "Memcached"]) == 0
    assert all(ln.startswith("unchanged ") for ln in out_lines(capsys))
    assert (workdir / "memcached_operator/operator.py").read_text() == operator_py

    # an edited file is kept; a second kind is added beside the first
    controller = workdir / "memcached_operator/controllers/memcached.py"
    controller.write_text(controller.read_text() + "\n# edited\n")
    assert main(["create", "api", "--group", "cache", "--version", "v1alpha1",
                 "--kind", "Memcached"]) == 0
    assert ("kept memcached_operator/controllers/memcached.py (edited: left as it is)"
            in out_lines(capsys))
    assert main(["create", "api", "--group", "ops", "--version", "v1", "--kind", "Policy",
                 "--cluster"]) == 0
    capsys.readouterr()
    text = (workdir / "memcached_operator/operator.py").read_text()
    assert text.index("from memcached_operator.api.v1.policy import Policy") < text.index(
        "from memcached_operator.api.v1alpha1.memcached import Memcached")
    assert '"memcached": memcached_controller,' in text and '"policy": policy_controller,' in text
    policy = yaml.safe_load((workdir / "config/crd/policies.ops.example.com.yaml").read_text())
    assert policy["spec"]["scope"] == "Cluster"


def test_create_api_notes_a_name_a_built_in_kind_already_has(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kubebuilder's CronJob tutorial: batch.tutorial.kubebuilder.io's `cronjobs` is also
    batch/v1's, and kubectl resolves `kubectl get cronjobs` to the built-in one (kube's
    discovery lists built-in groups first; kubectl's RESTMapper takes the first match)."""
    assert main(["init", "--name", "project", "--domain", "tutorial.kubebuilder.io"]) == 0
    capsys.readouterr()
    assert main(["create", "api", "--group", "batch", "--version", "v1", "--kind",
                 "CronJob"]) == 0
    notes = [ln for ln in out_lines(capsys) if ln.startswith("note: ")]
    assert notes == ["note: cronjobs and cronjob also name the built-in CronJob (batch/v1): "
                     "`kubectl get cronjobs` lists those; `kubectl get "
                     "cronjobs.batch.tutorial.kubebuilder.io` lists yours"]
    assert main(["create", "api", "--group", "batch", "--version", "v1", "--kind", "Pod",
                 "--plural", "podz"]) == 0
    assert [ln for ln in out_lines(capsys) if ln.startswith("note: ")] == [
        "note: pod also names the built-in Pod (v1): `kubectl get pod` lists those; "
        "`kubectl get podz.batch.tutorial.kubebuilder.io` lists yours"]
    assert main(["create", "api", "--group", "batch", "--version", "v1", "--kind",
                 "Widget"]) == 0
    assert not [ln for ln in out_lines(capsys) if ln.startswith("note: ")]


def test_init_refuses_to_overwrite_and_rerunning_is_harmless(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "Makefile").write_text("all:\n\techo mine\n")
    assert main(["init", "--name", "x-op", "--domain", "example.com"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["asyncop: error: refusing to overwrite Makefile; asyncop init writes a new "
                   "project: use an empty directory"]
    assert not (workdir / "pyproject.toml").exists()  # nothing written
    (workdir / "Makefile").unlink()
    assert main(["init", "--name", "x-op", "--domain", "example.com"]) == 0
    capsys.readouterr()
    assert main(["init", "--name", "x-op", "--domain", "example.com"]) == 0
    assert all(not ln.startswith("wrote") for ln in out_lines(capsys))


@pytest.mark.parametrize(("argv", "message"), [
    (["init", "--name", "Bad_Name", "--domain", "example.com"],
     "--name 'Bad_Name' must be lower-case letters, digits and dashes, starting with a letter "
     "(e.g. memcached-operator)"),
    (["init", "--name", "ok", "--domain", "localhost"],
     "--domain 'localhost' must be a DNS domain with a dot (e.g. example.com)"),
    (["create", "api", "--group", "cache", "--version", "v1", "--kind", "Memcached"],
     "no operator project here: run `asyncop init` first (pyproject.toml with "
     "[tool.asyncop] operator = ...)"),
])
def test_bad_requests_are_one_line(workdir: Path, capsys: pytest.CaptureFixture[str],
                                   argv: list[str], message: str) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"asyncop: error: {message}"]


@pytest.mark.parametrize(("flags", "message"), [
    (["--kind", "memcached"], "--kind 'memcached' must be UpperCamelCase (e.g. Memcached)"),
    (["--kind", "Memcached", "--version", "V1"],
     "--version 'V1' must be a DNS-1035 label such as v1alpha1"),
    (["--kind", "Memcached", "--group", "Cache"],
     "--group 'Cache' gives the API group 'Cache.example.com', which must be a DNS domain with "
     "a dot (set domain under [tool.asyncop], or give the full group)"),
])
def test_bad_kinds_are_one_line(workdir: Path, capsys: pytest.CaptureFixture[str],
                                flags: list[str], message: str) -> None:
    assert main(["init", "--name", "x-op", "--domain", "example.com"]) == 0
    capsys.readouterr()
    argv = ["create", "api", "--group", "cache", "--version", "v1alpha1", *flags]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"asyncop: error: {message}"]


def test_the_bundled_chart_uses_the_scaffolds_generic_templates() -> None:
    """helm/asyncop is the chart `asyncop init` would write for the bundled operator: its
    templates are the very same files (values, schema and Chart.yaml differ)."""
    bundled = {p.name: p.read_text() for p in (ROOT / "helm/asyncop/templates").iterdir()}
    scaffold = {p.name.removesuffix(".tmpl"): p.read_text()
                for p in (TEMPLATES / "chart/templates").iterdir()}
    assert bundled == scaffold


def test_create_api_notes_a_name_a_crd_already_has(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A CRD of the project or of asyncop's bundled operators with the same plural or
    singular in another group: kubectl resolves the bare name to the group discovery lists
    first (APIService priority, then name), so each needs its full name. In the same group,
    kube's CRD naming controller refuses names already in use (NamesAccepted False,
    `"%s" is already in use`): refused here before anything is written."""
    assert main(["init", "--name", "project", "--domain", "example.com"]) == 0
    assert main(["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind",
                 "Memcached"]) == 0
    capsys.readouterr()
    assert main(["create", "api", "--group", "ops", "--version", "v1", "--kind",
                 "Memcached"]) == 0
    assert [ln for ln in out_lines(capsys) if ln.startswith("note: ")] == [
        "note: memcacheds and memcached also name the CRD memcacheds.cache.example.com (kind "
        "Memcached, this project's config/crd/memcacheds.cache.example.com.yaml): `kubectl "
        "get memcacheds` lists one of the two; `kubectl get memcacheds.cache.example.com` "
        "lists those, `kubectl get memcacheds.ops.example.com` lists yours"]
    # the bundled operators' CRDs too (`asyncop run` installs them beside yours)
    assert main(["create", "api", "--group", "batch", "--version", "v1beta1", "--kind",
                 "Ticket", "--plural", "ats"]) == 0
    assert [ln for ln in out_lines(capsys) if ln.startswith("note: ")] == [
        "note: ats also names the CRD ats.cnat.programming-kubernetes.info (kind At, bundled "
        "with asyncop): `kubectl get ats` lists one of the two; `kubectl get "
        "ats.cnat.programming-kubernetes.info` lists those, `kubectl get "
        "ats.batch.example.com` lists yours"]
    # in the same group: refused, nothing written
    before = sorted(p for p in workdir.rglob("*") if p.is_file())
    assert main(["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind",
                 "Cache", "--plural", "memcacheds"]) == 2
    assert capsys.readouterr().err.strip() == (
        "asyncop: error: the name 'memcacheds' is already taken in cache.example.com by the "
        "CRD memcacheds.cache.example.com (kind Memcached, this project's "
        "config/crd/memcacheds.cache.example.com.yaml); choose another --kind or --plural")
    assert main(["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind",
                 "Memcached", "--plural", "caches"]) == 2  # its singular is taken too
    assert "the name 'memcached' is already taken in cache.example.com" in (
        capsys.readouterr().err)
    assert main(["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind",
                 "Widget", "--plural", "memcached"]) == 2  # a plural that is its singular
    assert "the name 'memcached' is already taken" in capsys.readouterr().err
    assert sorted(p for p in workdir.rglob("*") if p.is_file()) == before


@requires_make
def test_the_project_gets_asyncop_as_this_environment_has_it(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Running from a checkout (editable): the Makefile links that checkout; from an installed
    distribution: ASYNCOP is empty and pip installs the version pyproject.toml asks for."""
    assert asyncop_source() == str(ROOT)  # these tests run from the checkout
    site = workdir / "site-packages"
    (site / "asyncop").mkdir(parents=True)
    assert asyncop_source(site / "asyncop") == ""  # installed: no asyncop pyproject beside it
    assert main(["init", "--name", "x-op", "--domain", "example.com"]) == 0
    capsys.readouterr()
    makefile = (workdir / "Makefile").read_text()
    assert f"ASYNCOP ?= {ROOT}\n" in makefile
    assert '"asyncop>=0.1.0"' in (workdir / "pyproject.toml").read_text()
    files = '"x_op", "tests", "hack"'
    assert f"files = [{files}]" in (workdir / "pyproject.toml").read_text()  # tests too

    def install(**variables: str) -> list[str]:
        """The commands `make` would run to set up .venv (a dry run)."""
        argv = ["make", "--no-print-directory", "-n", "-B", ".venv/.installed",
                *(f"{k}={v}" for k, v in variables.items())]
        done = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, check=True,
                              env=outside_make())
        return done.stdout.splitlines()

    assert install() == [
        "test -x .venv/bin/python || python3 -m venv .venv",
        f".venv/bin/python -I {ROOT}/asyncop/project/editable.py {ROOT}",
        ".venv/bin/python -m pip install -q -e '.[test]'",
        "touch .venv/.installed"]
    assert ".venv/bin/python -m pip install -q 'asyncop==0.2.0'" in install(
        ASYNCOP="asyncop==0.2.0")
    assert install(ASYNCOP="") == [  # an installed asyncop: the version pyproject.toml asks
        "test -x .venv/bin/python || python3 -m venv .venv",
        ".venv/bin/python -m pip install -q -e '.[test]'",
        "touch .venv/.installed"]


@requires_make
def test_make_deploy_says_how_to_get_helm(workdir: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--name", "x-op", "--domain", "example.com"]) == 0
    capsys.readouterr()
    done = subprocess.run(["make", "deploy", "HELM=no-such-helm"], cwd=workdir,
                          capture_output=True, text=True, env=outside_make())
    assert done.returncode == 2
    assert ("make deploy: no 'no-such-helm' on PATH: install Helm 3.8+ "
            "(helm.sh/docs/intro/install) or pass HELM=/path/to/helm; make helm-lint checks "
            "the chart without it") in done.stderr
    readme = (workdir / "README.md").read_text()
    assert "## Deploying" in readme and "helm.sh/docs/intro/install" in readme
