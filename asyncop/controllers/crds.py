"""The CRDs of the bundled controllers, loaded from the package data.

`crds/` at the repository root is the source; `asyncop/data/crds/` is a byte-identical copy
shipped in the wheel (a test keeps the two equal). Invariant: every call parses the files
afresh, so callers own (and may mutate) what they get.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

import yaml

from asyncop.api import RawObject


def _crd_dir() -> Traversable:
    return resources.files("asyncop").joinpath("data", "crds")


def crd_texts() -> dict[str, str]:
    """File name -> YAML text of every bundled CRD, sorted by file name."""
    files = [f for f in _crd_dir().iterdir() if f.name.endswith(".yaml")]
    return {f.name: f.read_text(encoding="utf-8") for f in sorted(files, key=lambda f: f.name)}


def load_crds() -> list[RawObject]:
    """The bundled CustomResourceDefinitions as raw objects, sorted by file name."""
    out: list[RawObject] = []
    for text in crd_texts().values():
        for doc in yaml.safe_load_all(text):
            if doc:
                out.append(doc)
    return out


def crds_yaml() -> str:
    """All bundled CRDs as one multi-document YAML stream (what `asyncop crds` prints)."""
    return "---\n".join(
        text if text.endswith("\n") else text + "\n" for text in crd_texts().values()
    )
