"""Operator projects: their settings (`[tool.asyncop]`) and the files generated from code.

- `config`: `ProjectConfig.find()` reads `[tool.asyncop]` from the nearest pyproject.toml:
  `operator` (the TARGET `run`, `generate` and `crds` use by default), `crds` (the directory of
  generated CRD YAMLs) and `chart` (the Helm chart whose `crds/` and `files/rbac-rules.yaml`
  are generated);
- `generate`: `expected_files(...)` renders those files from an Operator; `sync` writes them,
  `drift` lists what is out of date (what `asyncop generate --check` reports).

Invariant: generated files are a pure function of the code (same code, same bytes), so a
check in CI catches every hand edit and every model change not regenerated.
"""
