"""The public test kit (docs/testing.md): what a test of an operator needs, in one import.

- time: `FakeClock`; `eventually` (wait in real time for real I/O) and `advance_until` (move
  virtual time a step at a time until something holds, letting real I/O run between steps);
- the operator: `run_operator` (its CRDs installed, its controllers in a Manager) and
  `idle(mgr)` (nothing queued or reconciling);
- what it did: `events_about` / `expect_event` (the Events an object got), and the Cache's
  owner index, `mgr.cache.owned_by(kind, owner)`;
- the simulated cluster: `SimulatorConfig` (`ApiServer(simulators=...)`), `POD_ANNOTATIONS`
  and `pod_annotations(...)` (how long a pod takes to start, runs, and how it ends);
- pytest fixtures (`asyncop.testing.fixtures`, registered when asyncop is installed):
  `apiserver`, `apiserver_no_sim`, `apiserver_on_fake_clock`, `kubeconfig`, `fake_clock`;
- chaos: `asyncop.testing.chaos` (docs/soak.md).

Nothing in the asyncop package imports this module (but `asyncop soak`, which is its chaos
part run from the command line); tests and operator authors do.
"""

from asyncop.apiserver.simulators.config import (
    POD_ANNOTATIONS,
    PodAnnotation,
    SimulatorConfig,
    pod_annotations,
)
from asyncop.testing.clock import FakeClock
from asyncop.testing.events import events_about, expect_event
from asyncop.testing.operator import idle, run_operator
from asyncop.testing.wait import advance_until, eventually

__all__ = [
    "POD_ANNOTATIONS",
    "FakeClock",
    "PodAnnotation",
    "SimulatorConfig",
    "advance_until",
    "events_about",
    "eventually",
    "expect_event",
    "idle",
    "pod_annotations",
    "run_operator",
]
