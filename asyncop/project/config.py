"""ProjectConfig: `[tool.asyncop]` in a project's pyproject.toml.

```toml
[tool.asyncop]
operator = "memcached_operator.operator"   # TARGET for run / generate / crds
crds = "config/crd"                         # generated CRD YAMLs, one per CRD
chart = "charts/memcached-operator"        # its crds/ and files/rbac-rules.yaml are generated
domain = "example.com"                      # create api --group cache: cache.example.com
```

`find(start)` walks up from `start` (default: the current directory) to the first
pyproject.toml with a `[tool.asyncop]` table; paths are relative to that file's directory.
Invariant: a malformed table is a `ProjectError` with one line naming the file and the key;
no table at all is simply None (the bundled operator is the default then).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

KEYS = ("operator", "crds", "chart", "domain")


class ProjectError(ValueError):
    """`[tool.asyncop]` is malformed; the message is one line naming the file and key."""


@dataclass(frozen=True, slots=True)
class ProjectConfig:
    root: Path
    operator: str | None = None
    crds: Path | None = None
    chart: Path | None = None
    domain: str | None = None

    @classmethod
    def find(cls, start: Path | None = None) -> ProjectConfig | None:
        here = (start or Path.cwd()).resolve()
        for directory in (here, *here.parents):
            pyproject = directory / "pyproject.toml"
            if pyproject.is_file():
                config = cls.load(pyproject)
                if config is not None:
                    return config
        return None

    @classmethod
    def load(cls, pyproject: Path) -> ProjectConfig | None:
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ProjectError(f"{pyproject}: cannot read: {exc}") from None
        table = data.get("tool", {}).get("asyncop")
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ProjectError(f"{pyproject}: [tool.asyncop] must be a table")
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            raise ProjectError(
                f"{pyproject}: [tool.asyncop] has an unknown key {unknown[0]!r} "
                f"(known: {', '.join(KEYS)})"
            )
        for key in KEYS:
            if key in table and (not isinstance(table[key], str) or not table[key]):
                raise ProjectError(f"{pyproject}: [tool.asyncop] {key} must be a non-empty string")
        root = pyproject.parent
        return cls(
            root=root,
            operator=table.get("operator"),
            crds=root / table["crds"] if "crds" in table else None,
            chart=root / table["chart"] if "chart" in table else None,
            domain=table.get("domain"),
        )
