"""Naming a field and its Python type in error messages.

`dotted(("spec", "ports", "[*]", "name"))` is `spec.ports[*].name` (a dict value is `[key]`);
`type_at(Model, path)` is the Python annotation at that path as a user wrote it, e.g.
`tuple[int, str]` or `int | str`, with `Annotated[...]` and `| None` peeled off.
Invariant: pure functions that never raise for a model.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel

Path = tuple[str, ...]


def dotted(path: Path) -> str:
    text = ""
    for part in path:
        if part == "[*]":
            text += "[*]"
        elif part == "*":
            text += "[key]"
        else:
            text += f".{part}" if text else part
    return text


def type_at(model: type[BaseModel], path: Path) -> str:
    return _type_name(_annotation_at(model, path))


def _strip(annotation: Any) -> Any:
    """`Annotated[X, ...]` -> X, `X | None` -> X."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) == 1:
                annotation = args[0]
                continue
        return annotation


def _annotation_at(model: type[BaseModel], path: Path) -> Any:
    current: Any = model
    for part in path:
        current = _strip(current)
        if part in ("[*]", "*"):
            args = typing.get_args(current)
            current = args[-1] if args else Any
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return current
        for name, field in current.model_fields.items():
            if part in (name, field.alias, field.validation_alias):
                current = field.annotation
                break
        else:
            return current
    return _strip(current)


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    text = repr(annotation).replace("typing.", "").replace("collections.abc.", "")
    for arg in _walk_args(annotation):
        if isinstance(arg, type):
            text = text.replace(f"{arg.__module__}.{arg.__qualname__}", arg.__name__)
            text = text.replace(repr(arg), arg.__name__)
    return text


def _walk_args(annotation: Any) -> list[Any]:
    out: list[Any] = []
    for arg in typing.get_args(annotation):
        out.append(arg)
        out.extend(_walk_args(arg))
    return out
