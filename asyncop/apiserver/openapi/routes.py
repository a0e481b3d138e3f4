"""The operations kube-apiserver documents for a served resource, in a form neutral to v2/v3.

`builtin_routes` follows kube's endpoints installer (kube: registerResourceHandlers): per
kind the list (and, when namespaced, list across namespaces), create, deletecollection,
read, replace, patch, delete and the deprecated watch paths, the `status` and `scale`
subresources and `namespaces/finalize`, each only when the resource serves that verb.
`crd_routes` follows kube's CRD OpenAPI builder (kube: apiextensions' openapi/builder
generateBuilder): no watch paths, UpdateOptions on PATCH, JSON and YAML only.
`group_root` is the `GET /apis/<g>/<v>/` discovery operation.

Operation ids and tags are kube's (kube: GetOperationIDAndTags): verb, then the group
(`.k8s.io` trimmed, `core` for the legacy group) and version as identifiers, then
`Namespaced`, the kind and the subresource (`patchAppsV1NamespacedDeploymentScale`).
Every PATCH, PUT and POST carries `fieldValidation` (kubectl looks for it on PATCH).

Invariants: pure; references are definition names (the renderers add the prefix);
parameters common to every operation of a path are hoisted to the path, as kube-openapi's
builders do (keyed by name and location), and both lists are sorted by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.openapi import params as p
from asyncop.apiserver.openapi.params import Param
from asyncop.kubespec import Definitions

__all__ = [
    "APPLY_PATCH",
    "Operation",
    "PathItem",
    "Response",
    "builtin_routes",
    "crd_routes",
    "group_root",
]

STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
DELETE_OPTIONS = p.DELETE_OPTIONS
PATCH_BODY = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
WATCH_EVENT = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
RESOURCE_LIST = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"
SCALE = "io.k8s.api.autoscaling.v1.Scale"
_SCALE_GVK = ("autoscaling", "v1", "Scale")

JSON, YAML = "application/json", "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
_MEDIA = (JSON, YAML, PROTOBUF)
_STREAM = (*_MEDIA, f"{JSON};stream=watch", f"{PROTOBUF};stream=watch")
_CRD_MEDIA = (JSON, YAML)
APPLY_PATCH = "application/apply-patch+yaml"
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", APPLY_PATCH)
_CRD_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", APPLY_PATCH)
_ANY = ("*/*",)
#: kinds whose DELETE kube documents as answering the object, not a Status (their storage
#: has ReturnDeletedObject); kube's OpenAPI says Status for namespaces, secrets and nodes
#: even though those answer the object at run time
_DELETE_RETURNS_OBJECT = frozenset({
    ("", "pods"), ("", "podtemplates"), ("", "resourcequotas"),
    ("", "persistentvolumeclaims"), ("", "persistentvolumes"), ("", "serviceaccounts"),
    ("", "services"),
})


@dataclass(frozen=True, slots=True)
class Response:
    code: int
    description: str
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Operation:
    method: str
    action: str | None
    operation_id: str
    description: str
    tag: str
    params: tuple[Param, ...]
    produces: tuple[str, ...]
    consumes: tuple[str, ...]
    responses: tuple[Response, ...]
    body: str | None = None
    body_required: bool = True
    gvk: tuple[str, str, str] | None = None


@dataclass(frozen=True, slots=True)
class PathItem:
    path: str
    operations: tuple[Operation, ...]
    params: tuple[Param, ...]


def _identifier(text: str, *, capitalize: bool) -> str:
    """kube-openapi's ToValidOperationID: drop what is not a letter, `_` or a later digit,
    capitalizing the letter after each dropped character (and the first one if asked)."""
    out: list[str] = []
    upper = capitalize
    for i, ch in enumerate(text):
        if ch.isalpha() or ch == "_" or (i and ch.isdigit()):
            out.append(ch.upper() if upper else ch)
            upper = False
        else:
            upper = True
    return "".join(out)


def _group_id(group: str) -> str:
    return group.removesuffix(".k8s.io") if group else "core"


def _tag(group: str, version: str) -> str:
    group_tag = _identifier(_group_id(group), capitalize=False)
    return f"{group_tag}_{_identifier(version, capitalize=False)}"


def _op_id(verb: str, group: str, version: str, rest: str) -> str:
    gv = _identifier(_group_id(group), capitalize=True) + _identifier(version, capitalize=True)
    return f"{verb}{gv}{rest}"


def _article(kind: str) -> str:
    """kube's GetArticleForNoun with one-space padding."""
    if kind.endswith("s") and not kind.endswith("ss"):
        return " "
    return " an " if kind[:1].lower() in "aeiou" else " a "


