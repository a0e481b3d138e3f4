"""Writes through admission webhooks: kube's order around the synchronous `Writer`.

kube-apiserver runs a write as: decode and default → mutating admission (built-in plugins,
then webhooks) → validation → validating admission (webhooks) → storage. The `Writer` is
synchronous (in-process writers such as the simulators share it and never wait), so a write
that webhooks select runs it three times, with the awaits in between:

1. up to admission (`WriteContext.until_admission`): the defaulted, pruned object the
   mutating webhooks see, unknown-field warnings collected;
2. mutating webhooks, then a dry run of the mutated object: every check the write makes,
   the server fields it would get (name from generateName, uid);
3. validating webhooks on that object, then the real write with the same name and uid.

Another writer may commit during the awaits. The last step checks everything again, so the
store never holds an unchecked object: an update that named a resourceVersion fails with the
usual Conflict; one that did not (a patch, an unconditional update) is admitted again against
the new object, as kube's GuaranteedUpdate does (a bounded number of times).

Writes no configured webhook selects go straight to the Writer. In-process writes (the
simulators, the garbage collector) do not pass webhooks: kube's controllers would, but a
webhook guarding pods must not be able to stop the embedded kubelet.

Invariant: nothing is committed unless every webhook that selects it allowed it; the object
committed is the one the validating webhooks saw (same name and uid).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from asyncop.api import Conflict
from asyncop.apiserver.core import errors
from asyncop.apiserver.core.eventsv1 import is_events_v1
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.core.webhookconfig import Webhook
from asyncop.apiserver.storage.objects import copy_obj
from asyncop.apiserver.storage.views import Views
from asyncop.apiserver.storage.writer import DeleteResult, WriteContext, Writer
from asyncop.apiserver.webhooks.admission import Attributes, WebhookAdmission

if TYPE_CHECKING:
    from asyncop.apiserver.storage.store import Store

RETRIES = 5


def _options(kind: str, ctx: WriteContext) -> dict[str, Any]:
    options: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if ctx.dry_run:
        options["dryRun"] = ["All"]
    if ctx.manager and ctx.explicit_manager:
        options["fieldManager"] = ctx.manager
    return options


class AdmittedWriter:
    """The Writer's create/update/delete, with admission webhooks where they apply."""

    def __init__(self, store: Store, admission: WebhookAdmission, views: Views) -> None:
        self.store = store
        self.admission = admission
        self.views = views

    @property
    def writer(self) -> Writer:
        return self.store.writer

    async def create(self, rt: ResourceType, body: Any, *, namespace: str | None,
                     ctx: WriteContext) -> dict[str, Any]:
        if not self.admission.active() or not isinstance(body, dict):
            return self.writer.create(rt, body, namespace=namespace, ctx=ctx)
        raw_meta = body.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        ns = (namespace or str(meta.get("namespace") or "default")) if rt.namespaced else ""
        attrs = Attributes("CREATE", rt, ns, str(meta.get("name") or ""), dry_run=ctx.dry_run,
                           user=ctx.user,
                           options=_options("CreateOptions", ctx))
        mutating = self.admission.candidates(attrs, mutating=True)
        validating = self.admission.candidates(attrs, mutating=False)
        if not mutating and not validating:
            return self.writer.create(rt, body, namespace=namespace, ctx=ctx)
        obj = copy_obj(body) if is_events_v1(rt) else \
            self.writer.create(rt, copy_obj(body), namespace=namespace,
                               ctx=replace(ctx, until_admission=True))
        if mutating:
            obj = await self.admission.mutate(attrs, mutating, obj, None) or obj
        candidate = self.writer.create(rt, copy_obj(obj), namespace=namespace,
                                       ctx=replace(ctx, dry_run=True, warnings=[]))
        attrs.name = str(candidate["metadata"]["name"])
        if validating:
            await self.admission.validate(attrs, validating, self._view(rt, candidate), None)
        ctx.warnings.extend(attrs.warnings)
        if ctx.dry_run:
            return candidate
        final = copy_obj(obj)
        final.setdefault("metadata", {})["name"] = attrs.name
        return self.writer.create(rt, final, namespace=namespace,
                                  ctx=replace(ctx, uid=candidate["metadata"]["uid"],
                                              warnings=[]))

    async def update(self, rt: ResourceType, body: Any = None, *,
                     patch: Callable[[dict[str, Any]], Any] | None = None,
                     namespace: str | None, name: str, subresource: str = "",
                     ctx: WriteContext) -> dict[str, Any]:
        """Update with `body` (PUT) or with `patch(current object as served)` (PATCH: applied
        again when the object changed while webhooks ran and the result named no
        resourceVersion). The served view of the current object is made only for a patch or
        for webhooks, never for a plain PUT."""
        ns = (namespace or "") if rt.namespaced else ""
        for _attempt in range(RETRIES):
            old = self.store.raw_get(rt.gr, ns, name)
            if old is None:
                raise errors.not_found(rt, name)
            mutating: list[Webhook] = []
            validating: list[Webhook] = []
            if self.admission.active():  # nothing configured: no attributes, no view
                attrs = Attributes("UPDATE", rt, ns, name, subresource=subresource,
                                   user=ctx.user, dry_run=ctx.dry_run,
                                   options=_options("UpdateOptions", ctx))
                mutating = self.admission.candidates(attrs, mutating=True)
                validating = self.admission.candidates(attrs, mutating=False)
            if not mutating and not validating:
                return self.writer.update(
                    rt, body if patch is None else patch(self._view(rt, old)),
                    namespace=namespace, name=name, subresource=subresource, ctx=ctx)
            old_view = self._view(rt, old)
            new_body = body if patch is None else patch(old_view)
            # did the client name a resourceVersion? A patch's result carries the current
            # one (it was patched onto it): only a different one was named by the patch
            rv = (new_body.get("metadata") or {}).get("resourceVersion") \
                if isinstance(new_body, dict) else None
            named_rv = bool(rv) and (patch is None or rv != old["metadata"]["resourceVersion"])
            obj = self.writer.update(rt, copy_obj(new_body), namespace=namespace, name=name,
                                     subresource=subresource,
                                     ctx=replace(ctx, until_admission=True))
            if mutating:
                obj = await self.admission.mutate(attrs, mutating, obj, old_view) or obj
            obj.setdefault("metadata", {})["resourceVersion"] = \
                rv if named_rv else old["metadata"]["resourceVersion"]
            try:  # the object may have changed while the webhooks ran: checked again here
                candidate = self.writer.update(rt, copy_obj(obj), namespace=namespace,
                                               name=name, subresource=subresource,
                                               ctx=replace(ctx, dry_run=True, warnings=[]))
                if validating:
                    await self.admission.validate(attrs, validating,
                                                  self._view(rt, candidate), old_view)
                result = candidate if ctx.dry_run else self.writer.update(
                    rt, obj, namespace=namespace, name=name, subresource=subresource,
                    ctx=replace(ctx, warnings=[]))
            except Conflict:
                if named_rv or _attempt == RETRIES - 1:
                    raise
                continue  # admitted again against the new object
            ctx.warnings.extend(attrs.warnings)
            return result
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def delete(self, rt: ResourceType, namespace: str | None, name: str, *,
                     ctx: WriteContext, **options: Any) -> DeleteResult:
        ns = (namespace or "") if rt.namespaced else ""
        old = self.store.raw_get(rt.gr, ns, name) if self.admission.active() else None
        if old is not None:
            attrs = Attributes("DELETE", rt, ns, name, dry_run=ctx.dry_run, user=ctx.user,
                               options=_options("DeleteOptions", ctx))
            mutating = self.admission.candidates(attrs, mutating=True)
            validating = self.admission.candidates(attrs, mutating=False)
            old_view = self._view(rt, old)
            if mutating:
                await self.admission.mutate(attrs, mutating, None, old_view)
            if validating:
                await self.admission.validate(attrs, validating, None, old_view)
            ctx.warnings.extend(attrs.warnings)
        return self.writer.delete(rt, namespace, name, ctx=ctx, **options)

    def _view(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        return self.views.view(rt, obj)


__all__ = ["AdmittedWriter"]
