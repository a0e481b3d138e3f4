"""The README's tutorial, followed literally in a fresh directory (tests/e2e/tutorialkit.py).

The steps are read from README.md between the `tutorial:start`/`tutorial:end` markers:
`sh` blocks are run line by line with bash (asyncop from this checkout first on PATH),
`python`/`yaml` blocks that start with `# file: <path>` are written to that path. `make run`
is watched until the sample's status lists 3 pods, then stopped with Ctrl-C; `asyncop
apiserver ... &` is the stand-in cluster `helm install` (helm-python-sdk) installs the chart
into.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asyncop.api import Kind, NotFound
from asyncop.api.kinds import CRD, DEPLOYMENT
from asyncop.client import Client, load_config
from asyncop.testing import eventually
from tests.e2e.tutorialkit import ROOT, Shell, follow, steps

pytest.importorskip("helm_python")

MEMCACHED = Kind("cache.example.com", "v1alpha1", "memcacheds", "Memcached")
CLUSTERROLE = Kind("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                   namespaced=False)


async def three_nodes(kubeconfig: str) -> None:
    """While `make run` runs: the sample's status lists its 3 pods, its Deployment has 3."""
    async with Client(await load_config(kubeconfig=kubeconfig)) as client:
        async def listed() -> bool:
            try:
                obj = await client.get(MEMCACHED, "memcached-sample", namespace="default")
            except NotFound:
                return False
            return len((obj.get("status") or {}).get("nodes") or []) == 3

        await eventually(listed, timeout=60, message="memcached-sample lists 3 pods")
        dep = await client.get(DEPLOYMENT, "memcached-sample", namespace="default")
        assert dep["spec"]["replicas"] == 3


async def test_the_readme_tutorial_yields_a_working_operator(tmp_path: Path) -> None:
    shell = Shell(tmp_path)
    shell.on_make_run = three_nodes
    try:
        await follow(shell, steps(ROOT / "README.md"))
        # the chart went into the stand-in cluster: CRD, Deployment, least-privilege RBAC
        assert shell.kubeconfig is not None
        async with Client(await load_config(kubeconfig=shell.kubeconfig)) as client:
            await client.get(CRD, "memcacheds.cache.example.com")
            dep = await client.get(DEPLOYMENT, "memcached-operator", namespace="default")
            assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == (
                "memcached-operator:0.1.0")
            role = await client.get(CLUSTERROLE, "memcached-operator")
            rules = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"]
                     for r in rule["resources"] for v in rule["verbs"]}
            assert ("apps", "deployments", "create") in rules
            assert ("cache.example.com", "memcacheds/status", "update") in rules
            assert ("apps", "deployments", "delete") not in rules  # only what it declares
    finally:
        await shell.close()


def untouched(checkout: Path) -> dict[str, int]:
    """What a build in `checkout` would change: its top-level entries (`build/`, `dist/`) and
    its egg-info's files, with their modification times."""
    entries = {p.name: p.stat().st_mtime_ns for p in checkout.iterdir()}
    entries.update({str(p.relative_to(checkout)): p.stat().st_mtime_ns
                    for p in checkout.glob("*.egg-info/*")})
    return entries


async def test_a_project_fresh_from_init_passes_its_own_test_and_lint(tmp_path: Path) -> None:
    """As `asyncop init` wrote it: its Makefile links this checkout into the project's .venv
    (asyncop runs from a checkout here) and writes nothing into it; `make lint` type-checks
    the tests too."""
    shell = Shell(tmp_path)
    del shell.env["ASYNCOP"]  # the Makefile's own: this checkout, linked
    before = untouched(ROOT)
    await shell.run("asyncop init --name empty-operator --domain example.org --dir fresh")
    await shell.run("cd fresh && make test lint")
    make = shell.outputs[-1][1]
    assert f"editable.py {ROOT}" in make and f"linked {ROOT} into " in make, make[-2000:]
    # mypy --strict: the package (4 files), the tests (2) and hack/ (1)
    assert "Success: no issues found in 7 source files" in make
    assert untouched(ROOT) == before
    out = await shell.check(".venv/bin/python -m asyncop generate --check", timeout=60)
    assert out.strip() == "generated files are up to date (1 file)"
