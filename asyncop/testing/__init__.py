"""The public test kit: FakeClock, `eventually`, `run_operator`, and pytest fixtures.

Nothing in the asyncop package imports this module; tests and operator authors do.
"""

from asyncop.testing.clock import FakeClock
from asyncop.testing.operator import run_operator
from asyncop.testing.wait import eventually

__all__ = ["FakeClock", "eventually", "run_operator"]
