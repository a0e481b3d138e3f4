"""Helpers shared by the bundled controllers: status writes, conditions, RBAC rules, children.

Invariant: nothing here knows about a particular controller; the controllers import this
package, never each other.
"""

from asyncop.controllers.common.children import (
    Child,
    delete_renamed,
    ensure_child,
    ensure_replicas,
    owned_deployment,
)
from asyncop.controllers.common.conditions import condition, set_condition
from asyncop.controllers.common.rbac import EVENTS_RULES, PolicyRule, merge_rules
from asyncop.controllers.common.status import write_status

__all__ = [
    "EVENTS_RULES",
    "Child",
    "PolicyRule",
    "condition",
    "delete_renamed",
    "ensure_child",
    "ensure_replicas",
    "merge_rules",
    "owned_deployment",
    "set_condition",
    "write_status",
]
