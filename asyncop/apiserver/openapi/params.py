"""The query and path parameters kube-apiserver documents on its operations, with kube's text.

kube derives them from the option structs' field docs (kube: addObjectParams in the
apiserver's endpoints installer, over metav1 ListOptions, CreateOptions, UpdateOptions,
PatchOptions and DeleteOptions): every one is a simple `string`, `integer` or `boolean` with
`uniqueItems: true`. The DeleteOptions ones are read from kubespec's own DeleteOptions
definition of the served minor (so `ignoreStoreReadErrorWithClusterBreakingPotential` appears
from 1.32 on, as in kube); the others are the 1.33 texts, the same for every minor except
`sendInitialEvents` (kube 1.27+).

Invariants: a `Param` is immutable; `(name, location)` identifies it within an operation.
"""

from __future__ import annotations

from dataclasses import dataclass

from asyncop.kubespec import Definitions

__all__ = [
    "CRD_PATCH",
    "CREATE",
    "GET_CRD",
    "PATCH",
    "PRETTY",
    "PRETTY_CRD",
    "UPDATE",
    "Param",
    "delete_params",
    "list_params",
    "name_param",
    "namespace_param",
]

DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"


@dataclass(frozen=True, slots=True)
class Param:
    """One non-body parameter: `location` is `query` or `path`; `kind` its JSON type."""

    name: str
    description: str
    kind: str = "string"
    location: str = "query"
    required: bool = False


_RV_DOC = (
    "See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for "
    "details.\n\nDefaults to unset"
)
_DRY_RUN = Param("dryRun", (
    "When present, indicates that modifications should not be persisted. An invalid or "
    "unrecognized dryRun directive will result in an error response and no further processing "
    "of the request. Valid values are: - All: all dry run stages will be processed"))
_FIELD_MANAGER_TEXT = (
    "fieldManager is a name associated with the actor or entity that is making these changes. "
    "The value must be less than or 128 characters long, and only contain printable characters, "
    "as defined by https://golang.org/pkg/unicode/#IsPrint.")
_FIELD_MANAGER = Param("fieldManager", _FIELD_MANAGER_TEXT)
_FIELD_MANAGER_PATCH = Param("fieldManager", _FIELD_MANAGER_TEXT + (
    " This field is required for apply requests (application/apply-patch) but optional for "
    "non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch)."))
_FIELD_VALIDATION = Param("fieldValidation", (
    "fieldValidation instructs the server on how to handle objects in the request "
    "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This "
    "will ignore any unknown fields that are silently dropped from the object, and will ignore "
    "all but the last duplicate field that the decoder encounters. This is the default behavior "
    "prior to v1.23. - Warn: This will send a warning via the standard warning response header "
    "for each unknown field that is dropped from the object, and for each duplicate field that "
    "is encountered. The request will still succeed if there are no other errors, and will only "
    "persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This "
    "will fail the request with a BadRequest error if any unknown fields would be dropped from "
    "the object, or if any duplicate fields are present. The error returned from the server "
    "will contain all unknown and duplicate fields encountered."))
_FORCE = Param("force", (
    "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting "
    "fields owned by other people. Force flag must be unset for non-apply patch requests."),
    kind="boolean")

PRETTY = Param("pretty", (
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent "
    "indicates a browser or command-line HTTP tool (curl and wget)."))
PRETTY_CRD = Param("pretty", "If 'true', then the output is pretty printed.")
"""The shorter text kube's CRD OpenAPI builder uses."""

CREATE: tuple[Param, ...] = (_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION)
UPDATE: tuple[Param, ...] = CREATE
PATCH: tuple[Param, ...] = (_DRY_RUN, _FIELD_MANAGER_PATCH, _FIELD_VALIDATION, _FORCE)
CRD_PATCH: tuple[Param, ...] = UPDATE
"""kube's CRD builder documents PATCH with UpdateOptions (no `force`)."""
GET_CRD: tuple[Param, ...] = (Param("resourceVersion", (
    "resourceVersion sets a constraint on what resource versions a request may be served "
    "from. " + _RV_DOC)),)

