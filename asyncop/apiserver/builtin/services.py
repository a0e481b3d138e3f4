"""Services: kube's defaults (type, sessionAffinity, traffic policies, ports) and validation.

Invariant: defaults fill only absent fields; validation is pure.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.fields import Obj, as_list, spec_of

SERVICES = ("", "services")


def _service_defaults(obj: Obj, old: Obj | None) -> None:
    spec = spec_of(obj)
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec.get("type") != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    for port in as_list(spec.get("ports")):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])
    if old is None:
        obj["status"] = {"loadBalancer": {}}


DEFAULTS: dict[tuple[str, str], Any] = {SERVICES: _service_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {}
