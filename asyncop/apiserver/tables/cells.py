"""Cell helpers shared by the built-in table printers: the `Column` value and safe getters.

Invariant: every getter tolerates partial or malformed objects (missing keys, wrong types)
and returns an empty value instead of raising, so a cell never breaks a whole Table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncop.apiserver.tables.timefmt import human_age

Cell = Callable[[dict[str, Any], datetime], Any]
NAME_DESC = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DESC = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC."
)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    cell: Cell
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def name_column() -> Column:
    return Column("Name", "string", lambda o, _n: meta(o).get("name", ""), "name", NAME_DESC)


def age_column() -> Column:
    return Column(
        "Age", "date", lambda o, n: human_age(meta(o).get("creationTimestamp"), n), "",
        AGE_DESC,
    )


def col(name: str, typ: str, cell: Cell, *, priority: int = 0, description: str = "") -> Column:
    return Column(name, typ, cell, "", description or name, priority)


def selector_text(sel: Any) -> str:
    if not isinstance(sel, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in as_dict(sel.get("matchLabels")).items()]
    for expr in as_list(sel.get("matchExpressions")):
        op = str(get(expr, "operator") or "")
        key = str(get(expr, "key") or "")
        values = ",".join(str(v) for v in as_list(get(expr, "values")))
        if op == "In":
            parts.append(f"{key} in ({values})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def containers(obj: dict[str, Any], field: str) -> str:
    cs = as_list(get(obj, "spec", "template", "spec", "containers"))
    return ",".join(str(as_dict(c).get(field, "")) for c in cs) or "<none>"


def workload_extra() -> list[Column]:
    return [
        col("Containers", "string", lambda o, _n: containers(o, "name"), priority=1),
        col("Images", "string", lambda o, _n: containers(o, "image"), priority=1),
        col("Selector", "string", lambda o, _n: selector_text(get(o, "spec", "selector")),
             priority=1),
    ]


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
