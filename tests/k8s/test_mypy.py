"""asyncop.k8s is visible to `mypy --strict`, as users' `make lint` runs it: a snippet that
uses the classes type-checks, and the mistakes it contains on purpose are exactly the errors
mypy reports (a wrong field type, a wire name as a keyword, `| None` ignored, a typo); a typed
resource is constructed without apiVersion.

The mypy cache lives in the temp directory across runs (the first run reads the generated
modules, about 10 s on this project's machine; later runs take well under a second), one per
checkout: suites of other checkouts running at the same time keep their own.
"""

from __future__ import annotations

import hashlib
import re
import sys
import tempfile
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(tempfile.gettempdir()) / (
    "asyncop-mypy-k8s-cache-" + hashlib.sha256(str(ROOT).encode()).hexdigest()[:12])

SNIPPET = '''\
from __future__ import annotations

from datetime import datetime

from asyncop.api import Kind
from asyncop.k8s import (
    Container, ContainerPort, CronJob, Deployment, JobTemplateSpec, PodSpec,
    ResourceRequirements,
)

spec = PodSpec(containers=[Container(
    name="app", image="nginx", ports=[ContainerPort(container_port=80, host_ip="0.0.0.0")],
    resources=ResourceRequirements(limits={"cpu": "500m"}))])
name: str = spec.containers[0].name
kind: Kind = Deployment.KIND
d = Deployment.parse({})
when: datetime | None = d.metadata.creation_timestamp if d.metadata else None
cron = CronJob.parse({})
template: JobTemplateSpec | None = cron.spec.job_template if cron.spec else None
limits: dict[str, str] | None = spec.containers[0].resources.limits if (
    spec.containers[0].resources) else None
wrong_type = Container(name=1)
wire_keyword = ContainerPort(containerPort=80)
optional: int = spec.containers[0].image
typo = spec.containers[0].imag

from asyncop.crd import CustomResource, Model, ObjectMeta  # noqa: E402


class WidgetSpec(Model):
    size: int = 1


class Widget(CustomResource, group="example.com", version="v1"):
    spec: WidgetSpec


# a typed resource is built without apiVersion/kind: the class knows them (mypy once said
# `Missing named argument "apiVersion"`, because the field's default was positional)
widget = Widget(metadata=ObjectMeta(name="w"), spec=WidgetSpec(size=2))
'''

EXPECTED = [
    (22, 'Argument "name" to "Container" has incompatible type "int"; expected "str"'),
    (23, 'Unexpected keyword argument "containerPort" for "ContainerPort"'),
    (24, 'Incompatible types in assignment (expression has type "str | None", variable has '
         'type "int")'),
    (25, '"Container" has no attribute "imag"'),
]


def test_asyncop_k8s_type_checks_under_mypy_strict(tmp_path: Path) -> None:
    path = tmp_path / "snippet.py"
    path.write_text(SNIPPET)
    limit = sys.getrecursionlimit()  # mypy raises it for the whole process; keep ours
    try:
        out, err, _ = api.run(["--strict", "--no-error-summary", "--cache-dir", str(CACHE),
                               str(path)])
    finally:
        sys.setrecursionlimit(limit)
    found = []
    for line in out.splitlines():
        if ": note: " in line:
            continue
        m = re.match(r".*snippet\.py:(\d+): error: (.*?)(?:; (?:did you mean|maybe) .*)?"
                     r"  \[[a-z-]+\]$", line)
        assert m, f"unexpected mypy output: {line}"
        found.append((int(m.group(1)), m.group(2)))
    assert found == EXPECTED, out + err