def path_item(path: str, operations: list[Operation]) -> PathItem:
    """Hoist the parameters every operation has to the path (by name and location)."""
    keys = [{(q.name, q.location) for q in op.params} for op in operations]
    common = set.intersection(*keys) if keys else set()
    shared: dict[tuple[str, str], Param] = {}
    ops: list[Operation] = []
    for op in operations:
        own = []
        for q in op.params:
            if (q.name, q.location) in common:
                shared[(q.name, q.location)] = q
            else:
                own.append(q)
        ops.append(_replace_params(op, _sorted(own)))
    return PathItem(path, tuple(ops), _sorted(list(shared.values())))


def _sorted(params: list[Param]) -> tuple[Param, ...]:
    return tuple(sorted(params, key=lambda q: (q.name, q.location)))


def _replace_params(op: Operation, params: tuple[Param, ...]) -> Operation:
    return Operation(op.method, op.action, op.operation_id, op.description, op.tag, params,
                     op.produces, op.consumes, op.responses, op.body, op.body_required, op.gvk)


def _prefix(rt: ResourceType) -> str:
    return f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"


def group_root(group: str, version: str) -> PathItem:
    """`GET /apis/<g>/<v>/`: the group/version's APIResourceList."""
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    op = Operation("get", None, _op_id("get", group, version, "APIResources"),
                   "get available resources", _tag(group, version), (), _MEDIA, _MEDIA,
                   (Response(200, "OK", RESOURCE_LIST), Response(401, "Unauthorized")))
    return path_item(prefix + "/", [op])


