"""Access and identity reviews: create-only resources answered, never stored.

The embedded server is anonymous and allows everything (RBAC objects are stored, not
enforced), so `kubectl auth can-i` (SelfSubjectAccessReview), `kubectl auth whoami`
(SelfSubjectReview) and controllers' SubjectAccessReviews get "allowed". Invariant: the
answer echoes the request's spec and never touches the store.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.core.resources import ResourceType

AUTHZ = "authorization.k8s.io"
AUTHN = "authentication.k8s.io"
_CREATE = ("create",)

TYPES: tuple[ResourceType, ...] = (
    ResourceType(AUTHZ, "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHZ, "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHZ, "v1", "subjectaccessreviews", "SubjectAccessReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHZ, "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview",
                 namespaced=True, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHN, "v1", "selfsubjectreviews", "SelfSubjectReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHN, "v1", "tokenreviews", "TokenReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
)
GRS = frozenset(rt.gr for rt in TYPES)

_ANONYMOUS = {"username": "system:anonymous",
              "groups": ["system:unauthenticated", "system:masters"]}
_ALL_RULES = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
              "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
              "incomplete": False}


def is_review(rt: ResourceType) -> bool:
    return rt.gr in GRS


def answer(rt: ResourceType, body: dict[str, Any], namespace: str | None) -> dict[str, Any]:
    """The review with its status filled in (everything is allowed)."""
    meta = dict(body.get("metadata") or {})
    if namespace:
        meta["namespace"] = namespace
    out: dict[str, Any] = {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta,
                           "spec": body.get("spec") or {}}
    if rt.plural == "selfsubjectrulesreviews":
        out["status"] = dict(_ALL_RULES)
    elif rt.plural == "selfsubjectreviews":
        out["status"] = {"userInfo": dict(_ANONYMOUS)}
    elif rt.plural == "tokenreviews":
        out["status"] = {"authenticated": True, "user": dict(_ANONYMOUS)}
    else:
        out["status"] = {"allowed": True, "reason": "the embedded API server allows everything"}
    return out
