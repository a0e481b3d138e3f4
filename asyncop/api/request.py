"""A reconcile Request: the key of an object and nothing else.

Like controller-runtime's reconcile.Request it carries no information about the event that
caused it; the reconciler reads the current state from the cache.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Request:
    name: str
    namespace: str = ""

    @property
    def key(self) -> str:
        """`namespace/name`, or `name` for cluster-scoped objects (the Store's key)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def from_key(cls, key: str) -> Request:
        ns, sep, name = key.partition("/")
        return cls(name=name, namespace=ns) if sep else cls(name=key)

    def __str__(self) -> str:
        return self.key
