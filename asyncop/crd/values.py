"""JSON values as a structural schema lets the API server keep them.

`wire_value(value, schema)` drops the `null`s the schema does not allow: a null where a
node is not `nullable` is what kube-apiserver prunes (or rejects), so `to_raw()`, status
writes and CRD defaults leave them out instead. Nulls inside a node that preserves unknown
fields are kept (the server keeps them too). With `sort_sets=True`, lists of
`x-kubernetes-list-type: set` are sorted, so defaults built from Python sets are stable.
`strip_nulls(value)` drops every null, for values with no schema to consult.

Invariant: pure; the input is never mutated (dicts and lists come back as new containers).
"""

from __future__ import annotations

import json
from typing import Any

Schema = dict[str, Any]


def wire_value(value: Any, schema: Schema | None, *, sort_sets: bool = False) -> Any:
    """`value` without the nulls `schema` does not allow (see the module docstring)."""
    if schema is None:
        return value
    if isinstance(value, dict):
        props: Schema = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        rest = extra if isinstance(extra, dict) else None
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key, rest)
            if item is None and not (sub is None and preserve) and not (sub or {}).get(
                    "nullable"):
                continue
            out[key] = wire_value(item, sub, sort_sets=sort_sets)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        sub = items if isinstance(items, dict) else None
        listed = [wire_value(item, sub, sort_sets=sort_sets) for item in value]
        if sort_sets and schema.get("x-kubernetes-list-type") == "set":
            listed.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return listed
    return value


def strip_nulls(value: Any) -> Any:
    """`value` without any null (for values with no schema to consult)."""
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value
