"""matchConditions: CEL expressions that decide whether a webhook is called at all.

Each condition is evaluated with the variables `object`, `oldObject` (null when absent) and
`request` (the AdmissionRequest as JSON). kube's semantics: if any condition evaluates to
false the webhook is skipped; if all are true it is called; an evaluation error is a failure
of the webhook (its failurePolicy decides). Programs come from the same cached CEL compiler
as the CRD validation rules. Invariant: evaluation never raises; it returns a verdict.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.schema.cel import compile_rule


def compile_error(expression: str) -> str | None:
    """Why `expression` does not compile, or None."""
    return compile_rule(expression).error


def evaluate(conditions: tuple[tuple[str, str], ...], *, obj: Any, old: Any,
             request: dict[str, Any]) -> tuple[bool, str | None]:
    """(call the webhook?, error). An error is returned with False."""
    if not conditions:
        return True, None
    from celpy.adapter import json_to_cel
    from celpy.celtypes import BoolType

    activation = {"object": json_to_cel(obj), "oldObject": json_to_cel(old),
                  "request": json_to_cel(request)}
    for name, expression in conditions:
        compiled = compile_rule(expression)
        if compiled.error is not None:
            return False, f"compilation failed for match condition {name!r}: {compiled.error}"
        try:
            result = compiled.program.evaluate(activation)
        except Exception as exc:
            return False, f"failed to evaluate match condition {name!r}: {exc}"
        if not isinstance(result, bool | BoolType):
            return False, f"match condition {name!r} did not evaluate to a bool"
        if not bool(result):
            return False, None
    return True, None


__all__ = ["compile_error", "evaluate"]
