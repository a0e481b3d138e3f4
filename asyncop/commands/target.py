"""Which operator a command works on, the project settings around it, and its CRDs.

`resolve_operator(None)` is the project's `[tool.asyncop] operator` when the current
directory (or a parent) has one, else the bundled operator
(`asyncop.controllers.registry.OPERATOR`); any other target is loaded with
`asyncop.operator.load_operator`, whose `TargetError` becomes `TargetFailed`, a `UserError`
that carries the user's traceback for the CLI to print above the one line.
"""

from __future__ import annotations

from asyncop.api import RawObject
from asyncop.commands.errors import UserError
from asyncop.crd import CRDError
from asyncop.operator import Operator, TargetError, load_operator
from asyncop.operator.inspect import Inspection
from asyncop.project.config import ProjectConfig, ProjectError
from asyncop.runtime.controller import Controller


class TargetFailed(UserError):
    """A target that cannot be loaded; `user_traceback` is printed above the one line."""

    def __init__(self, message: str, user_traceback: str | None) -> None:
        super().__init__(message)
        self.user_traceback = user_traceback


def project_config() -> ProjectConfig | None:
    try:
        return ProjectConfig.find()
    except ProjectError as exc:
        raise UserError(str(exc)) from None


def resolve_operator(target: str | None) -> Operator:
    if target is None:
        config = project_config()
        target = config.operator if config is not None else None
    if target is None:
        from asyncop.controllers.registry import OPERATOR

        return OPERATOR
    try:
        return load_operator(target)
    except TargetError as exc:
        raise TargetFailed(str(exc), exc.user_traceback) from None


def operator_crds(op: Operator, controllers: list[Controller]) -> list[RawObject]:
    """The CRDs the operator owns: its resources and the resource classes it watches."""
    try:
        return Inspection(op, tuple(controllers)).crds()
    except CRDError as exc:
        raise UserError(str(exc)) from None
