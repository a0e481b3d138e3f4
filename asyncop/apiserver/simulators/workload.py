"""Pod-template helpers shared by the workload controllers (RS, Job, StatefulSet, DaemonSet).

Invariant: pure functions over raw dicts; a pod built from a template is a fresh deep copy,
controller-owned by its workload and carries the template's labels plus the given extras.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from asyncop.apiserver.resources import ResourceType
from asyncop.apiserver.simulators.base import (
    Obj,
    SimStore,
    controller_uid,
    deleting,
    name_of,
    ns_of,
    owner_ref,
    uid_of,
)

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: dict[str, Any]) -> str:
    """10 chars of `bcdfghjklmnpqrstvwxz2456789`, stable for equal templates."""
    digest = hashlib.sha256(orjson.dumps(template, option=orjson.OPT_SORT_KEYS)).digest()
    n = int.from_bytes(digest[:8], "big")
    out = []
    for _ in range(10):
        n, r = divmod(n, len(_ALPHABET))
        out.append(_ALPHABET[r])
    return "".join(out)


def pod_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def pod_active(pod: Obj) -> bool:
    """Not being deleted and not terminated."""
    return not deleting(pod) and (pod.get("status") or {}).get("phase") not in (
        "Succeeded", "Failed")


def pod_from_template(owner: Obj, *, api_version: str, kind: str,
                      extra_labels: dict[str, str], name: str | None = None,
                      generate_name: str | None = None) -> Obj:
    template: dict[str, Any] = orjson.loads(
        orjson.dumps((owner.get("spec") or {}).get("template") or {}))
    tmeta = template.get("metadata") or {}
    metadata: dict[str, Any] = {
        "namespace": ns_of(owner),
        "labels": {**(tmeta.get("labels") or {}), **extra_labels},
        "ownerReferences": [owner_ref(owner, api_version, kind)],
    }
    if name:
        metadata["name"] = name
    else:
        metadata["generateName"] = generate_name or f"{name_of(owner)}-"
    if tmeta.get("annotations"):
        metadata["annotations"] = dict(tmeta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": template.get("spec") or {}}


def owned_pods(store: SimStore, pod_rt: ResourceType, owner: Obj) -> list[Obj]:
    """Pods controlled by `owner` (pre-filtered by its selector's matchLabels)."""
    selector = ((owner.get("spec") or {}).get("selector") or {}).get("matchLabels") or None
    uid = uid_of(owner)
    return [p for p in store.list(pod_rt, ns_of(owner), label_selector=selector)
            if controller_uid(p) == uid]
