"""Writer: the one write pipeline (create, update, status, delete) shared by HTTP and in-process.

Order on create: typed decoding of built-in kinds (unless the HTTP handler did it) →
type/namespace checks → built-in defaults → CR prune/default/validate →
admission → name/metadata validation → server fields → commit. Update restores server-owned
fields, enforces optimistic concurrency and status isolation, bumps generation per
`objectmeta.spec_changed`, validates CRD updates with kube's update rules (immutable scope
and group, stored versions kept), and turns "deletionTimestamp set and no finalizers left"
into the removal itself (a single DELETED event). Server-side apply results keep their
managedFields, also through the status subresource. Invariant: nothing is committed unless
every check passed; dry runs never commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from asyncop.apiserver import builtin
from asyncop.apiserver.builtin.canonical import canonicalize
from asyncop.apiserver.builtin.decode import decode_canonical
from asyncop.apiserver.core import crds, errors, eventsv1
from asyncop.apiserver.core.objectmeta import (
    check_field_types,
    generate_name,
    restore_server_fields,
    spec_changed,
    validate_metadata,
    validate_name,
)
from asyncop.apiserver.core.registry import CRD_GR, NAMESPACE_GR, RETURNS_DELETED_OBJECT
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.merge import apply
from asyncop.apiserver.schema import cel as cel
from asyncop.apiserver.schema.checks import apply_defaults, prune, validate
from asyncop.apiserver.storage import crdstate
from asyncop.apiserver.storage.objects import copy_obj
from asyncop.clock import format_time

if TYPE_CHECKING:
    from asyncop.apiserver.storage.store import Store

POD_GR = ("", "pods")
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


_UUID_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_UUID_SET = (0x8000 << 48) | (4 << 76)


def uuid4_text(bits: int) -> str:
    """`str(uuid.UUID(int=bits, version=4))` (the RFC 4122 variant and version 4 bits set),
    without building the UUID object: a create makes one."""
    h = "%032x" % (bits & _UUID_CLEAR | _UUID_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass(slots=True)
class WriteContext:
    """Per-request write options and the warnings collected on the way."""

    dry_run: bool = False
    field_validation: str = "Warn"
    #: the field manager recorded in managedFields (None: in-process writes, apply);
    #: creates record it only when the client named it (`?fieldManager=`), updates also when
    #: the object already has managedFields (so ownership moves away from appliers).
    manager: str | None = None
    explicit_manager: bool = False
    #: the body is the result of a server-side apply: its managedFields are authoritative
    #: (also on the status subresource, whose other metadata is reset from the stored object)
    applied: bool = False
    warnings: list[str] = field(default_factory=list)
    #: stop where admission webhooks come in: return the object mutating webhooks see
    #: (defaulted, pruned, built-in admission done; not yet validated, named or committed)
    until_admission: bool = False
    #: the uid a create gives the object (the one validating webhooks were shown)
    uid: str | None = None
    #: the user the request was authenticated as (RBAC mode), shown to admission webhooks
    user: str | None = None
    #: the body was already decoded as kube decodes it (the HTTP handlers decode the body
    #: they read, with its raw text); False: the Writer decodes it first (in-process writes)
    decoded: bool = False
    #: the decoded body, when decoding found every Quantity in it canonical already: a
    #: create of that very object (not a copy, a converted or webhook-mutated one) skips
    #: the canonical walk unless in-process admission hooks ran on it
    canonical_body: Any = None


@dataclass(frozen=True, slots=True)
class DeleteResult:
    obj: dict[str, Any]
    removed: bool


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


class Writer:
    def __init__(self, store: Store) -> None:
        self.store = store

    def bootstrap(self) -> None:
        ns_type = self.store.registry.storage_type(NAMESPACE_GR)
        assert ns_type is not None
        for name in BOOTSTRAP_NAMESPACES:
            self.create(ns_type, {"metadata": {"name": name}})

    # --- create ------------------------------------------------------------------------------

    def create(self, rt: ResourceType, obj: dict[str, Any], *, namespace: str | None = None,
               ctx: WriteContext | None = None) -> dict[str, Any]:
        ctx = ctx or WriteContext()
        obj = self.decode(rt, obj, ctx)
        obj, meta, namespace = self._body(rt, obj, namespace)
        rv = meta.pop("resourceVersion", None)
        if _parses_nonzero(rv):
            # kube: a version that parses and is not 0 is refused; any other value is cleared
            raise errors.bad_request("resourceVersion should not be set on objects to be created")
        if not meta.get("name") and not meta.get("generateName"):
            raise errors.invalid(rt, "", [errors.cause(
                "metadata.name", "FieldValueRequired",
                "Required value: name or generateName is required")])
        if rt.namespaced:
            self._check_namespace_open(rt, namespace, meta.get("name") or "")
        for key in ("uid", "creationTimestamp", "deletionTimestamp",
                    "deletionGracePeriodSeconds", "generation"):
            meta.pop(key, None)
        if rt.has_status and rt.gr != NAMESPACE_GR:
            obj.pop("status", None)
        hooks = self.store.admission(rt.gr)
        builtin.defaults(rt, obj, None, recall=not hooks)  # (a hook may change it in place)
        if rt.is_custom:
            self.custom_pipeline(rt, obj, ctx)
        for hook in hooks:
            hook("CREATE", obj, None)
        if ctx.until_admission:
            return obj
        storage_rt = self.store.registry.storage_type(rt.gr) or rt
        obj["apiVersion"] = storage_rt.api_version
        meta["uid"] = ctx.uid or uuid4_text(self.store.rng.getrandbits(128))
        meta["creationTimestamp"] = self.store.now()
        if self.store.registry.tracks_generation(rt):
            meta["generation"] = 1
        generated = not meta.get("name")
        for _attempt in range(8 if generated else 1):
            if generated:
                meta["name"] = generate_name(meta["generateName"], self.store.rng)
            if self.store.raw_get(rt.gr, namespace, meta["name"]) is None:
                break
        else:
            existing = self.store.raw_get(rt.gr, namespace, meta["name"])
            deleting = bool(existing and existing["metadata"].get("deletionTimestamp"))
            err = errors.already_exists(rt, meta["name"], deleting=deleting)
            if generated:
                err.status["message"] += (", the server was not able to generate a unique name "
                                          "for the object")
                err.status.setdefault("details", {})["retryAfterSeconds"] = 1
            raise err
        causes = validate_name(rt, meta["name"]) + validate_metadata(meta)
        causes += builtin.validate(rt, obj, None)
        if rt.gr == CRD_GR:
            causes += crds.validate_crd(obj)
        if causes:
            raise errors.invalid(rt, meta["name"], causes)
        canonicalize(rt, obj, self.store.minor,  # quantities as kube stores them
                     decoded_canonical=obj is ctx.canonical_body and not hooks)
        if ctx.manager and ctx.explicit_manager:
            apply.record_update(None, obj, manager=ctx.manager, now=self.store.now(),
                                     schema=rt.schema if rt.is_custom else None)
        if ctx.dry_run:
            return obj
        stored = self.store.commit("ADDED", rt.gr, obj, None)
        if rt.gr == CRD_GR:
            stored = crdstate.established(self.store, stored)
        return stored

    def decode(self, rt: ResourceType, obj: Any, ctx: WriteContext) -> Any:
        """kube's first step: a built-in kind's body decoded into its Go type
        (`builtin.decode`: unknown fields dropped, type errors a 400), once per request."""
        if ctx.decoded or rt.is_custom:
            return obj
        ctx.decoded = True
        obj, canonical = decode_canonical(rt, obj, minor=self.store.minor,
                                          validation=ctx.field_validation,
                                          warnings=ctx.warnings)
        ctx.canonical_body = obj if canonical else None
        return obj

    def _body(self, rt: ResourceType, obj: Any, namespace: str | None,
              ) -> tuple[dict[str, Any], dict[str, Any], str]:
        """The checks every create and update body passes first: a JSON object of this type
        (events.k8s.io/v1 Events converted to core/v1 storage), its metadata, its namespace."""
        if not isinstance(obj, dict):
            raise errors.bad_request("the request body is not a JSON object")
        self.check_type(rt, obj)
        if eventsv1.is_events_v1(rt):
            obj = eventsv1.to_core(obj)
        meta = _meta(obj)
        check_field_types(rt, meta)
        return obj, meta, self._namespace_for(rt, meta, namespace)

    def check_type(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if api_version and api_version != rt.api_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({rt.api_version})")
        if kind and kind != rt.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind

    def _namespace_for(self, rt: ResourceType, meta: dict[str, Any],
                       namespace: str | None) -> str:
        if not rt.namespaced:
            meta.pop("namespace", None)
            return ""
        body_ns = meta.get("namespace")
        if namespace and body_ns and body_ns != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the "
                                     "namespace sent on the request")
        ns = namespace or body_ns or "default"
        meta["namespace"] = ns
        return str(ns)

    def _check_namespace_open(self, rt: ResourceType, namespace: str, name: str) -> None:
        ns_obj = self.store.raw_get(NAMESPACE_GR, "", namespace)
        if ns_obj is None:
            raise errors.namespace_not_found(namespace)
        if ns_obj["metadata"].get("deletionTimestamp"):
            raise errors.forbidden(
                rt, name, f"unable to create new content in namespace {namespace} because it "
                          "is being terminated",
                causes=[errors.cause("metadata.namespace", "NamespaceTerminating",
                                     f"namespace {namespace} is being terminated")])

    def custom_pipeline(self, rt: ResourceType, obj: dict[str, Any], ctx: WriteContext,
                         old: dict[str, Any] | None = None) -> None:
        schema = rt.schema
        if not schema:
            return
        unknown = prune(obj, schema)
        if unknown and ctx.field_validation == "Strict":
            raise errors.bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in unknown))
        if ctx.field_validation == "Warn":
            ctx.warnings.extend(f'unknown field "{p}"' for p in unknown)
        apply_defaults(obj, schema)
        if ctx.until_admission:
            return  # validation follows the mutating webhooks
        causes = validate(obj, schema)
        if not causes and rt.has_cel_rules:  # rules see only values of the right shape
            causes = cel.validate_rules(obj, schema, old)
        if causes:
            raise errors.invalid(rt, str(obj["metadata"].get("name", "")), causes)

    # --- update ------------------------------------------------------------------------------

    def update(self, rt: ResourceType, obj: dict[str, Any], *, namespace: str | None,
               name: str, subresource: str = "", ctx: WriteContext | None = None,
               ) -> dict[str, Any]:
        ctx = ctx or WriteContext()
        obj = self.decode(rt, obj, ctx)
        obj, meta, ns = self._body(rt, obj, namespace)
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(
                "the name of the object (" + str(meta["name"]) + ") does not match the name on "
                "the URL (" + name + ")")
        meta["name"] = name
        old = self.store.raw_get(rt.gr, ns, name)
        if old is None:
            raise errors.not_found(rt, name)
        requested_rv = meta.get("resourceVersion")
        if requested_rv:
            if requested_rv != old["metadata"]["resourceVersion"]:
                raise errors.stale(rt, name)
        elif rt.is_custom:
            raise errors.invalid(rt, name, [errors.cause(
                "metadata.resourceVersion", "FieldValueInvalid",
                "Invalid value: 0x0: must be specified for an update")])
        old_meta = old["metadata"]
        hooks = self.store.admission(rt.gr)
        if subresource == "status":
            new = {**old, "metadata": dict(old_meta)}
            if ctx.applied:
                if meta.get("managedFields"):
                    new["metadata"]["managedFields"] = meta["managedFields"]
                else:
                    new["metadata"].pop("managedFields", None)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            obj = new
            meta = obj["metadata"]
            if rt.is_custom:
                obj = copy_obj(obj)  # the schema pipeline mutates nested values
                meta = obj["metadata"]
                self.custom_pipeline(rt, obj, ctx, old)
        else:
            uid = meta.get("uid")
            if uid and uid != old_meta.get("uid"):
                raise errors.invalid(rt, name, [errors.cause(
                    "metadata.uid", "FieldValueInvalid",
                    f"Invalid value: {errors.quote(uid)}: field is immutable")])
            restore_server_fields(meta, old_meta)
            if rt.has_status:
                if "status" in old:
                    obj["status"] = old["status"]
                else:
                    obj.pop("status", None)
            builtin.defaults(rt, obj, old, recall=not hooks)  # (a hook may change it in place)
            if rt.is_custom:
                self.custom_pipeline(rt, obj, ctx, old)
        obj["apiVersion"] = old["apiVersion"]
        if old_meta.get("deletionTimestamp"):
            added = set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
            if added:
                raise errors.invalid(rt, name, [errors.cause(
                    "metadata.finalizers", "FieldValueForbidden",
                    "Forbidden: no new finalizers can be added if the object is being deleted, "
                    "found new finalizers []string{" + ", ".join(
                        f'"{f}"' for f in sorted(added)) + "}")])
        for hook in hooks:
            hook("UPDATE", obj, old)
        if ctx.until_admission:
            obj["apiVersion"] = rt.api_version
            return obj
        causes = validate_metadata(meta)
        if subresource != "status":
            causes += builtin.validate(rt, obj, old)
        if rt.gr == CRD_GR:
            causes += crds.validate_crd_update(obj, old)
        if causes:
            raise errors.invalid(rt, name, causes)
        canonicalize(rt, obj, self.store.minor)  # before comparing with the stored object
        if "generation" in old_meta and subresource != "status" and spec_changed(rt, old, obj):
            meta["generation"] = int(old_meta["generation"]) + 1
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if ctx.manager and (ctx.explicit_manager or old_meta.get("managedFields")):
            apply.record_update(old, obj, manager=ctx.manager, now=self.store.now(),
                                     subresource=subresource,
                                     schema=rt.schema if rt.is_custom else None)
        if ctx.dry_run:
            return obj
        if self._finished(rt, obj):
            self._remove(rt, obj, old)
            return obj
        if obj == old:
            return old
        stored = self.store.commit("MODIFIED", rt.gr, obj, old)
        if rt.gr == CRD_GR and subresource != "status":
            stored = crdstate.established(self.store, stored)
        return stored

    def _finished(self, rt: ResourceType, obj: dict[str, Any]) -> bool:
        meta = obj["metadata"]
        if not meta.get("deletionTimestamp") or meta.get("finalizers"):
            return False
        if rt.gr == NAMESPACE_GR:
            return not (obj.get("spec") or {}).get("finalizers")
        return True

    def _remove(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any]) -> None:
        self.store.commit("DELETED", rt.gr, obj, old)
        if rt.gr == CRD_GR:
            crdstate.removed(self.store, obj)
        elif rt.is_custom:
            crdstate.custom_object_removed(self.store, self, rt)

    def finalize_namespace(self, name: str, finalizers: list[str]) -> dict[str, Any] | None:
        old = self.store.raw_get(NAMESPACE_GR, "", name)
        ns_rt = self.store.registry.storage_type(NAMESPACE_GR)
        assert ns_rt is not None
        if old is None:
            raise errors.not_found(ns_rt, name)
        new = {**old, "metadata": dict(old["metadata"]),
               "spec": {**(old.get("spec") or {}), "finalizers": list(finalizers)}}
        if self._finished(ns_rt, new):
            self._remove(ns_rt, new, old)
            return None
        if new == old:
            return old
        return self.store.commit("MODIFIED", NAMESPACE_GR, new, old)

    # --- delete ------------------------------------------------------------------------------

    def delete(self, rt: ResourceType, namespace: str | None, name: str, *,
               propagation_policy: str | None = None,
               preconditions: dict[str, Any] | None = None,
               grace_period_seconds: int | None = None,
               ctx: WriteContext | None = None) -> DeleteResult:
        """Delete (or mark deleting). Bound pods terminate gracefully (docs/apiserver.md,
        "Deleting pods"): the first DELETE sets deletionTimestamp = now + grace and the kubelet
        (simulator) confirms with a DELETE of grace 0; unbound pods and grace 0 go at once."""
        ctx = ctx or WriteContext()
        ns = (namespace or "") if rt.namespaced else ""
        old = self.store.raw_get(rt.gr, ns, name)
        if old is None:
            raise errors.not_found(rt, name)
        old_meta = old["metadata"]
        if preconditions:
            uid = preconditions.get("uid")
            if uid and uid != old_meta.get("uid"):
                raise errors.conflict(
                    rt, name, f"the UID in the precondition ({uid}) does not match the UID in "
                    f"record ({old_meta.get('uid')}). The object might have been deleted and "
                    "then recreated", kind_style=True)
            rv = preconditions.get("resourceVersion")
            if rv and rv != old_meta.get("resourceVersion"):
                raise errors.conflict(
                    rt, name, f"the ResourceVersion in the precondition ({rv}) does not match "
                    f"the ResourceVersion in record ({old_meta.get('resourceVersion')}). The "
                    "object might have been modified", kind_style=True)
        if propagation_policy not in (None, "", "Background", "Foreground", "Orphan"):
            raise errors.invalid_options("DeleteOptions", [errors.cause(
                "propagationPolicy", "FieldValueNotSupported",
                f'Unsupported value: "{propagation_policy}": supported values: "Foreground", '
                '"Background", "Orphan", "nil"')])
        if rt.gr == NAMESPACE_GR and name in IMMORTAL_NAMESPACES:
            raise errors.forbidden(rt, name, "this namespace may not be deleted")
        finalizers = list(old_meta.get("finalizers") or ())
        extra = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(
            propagation_policy or "")
        if extra and extra not in finalizers:
            finalizers.append(extra)
        if rt.gr == CRD_GR and crdstate.CLEANUP_FINALIZER not in finalizers and \
                self.store.count(crdstate.served_gr(old)) > 0:
            finalizers.append(crdstate.CLEANUP_FINALIZER)
        new = {**old, "metadata": {**old_meta, "finalizers": finalizers}}
        if not finalizers:
            new["metadata"].pop("finalizers", None)
        first = not old_meta.get("deletionTimestamp")
        if first:
            new["metadata"]["deletionTimestamp"] = self.store.now()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            if old_meta.get("generation"):
                new["metadata"]["generation"] = int(old_meta["generation"]) + 1
        if rt.gr == NAMESPACE_GR:
            new["status"] = {**(old.get("status") or {}), "phase": "Terminating"}
        grace = _pod_grace(rt, old, grace_period_seconds)
        if grace > 0:
            current = old_meta.get("deletionGracePeriodSeconds") if not first else None
            if current is None or grace < int(current):
                deadline = self.store.clock.now() + timedelta(seconds=grace)
                new["metadata"]["deletionTimestamp"] = format_time(deadline)
                new["metadata"]["deletionGracePeriodSeconds"] = grace
            else:
                new["metadata"]["deletionTimestamp"] = old_meta["deletionTimestamp"]
                new["metadata"]["deletionGracePeriodSeconds"] = current
            if ctx.dry_run or new == old:
                return DeleteResult(new if ctx.dry_run else old, False)
            return DeleteResult(self.store.commit("MODIFIED", rt.gr, new, old), False)
        if ctx.dry_run:
            return DeleteResult(new, not self._blocked(rt, new))
        if self._blocked(rt, new):
            if new == old:
                return DeleteResult(old, False)
            stored = self.store.commit("MODIFIED", rt.gr, new, old)
            if rt.gr == CRD_GR and first:
                stored = crdstate.terminating(self.store, self, stored)
            return DeleteResult(stored, self.store.raw_get(rt.gr, ns, name) is None)
        removed = {**old, "metadata": dict(old_meta)}
        self._remove(rt, removed, old)
        return DeleteResult(removed, True)

    def _blocked(self, rt: ResourceType, obj: dict[str, Any]) -> bool:
        if obj["metadata"].get("finalizers"):
            return True
        return rt.gr == NAMESPACE_GR and bool((obj.get("spec") or {}).get("finalizers"))

    @staticmethod
    def returns_object(rt: ResourceType) -> bool:
        return rt.gr in RETURNS_DELETED_OBJECT


def _pod_grace(rt: ResourceType, obj: dict[str, Any], requested: int | None) -> int:
    """Seconds of graceful termination for a DELETE (0: delete at once)."""
    if rt.gr != POD_GR:
        return 0
    spec = obj.get("spec") or {}
    if not spec.get("nodeName"):
        return 0  # never scheduled: nothing to stop
    phase = (obj.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return 0
    if requested is None:
        requested = int(spec.get("terminationGracePeriodSeconds", 30) or 0)
    return max(0, int(requested))


__all__ = ["DeleteResult", "WriteContext", "Writer"]


def _parses_nonzero(rv: Any) -> bool:
    """Whether a resourceVersion given on create is one kube refuses (a non-zero uint64)."""
    text = rv if isinstance(rv, str) else ""
    return text.isascii() and text.isdigit() and int(text) > 0

