"""Built-in kinds as kube-apiserver treats them: typed decoding, defaults, validation.

kube decodes a built-in object into its Go type (unknown and duplicate fields, wrong JSON
types), defaults it (`SetDefaults_*`), then validates it (`pkg/apis/*/validation`). The same
three steps happen here, on JSON dicts, in this order, from the Writer
(`storage/writer.py`):

- `decode`: the object against kube's schema of the kind (`asyncop.kubespec`, the
  version the server reports);
- `defaults(rt, obj, old)`: on create (old is None) and main-endpoint updates;
- `validate(rt, obj, old)`: after admission, the 422 causes in kube's words.

One module per family of kinds, each with its `DEFAULTS` and `VALIDATORS` tables keyed by
storage identity (group, plural) — a validator may also be keyed by the request's own
(group, plural) when a group that views another's storage has rules of its own
(events.k8s.io Events) —: `pods` (Pod), `workloads` (Deployment, ReplicaSet, DaemonSet),
`statefulsets`, `batch` (Job, with `jobpolicies`), `cronjobs`, `services` (with
`serviceips`), `config` (ConfigMap, Secret; `gojson` words Go's JSON errors), `namespaces`,
`serviceaccounts`, `events`, `coordination` (Lease), `networking` (Ingress, NetworkPolicy),
`autoscaling` (HorizontalPodAutoscaler), `policy` (PodDisruptionBudget), `rbac`. The pod
spec every workload embeds is shared: `poddefaults` (its defaults), `podspec`
(ValidatePodSpec / ValidatePodTemplateSpec) over `containers`, `resources`, `security`,
`probes`, `volumes`, `filepaths` and `scheduling`; `quantity` is kube's resource.Quantity,
`cron` its CronJob schedule parser, `binding` the pods/binding rules. Shared by all:
`fields` (safe accessors, field errors, labels and label selectors), `checks`
(apimachinery's string checks), `netutils` (IPs and CIDRs) and `gofmt` (Go's printing of
values), with kube's messages; `knownvalid` remembers the parts replicas repeat that were
found valid (or decoded unchanged) — probes, resources, volumes, a container outside its
env, label sets, a pod's QoS class, a whole pod spec but its env values (`specmemo`) — so
a repeated part costs one lookup, and a body decoded with every Quantity canonical skips
the canonical walk (`canonical`). Decoding is `decode` (over `gotypes`, `walker`,
`goerrors`, `dupkeys`, `unstructured`, `applycheck`). CRDs and
webhook configurations keep their rules in `core` (`crds`, `webhookconfig`) and are
dispatched from here. Invariants: defaults fill only absent fields; validators never raise
on a value of the wrong shape and never mutate `old` (a Job's validation on create fills
its generated selector, as kube's strategy does once the uid exists).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from asyncop.api import StatusCause
from asyncop.apiserver.builtin import (
    autoscaling,
    batch,
    config,
    coordination,
    cronjobs,
    events,
    namespaces,
    networking,
    pods,
    policy,
    rbac,
    serviceaccounts,
    services,
    specrecall,
    statefulsets,
    workloads,
)
from asyncop.apiserver.core import crds
from asyncop.apiserver.core import webhookconfig as webhook_config
from asyncop.apiserver.core.resources import ResourceType

Obj = dict[str, Any]
Defaulter = Callable[[Obj, Obj | None], None]
Validator = Callable[[Obj, Obj | None], list[StatusCause]]


def _crd_defaults(obj: Obj, old: Obj | None) -> None:
    status = old.get("status") if old is not None else None
    obj["status"] = orjson.loads(orjson.dumps(status)) if isinstance(status, dict) else {}
    crds.default_crd(obj)


_FAMILIES = (pods, workloads, statefulsets, batch, cronjobs, services, config, namespaces,
             events, coordination, serviceaccounts, networking, autoscaling, policy, rbac)

_DEFAULTS: dict[tuple[str, str], Defaulter] = {
    ("apiextensions.k8s.io", "customresourcedefinitions"): _crd_defaults,
    webhook_config.VALIDATING_GR: lambda obj, _old: webhook_config.defaults(obj, False),
    webhook_config.MUTATING_GR: lambda obj, _old: webhook_config.defaults(obj, True),
}
_VALIDATORS: dict[tuple[str, str], Validator] = {
    webhook_config.VALIDATING_GR: lambda obj, _old: webhook_config.validate(obj, False),
    webhook_config.MUTATING_GR: lambda obj, _old: webhook_config.validate(obj, True),
}
for _family in _FAMILIES:
    _DEFAULTS.update(_family.DEFAULTS)
    _VALIDATORS.update(_family.VALIDATORS)


def defaults(rt: ResourceType, obj: Obj, old: Obj | None, *, recall: bool = True) -> None:
    """kube's defaults of a built-in kind (nothing for kinds without any). `recall=False`:
    no pod spec is recalled nor remembered (`specrecall`) — for a write whose object
    something may still change in place before it is validated (a recalled spec's parts
    are stored objects' too)."""
    fn = _DEFAULTS.get(rt.gr)
    if fn is None:
        return
    if recall:
        fn(obj, old)
        return
    specrecall.pause(True)
    try:
        fn(obj, old)
    finally:
        specrecall.pause(False)


def validate(rt: ResourceType, obj: Obj, old: Obj | None) -> list[StatusCause]:
    """kube's validation of a built-in kind: the causes of a 422 (empty: valid)."""
    fn = _VALIDATORS.get((rt.group, rt.plural)) or _VALIDATORS.get(rt.gr)
    return fn(obj, old) if fn is not None else []


__all__ = ["defaults", "validate"]
