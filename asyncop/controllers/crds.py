"""The CRDs of the bundled controllers, generated from their models.

`crds/` at the repository root holds the same CRDs as YAML, written by `asyncop generate`
(which `make lint` checks with `--check`). Invariant: every call builds the CRDs afresh, so
callers own (and may mutate) what they get.
"""

from __future__ import annotations

from asyncop.api import RawObject
from asyncop.controllers.kinds import RESOURCES
from asyncop.crd import crds


def load_crds() -> list[RawObject]:
    """The bundled CustomResourceDefinitions, sorted by name."""
    return crds(*RESOURCES)
