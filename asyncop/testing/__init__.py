"""The public test kit: FakeClock, pytest fixtures (apiserver, client, manager), builders.

Nothing in the asyncop package imports this module; tests and operator authors do.
"""

from asyncop.testing.clock import FakeClock
from asyncop.testing.wait import eventually

__all__ = ["FakeClock", "eventually"]
