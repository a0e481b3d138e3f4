"""inspect: build an Operator's controllers offline to read what they declare.

Generating manifests needs what only built controllers know: their watches (and so the
resource classes whose CRDs the operator owns) and their RBAC rules. `inspect` builds every
controller against a Manager that is never started (no task, no connection: the Client is
lazy), so it works without a cluster and without an event loop.

`crds()` are the CRDs of its typed resources; `rbac_document` is the operator's
permissions in the layout the Helm charts read (`files/rbac-rules.yaml`): `manager`
(Events, plus the operator's extra rules), `leaderElection` (the Lease), `sharding` (the
shard and member Leases) and `controllers`
(name -> that controller's rules, reads of watched kinds included). Invariant: the document
is deterministic (rules merged and sorted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asyncop.api import KindSource, RawObject
from asyncop.client import ClientConfig
from asyncop.crd import CustomResource, crds
from asyncop.operator.spec import Operator, watched_resources
from asyncop.runtime import leader, recorder, sharding
from asyncop.runtime.controller import Controller
from asyncop.runtime.manager import Manager
from asyncop.runtime.rbac import merge_rules

_OFFLINE = ClientConfig(host="http://127.0.0.1:9", source="offline inspection")


@dataclass(frozen=True, slots=True)
class Inspection:
    operator: Operator
    controllers: tuple[Controller, ...]

    @property
    def resources(self) -> list[KindSource]:
        """The operator's resource classes: those it lists, then those its controllers watch."""
        out = list(self.operator.resources)
        for source in watched_resources(self.controllers):
            if all(source is not s for s in out):
                out.append(source)
        return out

    @property
    def resource_classes(self) -> list[type[CustomResource]]:
        """The typed resources among `resources`: the ones that have CRDs."""
        return [s for s in self.resources if isinstance(s, type) and issubclass(s, CustomResource)]

    def crds(self) -> list[RawObject]:
        """The CRDs the operator owns (every version of a resource in one CRD), by name."""
        return crds(*self.resource_classes)

    def rbac_document(self) -> dict[str, Any]:
        """Permissions by part, for a chart's `files/rbac-rules.yaml`."""
        manager = merge_rules([*recorder.RBAC_RULES, *self.operator.rbac])
        return {
            "manager": [r.to_dict() for r in manager],
            "leaderElection": [r.to_dict() for r in leader.RBAC_RULES],
            "sharding": [r.to_dict() for r in sharding.RBAC_RULES],
            "controllers": {c.name: [r.to_dict() for r in c.rbac_rules]
                            for c in self.controllers},
        }


def inspect(op: Operator) -> Inspection:
    """Build every controller of `op` on an unstarted Manager and describe them."""
    mgr = Manager(config=_OFFLINE)
    return Inspection(op, tuple(op.install(mgr)))
