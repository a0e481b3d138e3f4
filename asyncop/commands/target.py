"""Which operator a command works on, and the CRDs it owns.

`resolve_operator(None)` is the bundled operator (`asyncop.controllers.registry.OPERATOR`);
any other target is loaded with `asyncop.operator.load_operator`, whose `TargetError`
becomes a `UserError` (the user's traceback, if any, is printed first by the CLI).
"""

from __future__ import annotations

from asyncop.api import RawObject
from asyncop.commands.errors import UserError
from asyncop.operator import Operator, TargetError, load_operator
from asyncop.runtime.controller import Controller


class TargetFailed(UserError):
    """A target that cannot be loaded; `user_traceback` is printed above the one line."""

    def __init__(self, message: str, user_traceback: str | None) -> None:
        super().__init__(message)
        self.user_traceback = user_traceback


def resolve_operator(target: str | None) -> Operator:
    if target is None:
        from asyncop.controllers.registry import OPERATOR

        return OPERATOR
    try:
        return load_operator(target)
    except TargetError as exc:
        raise TargetFailed(str(exc), exc.user_traceback) from None


def operator_crds(op: Operator, controllers: list[Controller]) -> list[RawObject]:
    """The CRDs the operator owns (its resources, and the resource classes it watches)."""
    from asyncop.controllers.crds import load_crds
    from asyncop.controllers.registry import OPERATOR

    return load_crds() if op is OPERATOR else []
