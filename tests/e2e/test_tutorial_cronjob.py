"""docs/tutorial-cronjob.md (the kubebuilder book's CronJob, ported), followed literally.

`follow` (tests/e2e/tutorialkit.py) scaffolds the project, adds croniter with the document's
`sed` lines, writes the model (a `JobTemplateSpec` field), the controller, the fake-clock
tests and the sample, runs `make generate test lint` (the project's own tests on the
embedded API server, ruff, mypy --strict over kube's types, `generate --check`, helm lint),
then starts a stand-in cluster and runs the document's kubectl lines with the real kubectl,
checking the output the document shows: `kubectl explain` reaching
`spec.jobTemplate.spec.template.spec.containers.resources.limits`, `kubectl get cronjobs`
meaning the built-in batch/v1 CronJob and the full resource name meaning ours. The README's
test covers `make run` and Helm, which this document leaves to it.

kube: the CRD is what controller-gen writes for `batchv1.JobTemplateSpec` (its KnownPackages
and, with `embedded_object_meta=True`, its ObjectMetaPackages); kubectl resolves `cronjobs`
to the first group discovery lists, the built-in `batch` (client-go's PriorityRESTMapper).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asyncop.api import Kind
from asyncop.client import Client, load_config
from tests.e2e.conftest import requires_kubectl
from tests.e2e.tutorialkit import ROOT, Shell, follow, steps

pytest.importorskip("helm_python")  # the project's `make lint` runs helm lint with it

DOCUMENT = ROOT / "docs" / "tutorial-cronjob.md"
CRONJOB = Kind("batch.tutorial.kubebuilder.io", "v1", "cronjobs", "CronJob")


@requires_kubectl
async def test_the_cronjob_tutorial_yields_a_tested_operator(tmp_path: Path) -> None:
    shell = Shell(tmp_path)
    try:
        await follow(shell, steps(DOCUMENT))
        ran = [command for command, _ in shell.outputs]
        assert "make generate test lint" in ran
        # the project's tests ran, all of them: the document's and the two the scaffold
        # writes besides (tests/test_operator.py and tests/test_chaos.py)
        written = sum(body.count("\nasync def test_") for lang, body in steps(DOCUMENT)
                      if lang == "python")
        make = next(out for command, out in shell.outputs if command.startswith("make"))
        assert f"{written + 2} passed" in make, make[-3000:]
        # the sample went in through kubectl, defaulted by the CRD the model generated
        assert shell.kubeconfig is not None
        async with Client(await load_config(kubeconfig=shell.kubeconfig)) as client:
            sample = await client.get(CRONJOB, "cronjob-sample", namespace="default")
        assert sample["spec"]["successfulJobsHistoryLimit"] == 3
        assert sample["spec"]["suspend"] is False
        containers = sample["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
        assert containers[0]["name"] == "hello"
    finally:
        await shell.close()
