"""The commands behind the `asyncop` CLI, one module each; `asyncop.cli` parses and dispatches.

- `run`: run an operator (the bundled one, or a user's `TARGET`) against a cluster or the
  embedded API server, with preflight checks and `--install-crds`/`--apply`;
- `errors`: `UserError`, the one-line failure every command reports with exit code 2.

Invariant: a user mistake never escapes as a traceback: it is a `UserError` (or a
`TargetError` carrying the user's own traceback), printed by the CLI as one line.
"""
