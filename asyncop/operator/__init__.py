"""Operators: a named set of controllers plus the custom resources and RBAC they need.

`Operator` is what `asyncop run TARGET`, `asyncop generate` and the test kit take; the bundled
controllers are one (`asyncop.controllers.registry.OPERATOR`) and a user's module is another.
`load_operator(target)` turns `path/to/operator.py`, `pkg.module` or `pkg.module:attr` into
an Operator, with one readable line (`TargetError`) for every way that can fail.

Invariant: an Operator is a declaration; nothing here starts tasks or talks to a server.
"""

from asyncop.operator.loader import TargetError, load_operator
from asyncop.operator.spec import ControllerFactory, Operator, OperatorError, Setup

__all__ = [
    "ControllerFactory",
    "Operator",
    "OperatorError",
    "Setup",
    "TargetError",
    "load_operator",
]
