"""Operator: named controller factories (or one setup function), resources and extra RBAC.

Two ways to declare the controllers, like controller-runtime's builders and kopf's modules:

- `controllers={"memcached": memcached_controller}`: name -> factory taking the Manager
  (`--controllers` picks among the names);
- `setup=fn`: `fn(mgr)` adds controllers itself (`mgr.add`) and/or returns one or several.

`resources` lists typed resource classes (all versions) whose CRDs the operator owns; the
resource classes its controllers watch (`for_(Memcached)`) are found without listing them.
`rbac` adds rules beyond what the controllers declare (e.g. for a webhook or a startup step).

Invariants: `controllers` and `setup` are never both given (neither: an operator with no
controllers yet, as `asyncop init` makes one); `install` adds every controller
it builds to the Manager exactly once and returns them in order; `--workers` overrides each
built controller's worker count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from asyncop.api import KindSource
from asyncop.runtime.controller import Controller
from asyncop.runtime.manager import Manager
from asyncop.runtime.rbac import PolicyRule

ControllerFactory = Callable[[Manager], Controller]
"""`factory(mgr) -> Controller`; factories may take keyword options with defaults."""

Setup = Callable[[Manager], "Controller | Iterable[Controller] | None"]
"""`setup(mgr)`: adds controllers to the Manager and/or returns them."""


class OperatorError(ValueError):
    """An Operator declared or used wrongly; the message is one line naming the fix."""


@dataclass(frozen=True, kw_only=True)
class Operator:
    name: str
    controllers: Mapping[str, ControllerFactory] = field(default_factory=dict)
    setup: Setup | None = None
    resources: Sequence[KindSource] = ()
    rbac: Sequence[PolicyRule] = ()

    def __post_init__(self) -> None:
        if self.controllers and self.setup is not None:
            raise OperatorError(
                f"operator {self.name!r}: give either controllers={{name: factory}} or "
                "setup=function, not both"
            )

    @property
    def lease_name(self) -> str:
        """The leader-election Lease name: the operator's name as a DNS subdomain."""
        return re.sub(r"[^a-z0-9.-]+", "-", self.name.lower()).strip("-.") or "operator"

    @property
    def names(self) -> list[str]:
        """The named controllers (empty for a setup function, whose names show once built)."""
        return list(self.controllers)

    def select(self, names: Sequence[str] | None) -> list[str]:
        """The controller names to run: all by default, else `names` checked against ours."""
        if names is None:
            return self.names
        if self.setup is not None:
            raise OperatorError(
                f"--controllers picks among named controllers, and {self.name} is a setup "
                "function; declare CONTROLLERS = {name: factory} to choose"
            )
        unknown = [n for n in names if n not in self.controllers]
        if unknown:
            raise OperatorError(
                f"unknown controller {unknown[0]!r}; choose from: {', '.join(self.controllers)}"
            )
        if not names:
            raise OperatorError(f"--controllers is empty; choose from: {', '.join(self.names)}")
        return list(names)

    @property
    def empty(self) -> bool:
        """No controllers declared yet (a freshly scaffolded project)."""
        return not self.controllers and self.setup is None

    def install(
        self, mgr: Manager, *, names: Sequence[str] | None = None, workers: int | None = None
    ) -> list[Controller]:
        """Build the controllers (all, or `names`), add them to `mgr`, and return them."""
        chosen = self.select(names)
        if self.setup is None:
            built = [self.controllers[n](mgr) for n in chosen]  # none for an empty operator
            for c in built:
                mgr.add(c)
        else:
            before = {id(c) for c in mgr.controllers}
            returned = _as_list(self.setup(mgr), self.name)
            added = {id(c) for c in mgr.controllers}
            for c in returned:
                if id(c) not in added:
                    mgr.add(c)
            built = [c for c in mgr.controllers
                     if id(c) not in before and isinstance(c, Controller)]
            if not built:
                raise OperatorError(
                    f"{self.name}: setup(mgr) added no controllers; call mgr.add(controller) "
                    "or return the controllers"
                )
        if workers is not None:
            for c in built:
                c.workers = workers
        return built


def _as_list(value: object, name: str) -> list[Controller]:
    if value is None:
        return []
    if isinstance(value, Controller):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        items = list(value)
        if all(isinstance(c, Controller) for c in items):
            return items
    raise OperatorError(
        f"{name}: setup(mgr) returned {type(value).__name__}; return a Controller, a list of "
        "Controllers or None"
    )


def watched_resources(controllers: Iterable[Controller]) -> list[KindSource]:
    """The resource classes the controllers watch (declared with `for_(Cls)` etc.), in order."""
    out: list[KindSource] = []
    for c in controllers:
        for w in c.watches:
            if w.source is not None and all(w.source is not s for s in out):
                out.append(w.source)
    return out
