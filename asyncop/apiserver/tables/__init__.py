"""Server-side printing: `Table` responses (what `kubectl get` shows) for every kind.

- `table`: `to_table(rt, objs, ...)` — CRD printer columns or the built-in layout, with
  `includeObject` handling;
- `builtin`, `extra`: the columns kubectl shows for the built-in kinds;
- `cells`: how values become cells; `jsonpath`: the JSONPath subset printer columns use;
- `timefmt`: kube's human durations (`5m2s`, `3d`).

Invariants: pure; a column whose path is missing renders as kube renders it (`<none>`/empty).
"""
