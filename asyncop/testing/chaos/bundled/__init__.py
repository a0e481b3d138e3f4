"""The bundled six operators under chaos: the scenario `make soak` and `asyncop soak` run.

`scenario(...)` sizes it (the defaults are `make soak`'s; tests/bench/test_soak.py runs a
small one); `SCENARIO` is the default, what `asyncop soak` runs outside an operator project.
The workload is in `workload.py`, the invariants in `invariants.py`: both are written with
the public API only, as a user's scenario would be (docs/soak.md).
"""

from __future__ import annotations

from asyncop.controllers.registry import OPERATOR
from asyncop.testing.chaos.bundled.invariants import invariants, summary
from asyncop.testing.chaos.bundled.workload import workload
from asyncop.testing.chaos.scenario import Scenario


def scenario(*, foos: int = 20, crdkinds: int = 10, jinghzhus: int = 8, networks: int = 10,
             live_ats: int = 150, per_second: float = 8.0) -> Scenario:
    """The bundled operators, their workload at these sizes, and their invariants."""
    return Scenario(
        operator=OPERATOR, name="asyncop",
        workload=workload(foos=foos, crdkinds=crdkinds, jinghzhus=jinghzhus,
                          networks=networks, live_ats=live_ats, per_second=per_second),
        invariants=invariants(), summary=summary)


SCENARIO = scenario()

__all__ = ["SCENARIO", "scenario"]
