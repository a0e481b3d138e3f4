"""The generator of asyncop.k8s: the committed modules are what kubespec gives, names convert
as documented, and `--check` names a stale, missing or stray module without writing.

kube: the definitions are kube's OpenAPI component schemas of 1.33 (asyncop.kubespec); the
wire names are kube's JSON field names (`hostIP`, `$ref`, `x-kubernetes-list-type`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from asyncop.k8s import codegen


def test_committed_modules_match_kubespec() -> None:
    wanted = codegen.render()
    init = codegen.PACKAGE / "__init__.py"
    wanted["__init__.py"] = codegen.render_init(init.read_text(), wanted)
    for name, text in wanted.items():
        assert (codegen.PACKAGE / name).read_text() == text, f"{name} is stale: run codegen"
    generated = {p.name for p in codegen.generated_files()}
    assert generated == set(wanted) - {"__init__.py"}
    assert {"core_v1.py", "apps_v1.py", "batch_v1.py", "meta_v1.py", "networking_v1.py",
            "rbac_v1.py", "apiextensions_v1.py", "autoscaling_v2.py"} <= generated
    assert not any("alpha" in n or "beta" in n for n in generated)


@pytest.mark.parametrize(("wire", "python"), [
    ("hostIP", "host_ip"), ("podIPs", "pod_ips"), ("clusterIPs", "cluster_ips"),
    ("openAPIV3Schema", "open_api_v3_schema"), ("targetCPUUtilizationPercentage",
                                               "target_cpu_utilization_percentage"),
    ("from", "from_"), ("continue", "continue_"), ("not", "not_"), ("$ref", "ref"),
    ("$schema", "schema_"), ("x-kubernetes-list-type", "x_kubernetes_list_type"),
    ("Port", "port"), ("imagePullPolicy", "image_pull_policy"), ("ttlSecondsAfterFinished",
                                                                 "ttl_seconds_after_finished"),
    ("raw", "raw_"), ("parse", "parse_"), ("json", "json_"),
])
def test_python_names(wire: str, python: str) -> None:
    assert codegen.python_name(wire) == python


def _copy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "k8s"
    shutil.copytree(codegen.PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(codegen, "PACKAGE", target)
    return target


def test_check_names_stale_missing_and_stray_modules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _copy_package(tmp_path, monkeypatch)
    assert codegen.main(["--check"]) == 0
    batch = target / "batch_v1.py"
    batch.write_text(batch.read_text().replace("    suspend: bool | None = None\n", ""))
    (target / "node_v1.py").unlink()
    (target / "extra_v1.py").write_text('"""x"""\n\n' + codegen.HEADER)
    before = batch.read_text()
    assert codegen.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"{batch}: stale" in err
    assert f"{target / 'node_v1.py'}: missing" in err
    assert f"{target / 'extra_v1.py'}: stray" in err
    assert batch.read_text() == before  # --check writes nothing
    assert codegen.main([]) == 0  # regenerate: back to the data
    assert codegen.main(["--check"]) == 0
    assert not (target / "extra_v1.py").exists()
    assert "suspend: bool | None = None" in batch.read_text()


def test_init_without_its_markers_is_an_error() -> None:
    with pytest.raises(codegen.CodegenError, match="no '# --- re-exports"):
        codegen.render_init('"""doc"""\n', {})
