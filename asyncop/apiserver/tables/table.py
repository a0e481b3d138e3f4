"""Server-side printing: meta.k8s.io/v1 `Table`s for `kubectl get` (lists, objects, watches).

`to_table(rt, objs)` renders objects of one ResourceType: custom resources get `Name` plus
their `additionalPrinterColumns` (evaluated with the simple JSONPath of `jsonpath`),
built-ins get the columns kubectl users know (`builtin`), anything else Name + Age.

Invariants:
- `date` cells are human durations since the timestamp (`5m12s`, `3h`, `2d3h`; `<unknown>`
  when unset, `<invalid>` when unparsable), computed against `now` (default: the real clock);
- a cell whose path selects nothing is `null`; typed columns carry JSON-typed values, and a
  value of the wrong type becomes `null` as in kube;
- every row carries the object as `PartialObjectMetadata` (`Metadata`, default), the whole
  object (`Object`) or nothing (`None`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.tables.builtin import BUILTIN_TABLES
from asyncop.apiserver.tables.cells import Column, age_column, name_column
from asyncop.apiserver.tables.jsonpath import find
from asyncop.apiserver.tables.timefmt import human_age
from asyncop.clock import RealClock

__all__ = ["column_definitions", "human_age", "to_table"]

_COLUMN_DESC = "Custom resource definition column (in JSONPath format): "


def _custom_columns(rt: ResourceType) -> list[Column]:
    out = [name_column()]
    for col in rt.printer_columns:
        default_desc = _COLUMN_DESC + str(col.get("jsonPath"))
        out.append(
            Column(
                name=str(col.get("name", "")),
                type=str(col.get("type", "string")),
                format=str(col.get("format", "")),
                description=str(col.get("description") or default_desc),
                priority=int(col.get("priority", 0) or 0),
                cell=_jsonpath_cell(str(col.get("jsonPath", "")), str(col.get("type", "string"))),
            )
        )
    return out


def _columns(rt: ResourceType) -> list[Column]:
    if rt.is_custom:
        return _custom_columns(rt)
    factory = BUILTIN_TABLES.get((rt.group, rt.plural))
    if factory is not None:
        return factory()
    return [name_column(), age_column()]


def column_definitions(rt: ResourceType) -> list[dict[str, Any]]:
    return [c.definition() for c in _columns(rt)]


def _print_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return str(value)


def _typed_cell(typ: str, value: Any, now: datetime) -> Any:
    if typ == "string":
        return _print_string(value)
    if typ == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return None
    if typ == "number":
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if typ == "boolean":
        return value if isinstance(value, bool) else None
    if typ == "date":
        if not isinstance(value, str):
            return None
        return human_age(value, now)
    return value


def _jsonpath_cell(path: str, typ: str) -> Any:
    def cell(obj: dict[str, Any], now: datetime) -> Any:
        try:
            found = find(obj, path)
        except ValueError:
            return None
        if not found or found[0] is None:
            return "<unknown>" if typ == "date" and path == ".metadata.creationTimestamp" else None
        return _typed_cell(typ, found[0], now)

    return cell


def _row_object(obj: dict[str, Any], include_object: str) -> dict[str, Any] | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata") or {},
    }


def to_table(
    rt: ResourceType,
    objs: list[dict[str, Any]],
    *,
    include_object: str = "Metadata",
    now: datetime | None = None,
    resource_version: str | None = None,
    continue_: str | None = None,
    include_columns: bool = True,
) -> dict[str, Any]:
    """A meta.k8s.io/v1 Table of `objs` (all of type `rt`)."""
    moment = now if now is not None else RealClock().now()
    columns = _columns(rt)
    rows: list[dict[str, Any]] = []
    for obj in objs:
        row: dict[str, Any] = {"cells": [c.cell(obj, moment) for c in columns]}
        partial = _row_object(obj, include_object)
        if partial is not None:
            row["object"] = partial
        rows.append(row)
    meta: dict[str, Any] = {}
    if resource_version is not None:
        meta["resourceVersion"] = resource_version
    if continue_:
        meta["continue"] = continue_
    table: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    table["columnDefinitions"] = [c.definition() for c in columns] if include_columns else None
    table["rows"] = rows
    return table
