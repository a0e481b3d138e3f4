"""CRD conversion webhooks: objects between served versions, by the CRD author's webhook.

A CRD with `spec.conversion.strategy: Webhook` names a webhook (`conversion.webhook.
clientConfig`, `conversionReviewVersions`). The embedded server stores every object in the
storage version and converts at the edge, where the request's version and the storage
version differ:

- reads (get, list, watch, and the object a write answers with): stored → requested version,
  a whole list or watch batch in one ConversionReview;
- writes: the body is pruned, defaulted and validated in the requested version, then
  converted to the storage version, and everything after that (admission, the Writer's
  checks, the commit) works on the storage version.

kube checks what a webhook returns, and so does this: as many objects as were sent, each
with the desired apiVersion and the same kind; metadata comes from the original object except
labels and annotations (the only metadata a conversion may change). Failures are 500s worded
like kube's (`conversion webhook for <group/version>, Kind=<Kind> failed: …`). Invariant: the
store only ever holds storage-version objects; strategy None types never come here.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from asyncop.apiserver.core import errors
from asyncop.apiserver.core.registry import CRD_GR
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.core.webhookconfig import client_target
from asyncop.apiserver.storage.objects import copy_obj
from asyncop.apiserver.webhooks.caller import Caller, CallFailed

if TYPE_CHECKING:
    from asyncop.apiserver.storage.store import Store

TIMEOUT = 30.0  # kube's fixed timeout for conversion webhooks


class Conversion:
    def __init__(self, store: Store, caller: Caller) -> None:
        self.store = store
        self.caller = caller

    def webhook(self, rt: ResourceType) -> dict[str, Any] | None:
        """The conversion webhook config of `rt`'s CRD, if it converts by webhook."""
        if rt.crd_name is None or rt.version == rt.storage_version:
            return None
        crd = self.store.raw_get(CRD_GR, "", rt.crd_name)
        conversion = ((crd or {}).get("spec") or {}).get("conversion") or {}
        if conversion.get("strategy") != "Webhook":
            return None
        hook = conversion.get("webhook")
        return hook if isinstance(hook, dict) else {}

    def storage_api_version(self, rt: ResourceType) -> str:
        return f"{rt.group}/{rt.storage_version}"

    async def convert(self, rt: ResourceType, hook: dict[str, Any],
                      objects: list[dict[str, Any]], desired: str) -> list[dict[str, Any]]:
        """`objects` (any served versions) as `desired`; objects already there are kept."""
        todo = [i for i, o in enumerate(objects) if o.get("apiVersion") != desired]
        if not todo:
            return objects
        sent = [objects[i] for i in todo]
        converted = await self._call(rt, hook, sent, desired)
        out = list(objects)
        for i, original, new in zip(todo, sent, converted, strict=True):
            out[i] = _restore_meta(original, new)
        return out

    async def _call(self, rt: ResourceType, hook: dict[str, Any],
                    objects: list[dict[str, Any]], desired: str) -> list[dict[str, Any]]:
        gvk = f"{desired}, Kind={rt.kind}"
        versions = hook.get("conversionReviewVersions") or ["v1"]
        version = "v1" if "v1" in versions else "v1beta1"
        target = client_target(hook.get("clientConfig"))
        uid = str(uuid.UUID(int=self.store.rng.getrandbits(128), version=4))
        try:
            answer = await self.caller.post(
                url=target.url, service=target.service, ca_bundle=target.ca_bundle,
                timeout=TIMEOUT,
                body={"kind": "ConversionReview",
                      "apiVersion": f"apiextensions.k8s.io/{version}",
                      "request": {"uid": uid, "desiredAPIVersion": desired,
                                  "objects": objects}})
        except CallFailed as exc:
            raise errors.internal(f"conversion webhook for {gvk} failed: {exc}") from exc
        response = answer.get("response")
        if not isinstance(response, dict):
            raise errors.internal(f"conversion webhook for {gvk} failed: no response provided")
        if response.get("uid") != uid:
            raise errors.internal(f"conversion webhook for {gvk} failed: expected "
                                  f'response.uid="{uid}", got "{response.get("uid", "")}"')
        result = response.get("result") or {}
        if result.get("status") != "Success":
            raise errors.internal(f"conversion webhook for {gvk} returned failure: "
                                  f"{result.get('message', '')}")
        converted = response.get("convertedObjects")
        if not isinstance(converted, list) or len(converted) != len(objects):
            got = len(converted) if isinstance(converted, list) else 0
            raise errors.internal(f"conversion webhook for {gvk} returned {got} objects, "
                                  f"expected {len(objects)}")
        for new in converted:
            if not isinstance(new, dict) or new.get("apiVersion") != desired:
                raise errors.internal(
                    f"conversion webhook for {gvk} returned invalid converted object: expected "
                    f'apiVersion "{desired}", got "{(new or {}).get("apiVersion", "")}"')
            if new.get("kind") != rt.kind:
                raise errors.internal(
                    f"conversion webhook for {gvk} returned invalid converted object: expected "
                    f'kind "{rt.kind}", got "{new.get("kind", "")}"')
        return converted


def _restore_meta(original: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """kube's restoreObjectMeta: the original metadata, with the converted labels and
    annotations."""
    out = copy_obj(new)
    meta = dict(original.get("metadata") or {})
    new_meta = new.get("metadata") or {}
    for key in ("labels", "annotations"):
        if new_meta.get(key):
            meta[key] = new_meta[key]
        else:
            meta.pop(key, None)
    out["metadata"] = meta
    return out


__all__ = ["Conversion"]
