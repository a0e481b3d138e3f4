"""CEL validation rules of custom resources (`x-kubernetes-validations`), as kube evaluates them.

Each schema node may carry rules `{rule, message, messageExpression, reason, fieldPath,
optionalOldSelf}`. A rule is a CEL expression over `self` (the value at that node) and, on an
update, `oldSelf` (the value at the same place in the stored object). Evaluation uses the
cel-python library (`celpy`); compiled programs are cached by rule text.

Kube's semantics kept here:
- a rule that mentions `oldSelf` is a transition rule: it runs only on an update where the old
  value exists at that place (objects correlate by property name, map values by key, and
  list-type=map items by their keys; other list items do not correlate);
- a failing rule is a field error at the node's path (plus `fieldPath`), reported as kube
  renders it: `Invalid value: "object": <message>` with the schema type as the value;
  `reason` FieldValueForbidden gives `Forbidden: <message>`, FieldValueRequired
  `Required value: <message>`, FieldValueDuplicate `Duplicate value: "object"`;
- the message is `messageExpression`'s result when that evaluates to a non-empty string, else
  `message`, else `failed rule: <rule>`; a rule that cannot be evaluated (a missing field, a
  type error) fails with its error after the rule;
- rules run only on values that passed the structural validation (they are never given a
  value of the wrong type).

Invariants: pure (nothing is mutated); a rule that does not compile fails every object with
`compilation failed: ...` rather than being ignored.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from asyncop.api.status import StatusCause
from asyncop.apiserver.schema.text import child, index, quote

Schema = dict[str, Any]
_OLD_SELF = re.compile(r"\boldSelf\b")


class _Compiled:
    __slots__ = ("error", "program", "transition")

    def __init__(self, program: Any, error: str | None, transition: bool) -> None:
        self.program = program
        self.error = error
        self.transition = transition


@lru_cache(maxsize=4096)
def compile_rule(rule: str) -> _Compiled:
    """The compiled program of `rule` (cached), or its compile error."""
    import celpy  # imported on first use: only servers with CEL rules pay for it

    env = celpy.Environment()
    transition = bool(_OLD_SELF.search(rule))
    try:
        return _Compiled(env.program(env.compile(rule)), None, transition)
    except Exception as exc:  # celpy raises its parse errors with the caret line
        return _Compiled(None, " ".join(str(exc).split()), transition)


def compile_error(rule: str) -> str | None:
    """Why `rule` does not compile, or None (for CRD validation)."""
    return compile_rule(rule).error


def validate_rules(value: Any, schema: Schema, old: Any = None) -> list[StatusCause]:
    """Evaluate every rule in `schema` against `value` (an object's root) and `old`."""
    out: list[StatusCause] = []
    _walk(out, value, old, schema, "")
    return out


def has_rules(schema: Any) -> bool:
    """Whether any node of `schema` carries `x-kubernetes-validations`."""
    if isinstance(schema, dict):
        if schema.get("x-kubernetes-validations"):
            return True
        return any(has_rules(v) for v in schema.values())
    if isinstance(schema, list):
        return any(has_rules(v) for v in schema)
    return False


def _walk(out: list[StatusCause], value: Any, old: Any, schema: Schema, path: str) -> None:
    rules = schema.get("x-kubernetes-validations")
    if rules:
        _run(out, rules, value, old, schema, path)
    if isinstance(value, dict):
        props: dict[str, Schema] = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        old_map = old if isinstance(old, dict) else None
        for key, item in value.items():
            sub = props.get(key)
            if sub is None and isinstance(extra, dict):
                sub = extra
                where = f"{path}[{key}]"
            else:
                where = child(path, key)
            if sub is not None:
                _walk(out, item, old_map.get(key) if old_map is not None else None, sub, where)
    elif isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return
        olds = _correlate(value, old, schema)
        for i, item in enumerate(value):
            _walk(out, item, olds[i], items, index(path, i))


def _correlate(value: list[Any], old: Any, schema: Schema) -> list[Any]:
    """The old item of each new item: by keys for list-type=map, else none."""
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if schema.get("x-kubernetes-list-type") != "map" or not keys or not isinstance(old, list):
        return [None] * len(value)

    def ident(item: Any) -> tuple[Any, ...] | None:
        if not isinstance(item, dict):
            return None
        return tuple(repr(item.get(k)) for k in keys)

    by_key = {ident(o): o for o in old if ident(o) is not None}
    return [by_key.get(ident(item)) for item in value]


def _run(out: list[StatusCause], rules: list[Any], value: Any, old: Any, schema: Schema,
         path: str) -> None:
    from celpy.adapter import json_to_cel
    from celpy.celtypes import BoolType

    typ = str(schema.get("type") or "")
    this: Any = None
    previous: Any = None
    for rule in rules:
        if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
            continue
        text: str = rule["rule"]
        compiled = compile_rule(text)
        if compiled.transition and old is None:
            continue  # a transition rule needs the old value
        where = path
        field_path = str(rule.get("fieldPath") or "")
        if field_path:
            where = path + field_path if field_path.startswith(("[", ".")) else \
                child(path, field_path)
            where = where.lstrip(".")
        if compiled.error is not None:
            _fail(out, rule, where, typ, f"compilation failed: {compiled.error}")
            continue
        if this is None:
            this = json_to_cel(value)
            previous = json_to_cel(old) if old is not None else None
        activation = {"self": this}
        if previous is not None:
            activation["oldSelf"] = previous
        try:
            result = compiled.program.evaluate(activation)
        except Exception as exc:
            _fail(out, rule, where, typ, f"{_flat(text)}: {_eval_error(exc)}")
            continue
        if result is True or (isinstance(result, BoolType) and bool(result)):
            continue
        if not isinstance(result, bool | BoolType):
            _fail(out, rule, where, typ, f"{_flat(text)}: rule did not evaluate to a bool")
            continue
        _fail(out, rule, where, typ, _message(rule, activation))


def _message(rule: dict[str, Any], activation: dict[str, Any]) -> str:
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression:
        compiled = compile_rule(expression)
        if compiled.error is None:
            try:
                text = compiled.program.evaluate(activation)
            except Exception:
                text = None
            if isinstance(text, str) and text.strip():
                return str(text)
    message = rule.get("message")
    if isinstance(message, str) and message:
        return message
    return f"failed rule: {_flat(str(rule['rule']))}"


def _flat(rule: str) -> str:
    return " ".join(rule.split())


def _eval_error(exc: Exception) -> str:
    args = getattr(exc, "args", ())
    text = str(args[0]) if args else str(exc)
    return text.replace("no such member in mapping", "no such key")


def _fail(out: list[StatusCause], rule: dict[str, Any], path: str, typ: str,
          detail: str) -> None:
    reason = rule.get("reason") or "FieldValueInvalid"
    if reason == "FieldValueForbidden":
        message = f"Forbidden: {detail}"
    elif reason == "FieldValueRequired":
        message = f"Required value: {detail}"
    elif reason == "FieldValueDuplicate":
        message = f"Duplicate value: {quote(typ)}"
    else:
        reason = "FieldValueInvalid"
        message = f"Invalid value: {quote(typ)}: {detail}"
    out.append({"reason": reason, "message": message, "field": path})
