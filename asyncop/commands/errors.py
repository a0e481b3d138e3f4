"""UserError: a mistake the user can fix, printed by the CLI as one line with exit code 2."""

from __future__ import annotations


class UserError(Exception):
    """A mistake the user can fix; printed as one line, exit code 2."""