class _Builder:
    """Operations of one resource; `crd` switches to the CRD builder's conventions."""

    def __init__(self, rt: ResourceType, kind_ref: str, list_ref: str, *, minor: int,
                 delete_params: tuple[Param, ...], crd: bool) -> None:
        self.rt = rt
        self.kind_ref = kind_ref
        self.list_ref = list_ref
        self.minor = minor
        self.delete_params = delete_params
        self.crd = crd
        self.tag = _tag(rt.group, rt.version)
        self.gvk = (rt.group, rt.version, rt.kind)
        self.pretty = p.PRETTY_CRD if crd else p.PRETTY
        self.media = _CRD_MEDIA if crd else _MEDIA

    def op(self, method: str, action: str, verb: str, rest: str, description: str,
           params: tuple[Param, ...], responses: tuple[Response, ...], *,
           path_params: tuple[Param, ...], body: str | None = None,
           body_required: bool = True, produces: tuple[str, ...] | None = None,
           consumes: tuple[str, ...] | None = None,
           gvk: tuple[str, str, str] | None = None) -> Operation:
        if consumes is None:
            consumes = _CRD_MEDIA if self.crd else _ANY
        return Operation(
            method, action, _op_id(verb, self.rt.group, self.rt.version, rest), description,
            self.tag, (*path_params, self.pretty, *params), produces or self.media, consumes,
            (*responses, Response(401, "Unauthorized")), body, body_required, gvk or self.gvk)

    def responses(self, ref: str, *codes: int) -> tuple[Response, ...]:
        names = {200: "OK", 201: "Created", 202: "Accepted"}
        return tuple(Response(c, names[c], ref) for c in codes)

    def writes(self, scoped: str, path_params: tuple[Param, ...], *, sub: str = "",
               ref: str | None = None, gvk: tuple[str, str, str] | None = None,
               verbs: frozenset[str] = frozenset({"get", "update", "patch"}),
               ) -> list[Operation]:
        """read, replace and patch (those of `verbs`) of the object or a subresource."""
        kind = self.rt.kind
        target = ref or self.kind_ref
        of = f"{sub} of the specified {kind}" if sub else f"the specified {kind}"
        rest = scoped + kind + sub.title()
        get_params = p.GET_CRD if self.crd else ()
        patch_params = p.CRD_PATCH if self.crd else p.PATCH
        ops = []
        if "get" in verbs:
            ops.append(self.op("get", "get", "read", rest, f"read {of}", get_params,
                               self.responses(target, 200), path_params=path_params, gvk=gvk))
        if "update" in verbs:
            ops.append(self.op("put", "put", "replace", rest, f"replace {of}", p.UPDATE,
                               self.responses(target, 200, 201), path_params=path_params,
                               body=target, gvk=gvk))
        if "patch" in verbs:
            patch_codes = (200,) if self.crd else (200, 201)
            ops.append(self.op("patch", "patch", "patch", rest, f"partially update {of}",
                               patch_params, self.responses(target, *patch_codes),
                               path_params=path_params, body=PATCH_BODY, gvk=gvk,
                               consumes=_CRD_PATCH_TYPES if self.crd else _PATCH_TYPES))
        return ops

    def routes(self) -> list[PathItem]:
        rt, kind, verbs = self.rt, self.rt.kind, set(self.rt.verbs)
        prefix = _prefix(rt)
        scoped = "Namespaced" if rt.namespaced else ""
        ns = (p.namespace_param(),) if rt.namespaced else ()
        named = (p.name_param(kind), *ns)
        lists = p.list_params(self.minor)
        listing = ("list or watch objects of kind " if "watch" in verbs and not self.crd
                   else "list objects of kind ") + kind
        stream = _STREAM if not self.crd else _CRD_MEDIA
        scope = f"/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"/{rt.plural}"
        items: list[PathItem] = []
        if rt.namespaced and "list" in verbs:
            items.append(path_item(f"{prefix}/{rt.plural}", [self.op(
                "get", "list", "list", f"{kind}ForAllNamespaces", listing, lists,
                self.responses(self.list_ref, 200), path_params=(), produces=stream)]))
        collection: list[Operation] = []
        if "deletecollection" in verbs:
            delete_list = lists if self.crd else p.list_params(self.minor, for_delete=True)
            extra = () if self.crd else self.delete_params
            collection.append(self.op(
                "delete", "deletecollection", "delete", f"Collection{scoped}{kind}",
                f"delete collection of {kind}", (*delete_list, *extra),
                self.responses(STATUS, 200), path_params=ns,
                body=None if self.crd else DELETE_OPTIONS, body_required=False))
        if "list" in verbs:
            collection.append(self.op("get", "list", "list", scoped + kind, listing, lists,
                                      self.responses(self.list_ref, 200), path_params=ns,
                                      produces=stream))
        if "create" in verbs:
            collection.append(self.op(
                "post", "post", "create", scoped + kind, f"create{_article(kind)}{kind}",
                p.CREATE, self.responses(self.kind_ref, 200, 201, 202), path_params=ns,
                body=self.kind_ref))
        if collection:
            items.append(path_item(prefix + scope, collection))
        item: list[Operation] = []
        item += self.writes(scoped, named, verbs=frozenset(verbs))
        if "delete" in verbs:
            returned = self.kind_ref if rt.gr in _DELETE_RETURNS_OBJECT and not self.crd \
                else STATUS
            item.append(self.op(
                "delete", "delete", "delete", scoped + kind, f"delete{_article(kind)}{kind}",
                self.delete_params, self.responses(returned, 200, 202), path_params=named,
                body=DELETE_OPTIONS, body_required=False))
        if item:
            items.append(path_item(f"{prefix}{scope}/{{name}}", item))
        if rt.has_status:
            items.append(path_item(f"{prefix}{scope}/{{name}}/status",
                                   self.writes(scoped, named, sub="status")))
        if rt.scale is not None:
            gvk = None if self.crd else _SCALE_GVK
            items.append(path_item(f"{prefix}{scope}/{{name}}/scale",
                                   self.writes(scoped, named, sub="scale", ref=SCALE, gvk=gvk)))
        if rt.gr == ("", "namespaces") and not self.crd:
            finalize = self.writes(scoped, named, sub="finalize", verbs=frozenset({"update"}))
            items.append(path_item(f"{prefix}{scope}/{{name}}/finalize", finalize))
        if "watch" in verbs and not self.crd:
            items += self.watches(prefix, scoped, ns, named)
        return items

    def watches(self, prefix: str, scoped: str, ns: tuple[Param, ...],
                named: tuple[Param, ...]) -> list[PathItem]:
        rt, kind = self.rt, self.rt.kind
        lists = p.list_params(self.minor)
        events = self.responses(WATCH_EVENT, 200)
        deprecated = "deprecated: use the 'watch' parameter with a list operation instead"
        watch_list = f"watch individual changes to a list of {kind}. {deprecated}."
        scope = f"/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"/{rt.plural}"
        out = []
        if rt.namespaced:
            out.append(path_item(f"{prefix}/watch/{rt.plural}", [self.op(
                "get", "watchlist", "watch", f"{kind}ListForAllNamespaces", watch_list,
                lists, events, path_params=(), produces=_STREAM)]))
        out.append(path_item(f"{prefix}/watch{scope}", [self.op(
            "get", "watchlist", "watch", f"{scoped}{kind}List", watch_list, lists, events,
            path_params=ns, produces=_STREAM)]))
        out.append(path_item(f"{prefix}/watch{scope}/{{name}}", [self.op(
            "get", "watch", "watch", scoped + kind,
            f"watch changes to an object of kind {kind}. {deprecated}, filtered to a single "
            "item with the 'fieldSelector' parameter.", lists, events, path_params=named,
            produces=_STREAM)]))
        return out


def builtin_routes(rt: ResourceType, kind_ref: str, list_ref: str, *, minor: int,
                   defs: Definitions) -> list[PathItem]:
    """The path items kube-apiserver documents for a built-in resource."""
    return _Builder(rt, kind_ref, list_ref, minor=minor, delete_params=p.delete_params(defs),
                    crd=False).routes()


def crd_routes(rt: ResourceType, kind_ref: str, list_ref: str, *, minor: int,
               defs: Definitions) -> list[PathItem]:
    """The path items kube's CRD OpenAPI builder documents for one served CRD version."""
    return _Builder(rt, kind_ref, list_ref, minor=minor, delete_params=p.delete_params(defs),
                    crd=True).routes()
