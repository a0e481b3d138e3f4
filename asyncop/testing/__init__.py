"""The public test kit: FakeClock, `eventually`, `run_operator`, `idle`, and pytest fixtures.

Nothing in the asyncop package imports this module; tests and operator authors do.
"""

from asyncop.testing.clock import FakeClock
from asyncop.testing.operator import idle, run_operator
from asyncop.testing.wait import eventually

__all__ = ["FakeClock", "eventually", "idle", "run_operator"]
