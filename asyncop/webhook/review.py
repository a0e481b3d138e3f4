"""What an admission handler receives and how it refuses.

`AdmissionRequest` is a read-only view of the AdmissionReview `request` (raw JSON dicts, no
model parsing: `object` and `old_object` are the objects as the API server sent them).
`Denied` is raised by a handler to refuse; the answer carries its message, code and reason —
403 Forbidden by default, like controller-runtime's `admission.Denied`. Invariant: a handler
that returns normally allows the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AdmissionRequest:
    raw: dict[str, Any]

    @property
    def uid(self) -> str:
        return str(self.raw.get("uid", ""))

    @property
    def operation(self) -> str:
        """CREATE, UPDATE, DELETE or CONNECT."""
        return str(self.raw.get("operation", ""))

    @property
    def kind(self) -> str:
        return str((self.raw.get("kind") or {}).get("kind", ""))

    @property
    def resource(self) -> tuple[str, str, str]:
        """(group, version, resource) of the request."""
        res = self.raw.get("resource") or {}
        return str(res.get("group", "")), str(res.get("version", "")), \
            str(res.get("resource", ""))

    @property
    def sub_resource(self) -> str:
        return str(self.raw.get("subResource", ""))

    @property
    def name(self) -> str:
        return str(self.raw.get("name", ""))

    @property
    def namespace(self) -> str:
        return str(self.raw.get("namespace", ""))

    @property
    def object(self) -> dict[str, Any] | None:
        obj = self.raw.get("object")
        return obj if isinstance(obj, dict) else None

    @property
    def old_object(self) -> dict[str, Any] | None:
        obj = self.raw.get("oldObject")
        return obj if isinstance(obj, dict) else None

    @property
    def dry_run(self) -> bool:
        return bool(self.raw.get("dryRun"))

    @property
    def username(self) -> str:
        return str((self.raw.get("userInfo") or {}).get("username", ""))


class Denied(Exception):
    """Refuse the request with `message` (and optional per-field causes)."""

    def __init__(self, message: str, *, code: int = 403, reason: str = "Forbidden",
                 causes: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason
        self.causes = causes or []

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = {"status": "Failure", "message": self.message,
                                  "reason": self.reason, "code": self.code}
        if self.causes:
            status["details"] = {"causes": self.causes}
        return status


__all__ = ["AdmissionRequest", "Denied"]
