"""Condition: metav1.Condition as a Model, and `Conditions`, the list of them keyed by type.

`status.conditions: Conditions = []` gives the schema Kubernetes' own types use
(`x-kubernetes-list-type: map` keyed by `type`), so server-side apply merges conditions one by
one. Invariant: `status` is one of "True", "False", "Unknown", as kube requires.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from asyncop.crd.markers import Int64, ListMap
from asyncop.crd.model import Model


class Condition(Model):
    """One aspect of the object's state (metav1.Condition)."""

    type: str
    """The condition's type, in CamelCase (e.g. Ready)."""
    status: Literal["True", "False", "Unknown"]
    """Whether the condition holds."""
    reason: str | None = None
    """A CamelCase machine-readable reason for the last transition."""
    message: str | None = None
    """A human-readable message about the last transition."""
    last_transition_time: datetime | None = None
    """When the status last changed."""
    observed_generation: Int64 | None = None
    """The metadata.generation the condition was computed from."""


Conditions = Annotated[list[Condition], ListMap("type")]
"""`conditions` as kube declares it: a list merged by `type`."""
