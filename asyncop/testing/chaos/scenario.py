"""Scenario: one operator, the workload it is put under, and what must hold meanwhile.

Concept: a `Scenario` is what a user declares next to their tests (and what `asyncop soak
TARGET` runs): the `Operator` (as `asyncop run` takes it), a `Workload` (world.py), the
scenario's invariants (invariants.py, rules.py) and the kinds its checks read beyond the
ones the operator watches. The soak always adds the built-in invariants.

`Scenario.for_operator(operator, samples=...)` is the scenario that needs no declaration:
copies of the project's samples changed at random (samples.py), and
`observes_generation` for every kind a controller reconciles whose status has an
`observedGeneration` — "the controller acted on the latest spec" holds for any operator
that reports it. The init scaffold's chaos test starts from it.

Invariants: a Scenario is a frozen declaration (nothing here starts tasks); invariant names
are distinct and none is a built-in's; it can be run any number of times (trackers are made
fresh per run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asyncop.api import kind_of
from asyncop.apiserver.simulators import SimulatorConfig
from asyncop.operator import Operator
from asyncop.operator.inspect import inspect
from asyncop.testing.chaos.facts import History, KindLike, Snapshot
from asyncop.testing.chaos.invariants import Invariant, check_names
from asyncop.testing.chaos.rules import observes_generation
from asyncop.testing.chaos.samples import SpecChange, from_samples
from asyncop.testing.chaos.world import Workload

Summary = Callable[[Snapshot, History], Mapping[str, Any]]
"""Extra fields for the report, from the facts at the end (e.g. how many jobs ran)."""


def default_simulators() -> SimulatorConfig:
    """Pods of Deployments become Running, run-to-completion pods run for 1 virtual second."""
    return SimulatorConfig(pod_run_duration=1.0, resync_period=3600.0)


@dataclass(frozen=True, kw_only=True)
class Scenario:
    operator: Operator
    workload: Workload = field(default_factory=Workload)
    invariants: Sequence[Invariant] = ()
    kinds: Sequence[KindLike] = ()
    """Kinds the checks read besides those the operator's controllers watch."""
    namespace: str = "default"
    """Where the workload's objects (by default) and the replicas' Leases live."""
    simulators: SimulatorConfig = field(default_factory=default_simulators)
    summary: Summary | None = None
    name: str = ""
    """For the report (default: the operator's name)."""

    def __post_init__(self) -> None:
        if not isinstance(self.operator, Operator):
            raise TypeError(f"Scenario(operator=...) takes an Operator, not "
                            f"{type(self.operator).__name__}")
        check_names(self.invariants)
        if not self.namespace:
            raise ValueError("Scenario(namespace=...) must not be empty")
        if not self.name:
            object.__setattr__(self, "name", self.operator.name)

    @classmethod
    def for_operator(cls, operator: Operator, *, samples: Path | str | None = None,
                     copies: int = 3, per_second: float = 1.0,
                     vary: Mapping[KindLike, SpecChange] | None = None,
                     invariants: Sequence[Invariant] = (), kinds: Sequence[KindLike] = (),
                     namespace: str = "default", name: str = "") -> Scenario:
        """The scenario without declarations: the samples under `samples` (if given)
        changed at random, every reconciled kind with `status.observedGeneration` checked
        to observe its latest generation, plus `invariants`."""
        workload = (Workload() if samples is None else
                    from_samples(samples, copies=copies, per_second=per_second, vary=vary))
        found = inspect(operator)
        crds = found.crds()
        named = {inv.name for inv in invariants}
        extra: list[Invariant] = []
        for kind in dict.fromkeys(c.primary for c in found.controllers if c.primary):
            if kind is None or not _has_observed_generation(crds, kind):
                continue
            rule = observes_generation(kind)
            if rule.name not in named:
                extra.append(rule)
        return cls(operator=operator, workload=workload, invariants=[*extra, *invariants],
                   kinds=kinds, namespace=namespace, name=name)


def _has_observed_generation(crds: list[Any], kind: KindLike) -> bool:
    k = kind_of(kind)
    for crd in crds:
        spec = crd.get("spec") or {}
        if spec.get("group") != k.group or (spec.get("names") or {}).get("plural") != k.plural:
            continue
        for version in spec.get("versions") or []:
            if version.get("name") != k.version:
                continue
            schema = ((version.get("schema") or {}).get("openAPIV3Schema") or {})
            status = (schema.get("properties") or {}).get("status") or {}
            return "observedGeneration" in (status.get("properties") or {})
    return False
