"""The bundled controllers' typed resources, in one place, and their Kinds.

Each resource is declared once, as a model in its controller's module (`at.At`,
`foo.Foo`, ...); the Kinds here are those models' `KIND`s and the CRDs in crds/ are generated
from the same models (`asyncop generate`), so group, version, plural and kind cannot drift.
Invariant: this module imports the controller modules; they never import it.
"""

from __future__ import annotations

from asyncop.api import Kind
from asyncop.controllers.at import At
from asyncop.controllers.crdkind import CrdKind
from asyncop.controllers.foo import Foo
from asyncop.controllers.jinghzhu import Jinghzhu
from asyncop.controllers.network import Network
from asyncop.crd import CustomResource

RESOURCES: tuple[type[CustomResource], ...] = (At, Foo, Network, CrdKind, Jinghzhu)

AT, FOO, NETWORK, CRDKIND, JINGHZHU = (r.KIND for r in RESOURCES)

CUSTOM_KINDS: tuple[Kind, ...] = (AT, FOO, NETWORK, CRDKIND, JINGHZHU)