_LIST: tuple[Param, ...] = (
    Param("allowWatchBookmarks", (
        "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not "
        "implement bookmarks may ignore this flag and bookmarks are sent at the server's "
        "discretion. Clients should not assume bookmarks are returned at any specific "
        "interval, nor may they assume the server will send any BOOKMARK event during a "
        "session. If this is not a watch, this field is ignored."), kind="boolean"),
    Param("continue", (
        "The continue option should be set when retrieving more results from the server. "
        "Since this value is server defined, clients may only use the continue value from a "
        "previous query result with identical query parameters (except for the value of "
        "continue) and the server may reject a continue value it does not recognize. If the "
        "specified continue value is no longer valid whether due to expiration (generally "
        "five to fifteen minutes) or a configuration change on the server, the server will "
        "respond with a 410 ResourceExpired error together with a continue token. If the "
        "client needs a consistent list, it must restart their list without the continue "
        "field. Otherwise, the client may send another list request with the token received "
        "with the 410 error, the server will respond with a list starting from the next key, "
        "but from the latest snapshot, which is inconsistent from the previous list results "
        "- objects that are created, modified, or deleted after the first list request will "
        "be included in the response, as long as their keys are after the \"next key\".\n\n"
        "This field is not supported when watch is true. Clients may start a watch from the "
        "last resourceVersion value returned by the server and not miss any modifications.")),
    Param("fieldSelector", (
        "A selector to restrict the list of returned objects by their fields. Defaults to "
        "everything.")),
    Param("labelSelector", (
        "A selector to restrict the list of returned objects by their labels. Defaults to "
        "everything.")),
    Param("limit", (
        "limit is a maximum number of responses to return for a list call. If more items "
        "exist, the server will set the `continue` field on the list metadata to a value that "
        "can be used with the same initial query to retrieve the next set of results. Setting "
        "a limit may return fewer than the requested amount of items (up to zero items) in the "
        "event all requested objects are filtered out and clients should only use the "
        "presence of the continue field to determine whether more results are available. "
        "Servers may choose not to support the limit argument and will return all of the "
        "available results. If limit is specified and the continue field is empty, clients "
        "may assume that no more results are available. This field is not supported if watch "
        "is true.\n\nThe server guarantees that the objects returned when using continue will "
        "be identical to issuing a single list call without a limit - that is, no objects "
        "created, modified, or deleted after the first request is issued will be included in "
        "any subsequent continued requests. This is sometimes referred to as a consistent "
        "snapshot, and ensures that a client that is using limit to receive smaller chunks of "
        "a very large result can ensure they see all possible objects. If objects are updated "
        "during a chunked list the version of the object that was present at the time the "
        "first list result was calculated is returned."), kind="integer"),
    Param("resourceVersion", (
        "resourceVersion sets a constraint on what resource versions a request may be served "
        "from. " + _RV_DOC)),
    Param("resourceVersionMatch", (
        "resourceVersionMatch determines how resourceVersion is applied to list calls. It is "
        "highly recommended that resourceVersionMatch be set for list calls where "
        "resourceVersion is set " + _RV_DOC)),
    Param("sendInitialEvents", (
        "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the "
        "watch stream will begin with synthetic events to produce the current state of objects "
        "in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event"
        "  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the "
        "set of objects, and be marked with `\"k8s.io/initial-events-end\": \"true\"` "
        "annotation. Afterwards, the watch stream will proceed as usual, sending watch events "
        "corresponding to changes (subsequent to the RV) to objects watched.\n\nWhen "
        "`sendInitialEvents` option is set, we require `resourceVersionMatch` option to also be "
        "set. The semantic of the watch request is as following: - `resourceVersionMatch` = "
        "NotOlderThan\n  is interpreted as \"data at least as new as the provided "
        "`resourceVersion`\"\n  and the bookmark event is send when the state is synced\n  to "
        "a `resourceVersion` at least as fresh as the one provided by the ListOptions.\n  If "
        "`resourceVersion` is unset, this is interpreted as \"consistent read\" and the\n  "
        "bookmark event is send when the state is synced at least to the moment\n  when "
        "request started being processed.\n- `resourceVersionMatch` set to any other value or "
        "unset\n  Invalid error is returned.\n\nDefaults to true if `resourceVersion=\"\"` or "
        "`resourceVersion=\"0\"` (for backward compatibility reasons) and to false "
        "otherwise."), kind="boolean"),
    Param("timeoutSeconds", (
        "Timeout for the list/watch call. This limits the duration of the call, regardless of "
        "any activity or inactivity."), kind="integer"),
    Param("watch", (
        "Watch for changes to the described resources and return them as a stream of add, "
        "update, and remove notifications. Specify resourceVersion."), kind="boolean"),
)
_WATCH_ONLY = frozenset({"watch", "allowWatchBookmarks"})


def list_params(minor: int, *, for_delete: bool = False) -> tuple[Param, ...]:
    """metav1.ListOptions as query parameters (without the watch ones for deletecollection,
    as kube's installer leaves them out there)."""
    return tuple(p for p in _LIST
                 if not (for_delete and p.name in _WATCH_ONLY)
                 and not (p.name == "sendInitialEvents" and minor < 27))


_JSON_TYPES = ("string", "integer", "boolean", "number")


def delete_params(defs: Definitions) -> tuple[Param, ...]:
    """metav1.DeleteOptions' fields as query parameters, from kube's own definition (arrays
    become strings, as kube's installer documents them)."""
    props = defs[DELETE_OPTIONS].get("properties") or {}
    out: list[Param] = []
    for name, prop in props.items():
        if name in ("apiVersion", "kind", "preconditions") or not isinstance(prop, dict):
            continue
        kind = prop.get("type")
        out.append(Param(name, str(prop.get("description") or ""),
                         kind=kind if kind in _JSON_TYPES else "string"))
    return tuple(out)


def name_param(kind: str) -> Param:
    return Param("name", f"name of the {kind}", location="path", required=True)


def namespace_param() -> Param:
    return Param("namespace", "object name and auth scope, such as for teams and projects",
                 location="path", required=True)
