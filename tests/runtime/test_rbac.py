"""RBAC declared in code: PolicyRule helpers, and what a Controller says it needs."""

from __future__ import annotations

from typing import ClassVar

from asyncop.api import Kind, Request
from asyncop.api.kinds import DEPLOYMENT, POD
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_, owns, watches
from asyncop.runtime.rbac import PolicyRule, merge_rules
from asyncop.runtime.reconcile import Result, reconciler

WIDGET = Kind("example.com", "v1", "widgets", "Widget")


class Widget:
    """A stand-in for a typed resource class: anything with a `KIND` class attribute."""

    KIND: ClassVar[Kind] = WIDGET


async def _noop(req: Request) -> Result:
    return Result()


def test_rule_for_a_kind_a_class_and_a_subresource() -> None:
    assert PolicyRule.for_(POD, "get", "list") == PolicyRule(("",), ("pods",), ("get", "list"))
    assert PolicyRule.for_(Widget, "update", subresource="status") == PolicyRule(
        ("example.com",), ("widgets/status",), ("update",))
    assert PolicyRule.for_(DEPLOYMENT, "create").to_dict() == {
        "apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]}


def test_merge_is_one_rule_per_resource_sorted() -> None:
    merged = merge_rules([PolicyRule(("b",), ("x",), ("watch",)),
                          PolicyRule(("a", "b"), ("x", "y"), ("get",)),
                          PolicyRule(("b",), ("x",), ("get", "list"))])
    assert merged == [PolicyRule(("a",), ("x",), ("get",)), PolicyRule(("a",), ("y",), ("get",)),
                      PolicyRule(("b",), ("x",), ("get", "list", "watch")),
                      PolicyRule(("b",), ("y",), ("get",))]


def test_watches_take_a_resource_class_and_remember_it() -> None:
    w = for_(Widget)
    assert w.kind == WIDGET and w.source is Widget and w.target == "self"
    assert owns(POD).source is None
    assert watches(Widget, lambda obj: ()).kind == WIDGET


def test_controller_rules_are_declared_plus_reads_of_every_watched_kind() -> None:
    c = Controller("widgets", reconciler(_noop), watches=[for_(Widget), owns(DEPLOYMENT)],
                   rbac=[PolicyRule.for_(DEPLOYMENT, "create", "update"),
                         PolicyRule.for_(Widget, "update", subresource="status")])
    assert c.rbac_rules == [
        PolicyRule(("apps",), ("deployments",), ("create", "get", "list", "update", "watch")),
        PolicyRule(("example.com",), ("widgets",), ("get", "list", "watch")),
        PolicyRule(("example.com",), ("widgets/status",), ("update",)),
    ]
    plain = Controller("pods", reconciler(_noop), watches=[for_(POD)])
    assert plain.rbac == () and plain.rbac_rules == [PolicyRule(("",), ("pods",), READ_VERBS)]


READ_VERBS = ("get", "list", "watch")
