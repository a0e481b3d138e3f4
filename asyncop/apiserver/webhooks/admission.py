"""The admission webhook chain: mutating webhooks in order, then validating ones at once.

`WebhookAdmission` reads the stored Mutating/ValidatingWebhookConfigurations (parsed once
per change of their resourceVersions), picks the webhooks whose rules, selectors and
matchConditions select a request, and calls them with an AdmissionReview (v1, or v1beta1 if
that is all a webhook accepts):

- mutating webhooks run one after another, configurations sorted by name, webhooks in order;
  each may return a JSONPatch, applied before the next one runs. A webhook with
  `reinvocationPolicy: IfNeeded` is called once more when a later webhook changed the object
  after it ran;
- validating webhooks run concurrently; the first denial (in configuration order) wins.

A denial becomes the webhook's Status (kube's `admission webhook "x" denied the request: …`,
code ≥ 400). A webhook that cannot be called, times out or answers malformed is a failure:
with `failurePolicy: Fail` the request gets 500 `Internal error occurred: failed calling
webhook "x": …`, with `Ignore` the webhook is skipped. Dry runs reach webhooks with
`dryRun: true` (v1 configurations may only declare sideEffects None or NoneOnDryRun, so kube's
"does not support dry run" refusal cannot arise). Warnings reach the client's Warning headers.

Invariants: no configuration, no cost (one count per configuration kind); the objects passed
in are never mutated (patches apply to copies); nothing here writes to the store.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import structlog

from asyncop.api import ApiError
from asyncop.apiserver.core import errors, matchconditions
from asyncop.apiserver.core.registry import CRD_GR
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.core.webhookconfig import (
    EXEMPT_GROUPS,
    MUTATING_GR,
    VALIDATING_GR,
    Webhook,
    parse,
)
from asyncop.apiserver.merge.patch import PatchError, json_patch
from asyncop.apiserver.storage.objects import copy_obj
from asyncop.apiserver.storage.views import Views
from asyncop.apiserver.webhooks.caller import Caller, CallFailed

if TYPE_CHECKING:
    from asyncop.apiserver.storage.store import Store

log = structlog.get_logger("asyncop.apiserver.webhooks")

NAMESPACES_GR = ("", "namespaces")
#: who the embedded server says made a request when no RBAC mode authenticates users
ADMIN_USER = {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]}


@dataclass(slots=True)
class Attributes:
    """What one request is, as admission sees it."""

    operation: str  # CREATE, UPDATE, DELETE
    rt: ResourceType
    namespace: str
    name: str
    subresource: str = ""
    dry_run: bool = False
    #: the authenticated user (RBAC mode); None: the anonymous server's `system:admin`
    user: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class WebhookAdmission:
    """Finds and calls the admission webhooks of a request (see the module docstring)."""

    def __init__(self, store: Store, caller: Caller | None = None) -> None:
        self.store = store
        self.caller = caller or Caller(store)
        self._views = Views()
        self._parsed: dict[tuple[str, str], tuple[tuple[tuple[str, str], ...], list[Webhook]]] \
            = {}

    async def close(self) -> None:
        await self.caller.close()

    def active(self) -> bool:
        """Is any webhook configured at all? (the whole cost when none is)"""
        return bool(self.store.count(MUTATING_GR) or self.store.count(VALIDATING_GR))

    def webhooks(self, *, mutating: bool) -> list[Webhook]:
        gr = MUTATING_GR if mutating else VALIDATING_GR
        configs = sorted(self.store.raw_items(gr), key=lambda c: c["metadata"]["name"])
        key = tuple((c["metadata"]["name"], c["metadata"].get("resourceVersion", ""))
                    for c in configs)
        cached = self._parsed.get(gr)
        if cached is None or cached[0] != key:
            hooks = [h for c in configs for h in parse(c, mutating=mutating)]
            cached = self._parsed[gr] = (key, hooks)
        return cached[1]

    def candidates(self, attrs: Attributes, *, mutating: bool) -> list[Webhook]:
        """Webhooks whose rules match the request (selectors need the object: `_selected`)."""
        rt = attrs.rt
        if rt.group in EXEMPT_GROUPS:
            return []
        return [h for h in self.webhooks(mutating=mutating) if h.rule_matches(
            operation=attrs.operation, group=rt.group, version=rt.version,
            resource=rt.plural, subresource=attrs.subresource, namespace=attrs.namespace)]

    # --- the two phases ------------------------------------------------------------------------

    async def mutate(self, attrs: Attributes, hooks: list[Webhook], obj: dict[str, Any] | None,
                     old: dict[str, Any] | None) -> dict[str, Any] | None:
        """`obj` after every selected mutating webhook (a copy if any changed it)."""
        changed_after: dict[str, bool] = {}
        ran: list[Webhook] = []
        for hook in hooks:
            if not self._selected(attrs, hook, obj, old):
                continue
            result = await self._call(attrs, hook, obj, old)
            if result is not None and attrs.operation != "DELETE":
                obj = result
                for name in changed_after:
                    changed_after[name] = True
            ran.append(hook)
            changed_after[hook.name] = False
        for hook in ran:  # reinvocation: once, for IfNeeded webhooks others changed after
            if hook.reinvoke and changed_after.get(hook.name):
                result = await self._call(attrs, hook, obj, old)
                if result is not None and attrs.operation != "DELETE":
                    obj = result
        return obj

    async def validate(self, attrs: Attributes, hooks: list[Webhook],
                       obj: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        """Raise the first denial or failure (in configuration order), if any."""
        chosen = [h for h in hooks if self._selected(attrs, h, obj, old)]
        if not chosen:
            return
        outcomes = await asyncio.gather(*(self._call(attrs, h, obj, old) for h in chosen),
                                        return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    # --- one webhook ---------------------------------------------------------------------------

    def _selected(self, attrs: Attributes, hook: Webhook, obj: dict[str, Any] | None,
                  old: dict[str, Any] | None) -> bool:
        if attrs.rt.gr == NAMESPACES_GR:
            subject = obj if obj is not None else old
            labels = ((subject or {}).get("metadata") or {}).get("labels") or {}
        elif attrs.namespace:
            ns = self.store.raw_get(NAMESPACES_GR, "", attrs.namespace) or {}
            labels = (ns.get("metadata") or {}).get("labels") or {}
        else:
            labels = None
        return hook.selects(obj=obj, old=old, namespace_labels=labels)

    def _sent_type(self, attrs: Attributes, hook: Webhook) -> ResourceType:
        """The type the webhook is shown the object as: the request's, or (matchPolicy
        Equivalent, a rule naming another version) that version's. Objects of a CRD that
        converts by webhook are already in their storage version here and stay so."""
        rt = attrs.rt
        version = hook.version_for(operation=attrs.operation, group=rt.group,
                                   version=rt.version, resource=rt.plural,
                                   subresource=attrs.subresource, namespace=attrs.namespace)
        if version is None or version == rt.version:
            return rt
        if rt.crd_name is not None:
            crd = self.store.raw_get(CRD_GR, "", rt.crd_name) or {}
            if ((crd.get("spec") or {}).get("conversion") or {}).get("strategy") == "Webhook":
                return rt
        return self.store.registry.resolve(rt.group, version, rt.plural) or rt

    def _request(self, attrs: Attributes, sent: ResourceType, obj: dict[str, Any] | None,
                 old: dict[str, Any] | None) -> dict[str, Any]:
        rt = attrs.rt
        kind = {"group": sent.group, "version": sent.version, "kind": sent.kind}
        resource = {"group": sent.group, "version": sent.version, "resource": sent.plural}
        request: dict[str, Any] = {
            "uid": str(uuid.UUID(int=self.store.rng.getrandbits(128), version=4)),
            "kind": kind, "resource": resource,
        }
        if attrs.subresource:
            request["subResource"] = attrs.subresource
        request["requestKind"] = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        request["requestResource"] = {"group": rt.group, "version": rt.version,
                                      "resource": rt.plural}
        if attrs.subresource:
            request["requestSubResource"] = attrs.subresource
        if attrs.name:
            request["name"] = attrs.name
        if attrs.namespace:
            request["namespace"] = attrs.namespace
        request["operation"] = attrs.operation
        request["userInfo"] = ADMIN_USER if attrs.user is None else \
            {"username": attrs.user, "groups": ["system:authenticated"]}
        request["object"] = obj
        request["oldObject"] = old
        request["dryRun"] = attrs.dry_run
        request["options"] = attrs.options
        return request

    async def _call(self, attrs: Attributes, hook: Webhook, obj: dict[str, Any] | None,
                    old: dict[str, Any] | None) -> dict[str, Any] | None:
        """Call one webhook: the patched object (mutating, if it patched), else None.
        Raises the denial, or the failure when the policy is Fail."""
        sent = self._sent_type(attrs, hook)
        if sent is not attrs.rt:  # kube converts to the version the rule names
            obj = self._views.view(sent, obj) if obj is not None else None
            old = self._views.view(sent, old) if old is not None else None
        request = self._request(attrs, sent, obj, old)
        try:
            if hook.match_conditions:
                call, why = matchconditions.evaluate(hook.match_conditions, obj=obj, old=old,
                                                     request=request)
                if why is not None:
                    raise CallFailed(why)
                if not call:
                    return None
            version = "v1" if "v1" in hook.review_versions or not hook.review_versions \
                else "v1beta1"
            answer = await self.caller.post(
                url=hook.url, service=hook.service, ca_bundle=hook.ca_bundle,
                timeout=hook.timeout,
                body={"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}",
                      "request": request})
            response = _check_response(answer, version, request["uid"], hook.mutating)
        except CallFailed as exc:
            if hook.failure_policy == "Ignore":
                log.warning("webhook failed, ignored (failurePolicy Ignore)", webhook=hook.name,
                            error=str(exc))
                return None
            raise errors.internal(f'failed calling webhook "{hook.name}": {exc}') from exc
        attrs.warnings.extend(str(w) for w in response.get("warnings") or ()
                              if isinstance(w, str))
        if response.get("allowed") is not True:
            raise _denied(hook.name, response.get("status"))
        patch = response.get("patch")
        if not patch or obj is None:
            return None
        try:
            ops = orjson.loads(base64.b64decode(patch))
            if not isinstance(ops, list):
                raise PatchError("the patch is not a JSON array")
            patched = json_patch(copy_obj(obj), ops)
            return self._views.view(attrs.rt, patched) if sent is not attrs.rt else patched
        except (ValueError, PatchError) as exc:
            raise errors.internal(f'failed calling webhook "{hook.name}": received invalid '
                                  f"webhook response: {exc}") from exc


def _check_response(answer: dict[str, Any], version: str, uid: str,
                    mutating: bool) -> dict[str, Any]:
    """The `response` of an AdmissionReview answer, or CallFailed in kube's words."""
    api_version, kind = answer.get("apiVersion"), answer.get("kind")
    if api_version != f"admission.k8s.io/{version}" or kind != "AdmissionReview":
        raise CallFailed(f"received invalid webhook response: expected webhook response of "
                         f"admission.k8s.io/{version}, Kind=AdmissionReview, got "
                         f"{api_version or ''}, Kind={kind or ''}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise CallFailed("received invalid webhook response: webhook response was absent")
    if response.get("uid") != uid:
        raise CallFailed(f'received invalid webhook response: expected response.uid="{uid}", '
                         f'got "{response.get("uid", "")}"')
    if response.get("patch"):
        if not mutating:
            raise CallFailed("received invalid webhook response: validating webhook may not "
                             "return response.patch")
        patch_type = response.get("patchType")
        if patch_type is None and version == "v1":
            raise CallFailed("received invalid webhook response: webhook returned "
                             "response.patch but not response.patchType")
        if patch_type not in (None, "JSONPatch"):
            raise CallFailed(f"received invalid webhook response: webhook returned invalid "
                             f'response.patchType of "{patch_type}"')
    return response


def _denied(name: str, status: Any) -> ApiError:
    """kube's ToStatusErr: the webhook's Status, code ≥ 400, message prefixed."""
    result = dict(status) if isinstance(status, dict) else {}
    denied = f'admission webhook "{name}" denied the request'
    code = result.get("code")
    code = int(code) if isinstance(code, int) and code >= 400 else 400
    if result.get("message"):
        message = f"{denied}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied}: {result['reason']}"
    else:
        message = f"{denied} without explanation"
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Failure", "message": message}
    if result.get("reason"):
        body["reason"] = result["reason"]
    if isinstance(result.get("details"), dict):
        body["details"] = result["details"]
    body["code"] = code
    return ApiError(body)


__all__ = ["ADMIN_USER", "Attributes", "WebhookAdmission"]
