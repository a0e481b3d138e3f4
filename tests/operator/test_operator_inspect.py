"""inspect: an Operator's controllers built offline, and the RBAC document charts read."""

from __future__ import annotations

from typing import ClassVar

from asyncop.api import Kind, Request
from asyncop.api.kinds import DEPLOYMENT
from asyncop.controllers.registry import OPERATOR, RBAC_RULES
from asyncop.operator import Operator
from asyncop.operator.inspect import inspect
from asyncop.runtime import leader, recorder
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, owns
from asyncop.runtime.manager import Manager
from asyncop.runtime.rbac import PolicyRule, merge_rules
from asyncop.runtime.reconcile import Result, reconciler


class Widget:
    KIND: ClassVar[Kind] = Kind("example.com", "v1", "widgets", "Widget")


class Gadget:
    KIND: ClassVar[Kind] = Kind("example.com", "v1", "gadgets", "Gadget")


async def _noop(req: Request) -> Result:
    return Result()


def widgets(mgr: Manager) -> Controller:
    return Controller("widgets", reconciler(_noop), watches=[for_(Widget), owns(DEPLOYMENT)],
                      rbac=[PolicyRule.for_(DEPLOYMENT, "create")])


def test_the_bundled_operator_declares_what_the_registry_lists() -> None:
    found = inspect(OPERATOR)
    assert [c.name for c in found.controllers] == list(RBAC_RULES)
    doc = found.rbac_document()
    assert doc["manager"] == [r.to_dict() for r in recorder.RBAC_RULES]
    assert doc["leaderElection"] == [r.to_dict() for r in leader.RBAC_RULES]
    for name, rules in RBAC_RULES.items():
        assert doc["controllers"][name] == [r.to_dict() for r in merge_rules(rules)]


def test_resources_are_the_listed_ones_then_the_watched_ones() -> None:
    op = Operator(name="w", controllers={"widgets": widgets}, resources=(Gadget, Widget),
                  rbac=[PolicyRule.for_(Gadget, "delete")])
    found = inspect(op)
    assert found.resources == [Gadget, Widget]
    assert inspect(Operator(name="w", controllers={"widgets": widgets})).resources == [Widget]
    doc = found.rbac_document()
    assert doc["controllers"]["widgets"] == [
        {"apiGroups": ["apps"], "resources": ["deployments"],
         "verbs": ["create", "get", "list", "watch"]},
        {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]},
    ]
    assert {"apiGroups": ["example.com"], "resources": ["gadgets"], "verbs": ["delete"]} in (
        doc["manager"])
