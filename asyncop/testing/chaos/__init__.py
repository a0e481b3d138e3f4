"""Chaos for any operator: a seeded soak with faults, replicas, and invariants you declare.

```python
from asyncop.testing.chaos import Converges, Scenario, Workload, created_at_most, run_soak

scenario = Scenario(
    operator=operator,                                   # what `asyncop run` runs
    workload=Workload(populate=populate, ops={"resize": resize, "churn": churn}),
    invariants=[
        Converges("memcached-has-its-deployment", Memcached, deployment_matches, within=30),
        created_at_most(Memcached, DEPLOYMENT, 1),       # never a second child, even on a retry
    ],
)

async def test_chaos() -> None:
    await run_soak(scenario, seed=7, seconds=60)        # raises SoakFailed naming violations
```

`asyncop soak path/to/that_file.py --minutes 10 --seed 7` runs the same scenario for longer
and prints one JSON line (exit 1 on any violation). Several replicas of the operator run
against the embedded API server over real HTTP, each behind a link the soak can cut; the
world moves on a paced fake clock; the fault kinds (`FAULT_KINDS`: SIGKILL and SIGTERM of the
replica that owns the work, API server restarts with and without state, watch cuts, 410
storms, 429s, 5xx bursts, 409s, slow responses, clock jumps and wall-clock steps) come on a
schedule drawn from the seed. Besides the scenario's invariants, the built-in ones always
hold: no key reconciled by two replicas at once, no error log without a cause, bounded task
and memory growth, no task left once the replicas stop. docs/soak.md is the guide.

Modules: `scenario` (Scenario), `world` (Workload, World), `invariants` (the four kinds),
`rules` (ready-made invariants), `facts` (Snapshot, History, Change), `samples` (a workload
from sample YAML), `engine` (soak, run_soak), `config` (SoakConfig), `report` (Report, SoakFailed),
`faults`, `replicas`, `links`, `clock`, `health`, `checks` (the machinery), `bundled` (the
bundled six operators' scenario, a worked example). Nothing in the asyncop package imports
this one except the `asyncop soak` command.
"""

from asyncop.testing.chaos.config import SoakConfig
from asyncop.testing.chaos.engine import run_soak, soak
from asyncop.testing.chaos.facts import Change, History, KindLike, Obj, Ref, Snapshot
from asyncop.testing.chaos.faults import FAULT_KINDS
from asyncop.testing.chaos.invariants import (
    BUILTIN,
    Always,
    AtEnd,
    Converges,
    Invariant,
    Tracked,
    Tracker,
    Violation,
)
from asyncop.testing.chaos.report import Report, SoakFailed
from asyncop.testing.chaos.rules import (
    created_at_most,
    expected_children,
    live_at_most,
    observes_generation,
)
from asyncop.testing.chaos.samples import from_samples
from asyncop.testing.chaos.scenario import Scenario
from asyncop.testing.chaos.world import Op, Workload, World

__all__ = [
    "BUILTIN",
    "FAULT_KINDS",
    "Always",
    "AtEnd",
    "Change",
    "Converges",
    "History",
    "Invariant",
    "KindLike",
    "Obj",
    "Op",
    "Ref",
    "Report",
    "Scenario",
    "Snapshot",
    "SoakConfig",
    "SoakFailed",
    "Tracked",
    "Tracker",
    "Violation",
    "Workload",
    "World",
    "created_at_most",
    "expected_children",
    "from_samples",
    "live_at_most",
    "observes_generation",
    "run_soak",
    "soak",
]
