"""The registry of bundled controllers: an explicit name -> factory dict, and their RBAC.

No decorators and no import-time registration: adding a controller means adding a line
here. Invariants: `CONTROLLERS` and `RBAC_RULES` have the same keys; each factory takes the
Manager and keyword-only options (at least `workers`) and returns a Controller that is not
yet added to the Manager.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from asyncop.controllers import at, crdkind, foo, jinghzhu, network, podlogger
from asyncop.controllers.common.rbac import PolicyRule, merge_rules
from asyncop.controllers.kinds import RESOURCES
from asyncop.operator import Operator
from asyncop.runtime.controller import Controller
from asyncop.runtime.manager import Manager


class Factory(Protocol):
    def __call__(self, mgr: Manager, *, workers: int = ...) -> Controller: ...


CONTROLLERS: dict[str, Factory] = {
    "at": at.at_controller,
    "foo": foo.foo_controller,
    "network": network.network_controller,
    "crdkind": crdkind.crdkind_controller,
    "jinghzhu": jinghzhu.jinghzhu_controller,
    "podlogger": podlogger.podlogger_controller,
}

OPERATOR = Operator(name="asyncop", controllers=CONTROLLERS, resources=RESOURCES)
"""The bundled operator: what `asyncop run` runs without a TARGET."""

RBAC_RULES: dict[str, tuple[PolicyRule, ...]] = {
    "at": at.RBAC_RULES,
    "foo": foo.RBAC_RULES,
    "network": network.RBAC_RULES,
    "crdkind": crdkind.RBAC_RULES,
    "jinghzhu": jinghzhu.RBAC_RULES,
    "podlogger": podlogger.RBAC_RULES,
}


def rbac_rules(names: Iterable[str] | None = None) -> list[dict[str, object]]:
    """The merged policy rules (as Role rule dicts) of the named controllers (default all)."""
    selected = list(CONTROLLERS) if names is None else list(names)
    unknown = [n for n in selected if n not in RBAC_RULES]
    if unknown:
        raise KeyError(f"unknown controllers: {', '.join(unknown)}")
    return [r.to_dict() for r in merge_rules(r for n in selected for r in RBAC_RULES[n])]
