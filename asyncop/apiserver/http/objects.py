"""HTTP handlers for the object verbs: get, list, create, update, patch, delete,
deletecollection, and the status/scale/finalize subresources.

Each handler parses the request into the store's terms and calls the shared `Writer`; the
response is the stored object seen through the requested version (or a Table). Invariant:
handlers never touch stored dicts except to serialize them.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from asyncop.apiserver.builtin.decode import decode_canonical
from asyncop.apiserver.core import errors, paths
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.http import listing, patching, sharding
from asyncop.apiserver.http.rbac import user_of
from asyncop.apiserver.http.selectors import matcher, parse_field_selector, parse_label_selector
from asyncop.apiserver.http.wire import (
    TABLE_CT,
    YAML_TYPES,
    Target,
    check_field_manager,
    decode_body,
    decode_yaml_checked,
    dry_run,
    field_manager,
    field_validation,
    json_response,
    partial_metadata,
    wants_metadata,
    wants_table,
)
from asyncop.apiserver.storage.objects import copy_obj
from asyncop.apiserver.storage.store import ScopeMismatch, Store
from asyncop.apiserver.storage.views import Views
from asyncop.apiserver.storage.writer import WriteContext, Writer
from asyncop.apiserver.tables.table import to_table
from asyncop.apiserver.webhooks.admission import WebhookAdmission
from asyncop.apiserver.webhooks.caller import Caller
from asyncop.apiserver.webhooks.conversion import Conversion
from asyncop.apiserver.webhooks.pipeline import AdmittedWriter


class ObjectRoutes:
    def __init__(self, store: Store, caller: Caller) -> None:
        self.store = store
        self._views = Views()
        self.admission = WebhookAdmission(store, caller)
        self.admitted = AdmittedWriter(store, self.admission, self._views)
        self.conversion = Conversion(store, caller)

    @property
    def writer(self) -> Writer:
        return self.store.writer

    def view(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored object as served through `rt` (see `views`); not for webhook-converted
        types, which `served` handles."""
        return self._views.view(rt, obj)

    async def served(self, rt: ResourceType, objs: list[dict[str, Any]],
                     ) -> list[dict[str, Any]]:
        """Stored objects as served through `rt`, through the CRD's conversion webhook when
        it has one (one review for all of them)."""
        hook = self.conversion.webhook(rt)
        if hook is not None and objs:
            objs = await self.conversion.convert(rt, hook, objs, rt.api_version)
        return [self._views.view(rt, o) for o in objs]

    async def served_one(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """One stored object as served (`served` without the lists, for every response)."""
        hook = self.conversion.webhook(rt)
        if hook is not None:
            (obj,) = await self.conversion.convert(rt, hook, [obj], rt.api_version)
        return self._views.view(rt, obj)

    async def _to_storage(self, rt: ResourceType, body: Any, ctx: WriteContext, *,
                          old: dict[str, Any] | None = None) -> tuple[ResourceType, Any]:
        """A write body in `rt`'s version, as the storage version when the CRD converts by
        webhook: pruned, defaulted and validated in the requested version first."""
        hook = self.conversion.webhook(rt)
        if hook is None or not isinstance(body, dict):
            return rt, body
        self.writer.check_type(rt, body)
        body.setdefault("metadata", {})
        self.writer.custom_pipeline(rt, body, ctx, old)
        storage_rt = self.store.registry.storage_type(rt.gr) or rt
        converted = await self.conversion.convert(rt, hook, [body], storage_rt.api_version)
        return storage_rt, converted[0]

    def _ctx(self, request: web.Request, *, apply: bool = False) -> WriteContext:
        manager = None if apply else field_manager(request)
        return WriteContext(dry_run=dry_run(request), field_validation=field_validation(request),
                            user=user_of(request),
                            manager=manager, explicit_manager="fieldManager" in request.query,
                            applied=apply)

    async def _respond(self, request: web.Request, rt: ResourceType, obj: dict[str, Any], *,
                       status: int = 200, ctx: WriteContext | None = None) -> web.Response:
        table_wanted = wants_table(request)
        if not table_wanted and wants_metadata(request):
            return json_response(partial_metadata(obj), status=status)
        served = await self.served_one(rt, obj)
        if table_wanted:
            table = to_table(rt, [served],
                                        include_object=request.query.get("includeObject",
                                                                         "Metadata"),
                                        now=self.store.clock.now())
            table.setdefault("metadata", {})["resourceVersion"] = \
                obj["metadata"].get("resourceVersion", "")
            return json_response(table, status=status, content_type=TABLE_CT)
        return json_response(served, status=status, warnings=ctx.warnings if ctx else None)

    # --- reads ---------------------------------------------------------------------------------

    async def get(self, request: web.Request, t: Target) -> web.Response:
        assert t.name is not None
        listing.parse_rv(request.query.get("resourceVersion"))  # as LIST: 400 if not a number
        obj = self.store.raw_get(t.rt.gr, t.namespace or "", t.name)
        if obj is None:
            raise errors.not_found(t.rt, t.name)
        if t.subresource == "scale":
            return json_response(self._scale(t.rt, obj))
        return await self._respond(request, t.rt, obj)

    def pod_log(self, request: web.Request, t: Target) -> web.Response:
        """GET pods/NAME/log: simulated pods never run anything, so their log is empty."""
        assert t.name is not None
        pod = self.store.raw_get(t.rt.gr, t.namespace or "", t.name)
        if pod is None:
            raise errors.not_found(t.rt, t.name)
        spec = pod.get("spec") or {}
        names = [c.get("name") for c in (spec.get("containers") or [])
                 + (spec.get("initContainers") or []) if isinstance(c, dict)]
        container = request.query.get("container")
        if container is None and len(spec.get("containers") or []) > 1:
            raise errors.bad_request(
                f"a container name must be specified for pod {t.name}, choose one of: "
                f"[{' '.join(str(n) for n in names)}]")
        if container is not None and container not in names:
            raise errors.bad_request(f"container {container} is not valid for pod {t.name}")
        return web.Response(body=b"", content_type="text/plain")

    async def list(self, request: web.Request, t: Target) -> web.Response:
        rt = t.rt
        q = request.query
        labels = parse_label_selector(q.get("labelSelector"))
        fields = parse_field_selector(q.get("fieldSelector"), rt)
        shard = sharding.shard_selector(q, enabled=sharding.GATE in self.store.features)
        match = sharding.with_shard(matcher(labels, fields), shard)
        rv_param = q.get("resourceVersion")
        rvm = q.get("resourceVersionMatch") or ""
        token = q.get("continue") or ""
        listing.check_rvm(rvm, rv_param, token)
        current = self.store.resource_version
        requested = listing.parse_rv(rv_param)
        if requested is not None and requested > current:
            raise errors.too_large_rv(requested, current)
        limit = listing.parse_limit(q.get("limit"))
        scope = (rt.gr, t.namespace if rt.namespaced else None, q.get("labelSelector") or "",
                 q.get("fieldSelector") or "", repr(shard))
        if token:
            list_rv, snap_id, offset = listing.decode_token(token)
            try:
                items = self.store.snapshot(snap_id, scope=scope)
            except ScopeMismatch:
                raise errors.bad_request(
                    "continue key is not valid: it was issued for a list of another resource, "
                    "namespace or selector") from None
            if items is None:
                raise errors.expired(
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter, or use "
                    "the continue token in this response to retrieve the remainder of the "
                    "results. Continuing with the provided token results in an inconsistent "
                    "list - objects that were created, modified, or deleted between the time "
                    "the first chunk was returned and now may show up in the list.")
        else:
            offset = 0
            list_rv = current
            if rvm == "Exact" and requested is not None and requested != current:
                state = self.store.state_at(rt.gr, requested)
                if state is None:
                    raise errors.expired(f"too old resource version: {requested} "
                                         f"({self.store.hub.floor + 1})")
                items = state
                list_rv = requested
            else:
                items = self.store.raw_items(rt.gr)
            if t.namespace is not None and rt.namespaced:
                ns = t.namespace
                items = [o for o in items if o["metadata"].get("namespace") == ns]
            if match is not None:
                items = [o for o in items if match(o)]
            snap_id = ""
        meta: dict[str, Any] = {"resourceVersion": str(list_rv),
                                **sharding.shard_info(q, shard)}
        # one page (and the next item) only: slicing the rest on every page made a paginated
        # list of N objects cost O(N^2 / limit)
        page = items[offset:offset + limit + 1] if limit else items[offset:]
        if limit and len(page) > limit:
            if not snap_id:
                snap_id = self.store.save_snapshot(items, scope=scope)
            meta["continue"] = listing.encode_token(list_rv, snap_id, offset + limit,
                                             page[limit]["metadata"])
            meta["remainingItemCount"] = len(items) - offset - limit
            page = page[:limit]
        if wants_table(request):
            table = to_table(rt, await self.served(rt, page),
                                        include_object=q.get("includeObject", "Metadata"),
                                        now=self.store.clock.now())
            table["metadata"] = {**(table.get("metadata") or {}), **meta}
            return json_response(table, content_type=TABLE_CT)
        if wants_metadata(request):
            return json_response({"kind": "PartialObjectMetadataList",
                                  "apiVersion": "meta.k8s.io/v1", "metadata": meta,
                                  "items": [partial_metadata(o) for o in page]})
        body = {"kind": rt.list_kind_name, "apiVersion": rt.api_version, "metadata": meta,
                "items": await self.served(rt, page)}
        return json_response(body)

    # --- writes --------------------------------------------------------------------------------

    async def _decoded_body(self, request: web.Request, rt: ResourceType,
                            ctx: WriteContext) -> Any:
        """The request body, a built-in kind's decoded as kube decodes it (its raw text
        shows duplicate keys and number literals; docs/apiserver.md, "Decoding built-in
        kinds"); the Writer then skips its own decode."""
        raw = await request.read()
        content_type = request.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        body, yaml_duplicates = decode_yaml_checked(raw, content_type)
        if rt.is_custom:
            return body
        is_yaml = content_type in YAML_TYPES
        json_raw = None if is_yaml or content_type.endswith("protobuf") else raw
        body, canonical = decode_canonical(rt, body, minor=self.store.minor,
                                           validation=ctx.field_validation,
                                           warnings=ctx.warnings, raw=json_raw,
                                           yaml_duplicates=yaml_duplicates)
        ctx.decoded = True
        ctx.canonical_body = body if canonical else None
        return body

    async def create(self, request: web.Request, t: Target) -> web.Response:
        if t.rt.namespaced and t.namespace is None:
            raise errors.method_not_allowed()
        ctx = self._ctx(request)
        body = await self._decoded_body(request, t.rt, ctx)
        rt, body = await self._to_storage(t.rt, body, ctx)
        obj = await self.admitted.create(rt, body, namespace=t.namespace, ctx=ctx)
        return await self._respond(request, t.rt, obj, status=201, ctx=ctx)

    async def update(self, request: web.Request, t: Target) -> web.Response:
        assert t.name is not None
        ctx = self._ctx(request)
        if t.subresource in ("finalize", "scale"):
            raw = await request.read()
            body = decode_body(raw, request.headers.get("Content-Type", "").split(";", 1)[0]
                               .strip().lower())
        else:
            body = await self._decoded_body(request, t.rt, ctx)
        if t.subresource == "finalize":
            if t.rt.gr != ("", "namespaces") or not isinstance(body, dict):
                raise errors.path_not_found()
            finalizers = list((body.get("spec") or {}).get("finalizers") or [])
            if ctx.dry_run:
                return json_response(body)
            result = self.writer.finalize_namespace(t.name, finalizers)
            return json_response(result if result is not None else body)
        if t.subresource == "scale":
            return self._write_scale(t, body, ctx)
        rt = t.rt
        if self.conversion.webhook(rt) is not None:
            current = self.store.raw_get(rt.gr, t.namespace or "", t.name)
            if current is None:
                raise errors.not_found(rt, t.name)
            old = await self.served_one(rt, current)
            rt, body = await self._to_storage(rt, body, ctx, old=old)
        obj = await self.admitted.update(rt, body, namespace=t.namespace, name=t.name,
                                         subresource=t.subresource, ctx=ctx)
        return await self._respond(request, t.rt, obj, ctx=ctx)

    async def patch(self, request: web.Request, t: Target) -> web.Response:
        assert t.name is not None
        rt = t.rt
        content_type = request.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        q = request.query
        is_apply = content_type == "application/apply-patch+yaml"
        manager = q.get("fieldManager") or ""
        force = q.get("force")
        if is_apply and not manager:
            raise errors.invalid_options("PatchOptions", [errors.cause(
                "fieldManager", "FieldValueRequired", "Required value: is required for apply "
                "patch")])
        if force is not None and not is_apply:
            raise errors.invalid_options("PatchOptions", [errors.cause(
                "force", "FieldValueForbidden", "Forbidden: may not be specified for non-apply "
                "patch")])
        if is_apply:
            check_field_manager(manager, "PatchOptions")
        accepted = ("application/json-patch+json, application/merge-patch+json, "
                    "application/apply-patch+yaml")
        if content_type == "application/strategic-merge-patch+json" and rt.is_custom:
            raise errors.unsupported_media_type(accepted)
        if content_type not in ("application/json-patch+json", "application/merge-patch+json",
                                "application/strategic-merge-patch+json",
                                "application/apply-patch+yaml"):
            raise errors.unsupported_media_type(
                accepted + ", application/strategic-merge-patch+json")
        raw = await request.read()
        patch, yaml_duplicates = decode_yaml_checked(raw, content_type, allow_yaml=is_apply)
        ctx = self._ctx(request, apply=is_apply)
        ns = t.namespace or ""
        old = self.store.raw_get(rt.gr, ns if rt.namespaced else "", t.name)
        if old is None and (not is_apply or t.subresource):
            raise errors.not_found(rt, t.name)
        if t.subresource == "scale":
            if old is None:
                raise errors.not_found(rt, t.name)
            scale = self._scale(rt, old)
            patched_scale = patching.apply_patch(rt, scale, patch, content_type, "Scale")
            return self._write_scale(t, patched_scale, ctx)
        if is_apply and not isinstance(patch, dict):
            raise errors.bad_request("error decoding YAML: the apply configuration must be "
                                     "an object")
        if is_apply:
            patching.check_apply_type(rt, patch)
            patching.check_apply(rt, patch, minor=self.store.minor)
        builtin = not rt.is_custom
        patch_errors = patching.patch_strict_errors(raw, content_type, ctx.field_validation) \
            if builtin and not is_apply else []
        if is_apply and old is None:
            merged = patching.server_side_apply(rt, None, patch, manager=manager, force=force,
                                                subresource=t.subresource, now=self.store.now())
            patching.apply_duplicates(yaml_duplicates, ctx.field_validation, ctx.warnings)
            if rt.namespaced:
                merged.setdefault("metadata", {}).setdefault("namespace", ns)
            merged.get("metadata", {}).pop("resourceVersion", None)
            storage_rt, merged = await self._to_storage(rt, merged, ctx)
            obj = await self.admitted.create(storage_rt, merged, namespace=t.namespace, ctx=ctx)
            return await self._respond(request, rt, obj, status=201, ctx=ctx)

        def patched(current: dict[str, Any]) -> dict[str, Any]:
            if is_apply:
                applied = patching.server_side_apply(rt, current, patch, manager=manager,
                                                     force=force, subresource=t.subresource,
                                                     now=self.store.now())
                patching.apply_duplicates(yaml_duplicates, ctx.field_validation, ctx.warnings)
                return applied
            result = patching.apply_patch(rt, copy_obj(current), patch, content_type, rt.kind)
            if not builtin:
                return result
            ctx.decoded = True  # kube decodes the patched object once, here
            return patching.decode_result(rt, result, patch, content_type,
                                          minor=self.store.minor,
                                          validation=ctx.field_validation,
                                          warnings=ctx.warnings, patch_errors=patch_errors)

        if self.conversion.webhook(rt) is not None:
            assert old is not None
            current = await self.served_one(rt, old)
            storage_rt, result = await self._to_storage(rt, patched(current), ctx, old=current)
            obj = await self.admitted.update(storage_rt, result, namespace=t.namespace,
                                             name=t.name, subresource=t.subresource, ctx=ctx)
        else:
            obj = await self.admitted.update(rt, patch=patched, namespace=t.namespace,
                                             name=t.name, subresource=t.subresource, ctx=ctx)
        return await self._respond(request, rt, obj, ctx=ctx)

    # --- scale -----------------------------------------------------------------------------------

    def _scale(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        if rt.scale is None:
            raise errors.path_not_found()
        meta = obj["metadata"]
        spec_replicas = paths.get_path(obj, rt.scale.spec_replicas_path)
        status_replicas = paths.get_path(obj, rt.scale.status_replicas_path)
        status: dict[str, Any] = {"replicas": int(status_replicas or 0)}
        selector: Any = None
        if rt.scale.label_selector_path and rt.is_custom:
            selector = paths.get_path(obj, rt.scale.label_selector_path)
        elif not rt.is_custom:
            selector = paths.selector_string((obj.get("spec") or {}).get("selector") or {})
        if selector:
            status["selector"] = selector
        scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                            "creationTimestamp") if k in meta}
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta,
                "spec": {"replicas": int(spec_replicas or 0)}, "status": status}

    def _write_scale(self, t: Target, body: Any, ctx: WriteContext) -> web.Response:
        assert t.name is not None
        rt = t.rt
        if rt.scale is None:
            raise errors.path_not_found()
        old = self.store.raw_get(rt.gr, t.namespace or "" if rt.namespaced else "", t.name)
        if old is None:
            raise errors.not_found(rt, t.name)
        if not isinstance(body, dict):
            raise errors.bad_request("the Scale body must be an object")
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.stale(rt, t.name)
        replicas = (body.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise errors.invalid(rt, t.name, [errors.cause(
                "spec.replicas", "FieldValueInvalid",
                f"Invalid value: {errors.quote(replicas)}: must be greater than or equal to 0")])
        new = copy_obj(self.view(rt, old))
        paths.set_path(new, rt.scale.spec_replicas_path, replicas)
        obj = self.writer.update(rt, new, namespace=t.namespace, name=t.name, ctx=ctx)
        return json_response(self._scale(rt, obj))

    # --- delete ----------------------------------------------------------------------------------

    async def delete(self, request: web.Request, t: Target) -> web.Response:
        assert t.name is not None
        options = await self._delete_options(request)
        ctx = WriteContext(dry_run=dry_run(request) or bool(options.get("dryRun")),
                           user=user_of(request))
        result = await self.admitted.delete(t.rt, t.namespace, t.name,
                                            propagation_policy=_policy(options),
                                            preconditions=options.get("preconditions"),
                                            grace_period_seconds=_grace(options), ctx=ctx)
        if result.removed and not self.writer.returns_object(t.rt):
            meta = result.obj["metadata"]
            details: dict[str, Any] = {"name": meta["name"]}  # kube's order: name, group,
            if t.rt.group:                                      # kind, uid
                details["group"] = t.rt.group
            details["kind"] = t.rt.plural
            details["uid"] = meta.get("uid", "")
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success", "details": details},
                                 warnings=ctx.warnings)
        served = await self.served_one(t.rt, result.obj)
        return json_response(served, warnings=ctx.warnings)

    async def delete_collection(self, request: web.Request, t: Target) -> web.Response:
        rt = t.rt
        if (rt.namespaced and t.namespace is None) or "deletecollection" not in rt.verbs:
            raise errors.method_not_allowed()
        options = await self._delete_options(request)
        labels = parse_label_selector(request.query.get("labelSelector"))
        fields = parse_field_selector(request.query.get("fieldSelector"), rt)
        match = matcher(labels, fields)
        items = self.store.raw_items(rt.gr, t.namespace if rt.namespaced else None)
        if match is not None:
            items = [o for o in items if match(o)]
        ctx = WriteContext(dry_run=dry_run(request) or bool(options.get("dryRun")),
                           user=user_of(request))
        for obj in items:
            meta = obj["metadata"]
            if self.store.raw_get(rt.gr, meta.get("namespace") or "", meta["name"]) is None:
                continue
            await self.admitted.delete(rt, meta.get("namespace"), meta["name"],
                                       propagation_policy=_policy(options),
                                       grace_period_seconds=_grace(options), ctx=ctx)
        return json_response({"kind": rt.list_kind_name, "apiVersion": rt.api_version,
                              "metadata": {"resourceVersion": str(self.store.resource_version)},
                              "items": await self.served(rt, items)})

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        if raw.strip():
            content_type = request.headers.get("Content-Type", "").split(";", 1)[0].strip()
            body = decode_body(raw, content_type.lower())
            if not isinstance(body, dict):
                raise errors.bad_request("DeleteOptions must be an object")
            return body
        q = request.query
        options: dict[str, Any] = {}
        if "propagationPolicy" in q:
            options["propagationPolicy"] = q["propagationPolicy"]
        if "gracePeriodSeconds" in q:
            options["gracePeriodSeconds"] = q["gracePeriodSeconds"]
        if "orphanDependents" in q:
            options["orphanDependents"] = q["orphanDependents"].lower() == "true"
        return options


def _grace(options: dict[str, Any]) -> int | None:
    value = options.get("gracePeriodSeconds")
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise errors.bad_request(f'invalid gracePeriodSeconds "{value}"') from None


def _policy(options: dict[str, Any]) -> str | None:
    policy = options.get("propagationPolicy")
    if policy:
        return str(policy)
    orphan = options.get("orphanDependents")
    if orphan is True:
        return "Orphan"
    return None
